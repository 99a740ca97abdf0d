import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { DpopKey, clientCredentialsToken, dpopFetch } from './agent.js';
import { AppModule, SCOPES } from './app.module.js';
import { startAuthorizationServer } from './authorization-server.js';

const host = '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const resource = `http://${host}:${port}/mcp`;
const agent = { clientId: 'notes-agent', clientSecret: 'notes-agent-secret', scope: SCOPES.join(' ') };

// A real authorization server on loopback (oidc-provider): client credentials, resource
// indicators, JWT access tokens, DPoP.
const authorizationServer = await startAuthorizationServer({
  port: Number(process.env.AS_PORT ?? 4000),
  agents: [agent],
  scopes: SCOPES,
});
const app = await NestFactory.create(AppModule.forIssuer(authorizationServer.issuer, resource));
app.enableShutdownHooks();
await app.listen(port, host);
console.log(`MCP endpoint: ${resource} (tokens from ${authorizationServer.issuer})`);

// An agent: a DPoP key, a token bound to it for this resource, and the official client sending
// a fresh proof with every request.
const key = await DpopKey.generate();
const token = await clientCredentialsToken(authorizationServer.tokenEndpoint, agent, {
  resource,
  scope: agent.scope,
  dpop: key,
});
const client = new Client({ name: 'notes-agent', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(resource), { fetch: dpopFetch(key, token) }));
console.log('whoami:', JSON.stringify(await client.callTool({ name: 'whoami', arguments: {} })));
await client.close();
console.log(
  `Bearer tokens: curl -s -u ${agent.clientId}:${agent.clientSecret} -d grant_type=client_credentials -d resource=${resource} -d "scope=${agent.scope}" ${authorizationServer.tokenEndpoint}`,
);
app
  .getHttpServer()
  .once('close', () =>
    authorizationServer
      .close()
      .catch((error: unknown) => console.error('The authorization server did not close:', error)),
  );
