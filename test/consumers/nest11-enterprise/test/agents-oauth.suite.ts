import { ConfigModule } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { exportJWK, generateKeyPair, JWK, KeyLike, SignJWT } from 'jose';
import { McpModule } from 'nestjs-model-context';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import configuration from '../src/config/configuration';
import { Customer } from '../src/customers/customer.entity';
import { CustomersModule } from '../src/customers/customers.module';
import { SeedService } from '../src/database/seed.service';
import { Order } from '../src/orders/order.entity';
import { connectSdk, Platform, RunningApp, startApp } from './helpers';

type Json = Record<string, any>;

/** The endpoint's canonical URI: the audience the company's authorization server stamps (RFC 8707). */
const RESOURCE = 'https://crm.example.com/api/mcp';

/**
 * The company's authorization server as the resource server sees it: its RFC 8414 metadata and
 * its JWKS on a loopback port, with a key pair of its own that signs the access tokens.
 */
async function startIssuer(): Promise<{ issuer: string; jwksFetches: () => number; sign(claims: Json): Promise<string>; close(): Promise<void> }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'crm-idp-1', alg: 'ES256', use: 'sig' };
  let fetches = 0;
  let issuer = '';
  const server: Server = createServer((req, res) => {
    const send = (body: Json) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/.well-known/oauth-authorization-server') return send({ issuer, jwks_uri: `${issuer}/jwks` });
    if (req.url === '/jwks') {
      fetches += 1;
      return send({ keys: [jwk] });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const key: KeyLike = privateKey;
  return {
    issuer,
    jwksFetches: () => fetches,
    sign: (claims) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'at+jwt' }).setIssuer(issuer).setIssuedAt().setExpirationTime('5m').sign(key),
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/**
 * The CRM's customers feature served to agents whose tokens come from the company's authorization
 * server: McpModule verifies them itself (auth.jwt, with jose 5, which Jest's CommonJS loader can
 * load) against the JWKS the issuer's metadata names. No app guard takes part.
 */
export function describeAgentsOAuth(platform: Platform): void {
  describe(`the customers tools for agents, verified by auth.jwt on ${platform}`, () => {
    let idp: Awaited<ReturnType<typeof startIssuer>>;
    let running: RunningApp;

    beforeAll(async () => {
      idp = await startIssuer();
      running = await startApp(platform, {
        imports: [
          ConfigModule.forRoot({ isGlobal: true, load: [configuration] }),
          TypeOrmModule.forRoot({ type: 'sqljs', entities: [Customer, Order], synchronize: true }),
          CustomersModule,
          McpModule.forRoot({
            name: 'crm-agents',
            version: '1.0.0',
            auth: { resource: RESOURCE, authorizationServers: [idp.issuer], scopesSupported: ['customers:read', 'customers:write'], jwt: { typ: 'at+jwt' } },
          }),
        ],
        providers: [SeedService],
      });
    });

    afterAll(async () => {
      await running?.app.close();
      await idp?.close();
    });

    it('calls a tool with a token of the issuer for this resource, checked against the JWKS it serves', async () => {
      const token = await idp.sign({ sub: 'agent-7', aud: RESOURCE, scope: 'customers:read' });
      const connection = await connectSdk(running.base, token);
      try {
        const result = (await connection.client.callTool({ name: 'get_customer', arguments: { id: 1 } })) as Json;
        expect(result.isError).toBeUndefined();
        expect(result.structuredContent).toMatchObject({ id: 1, name: 'Ada Lovelace' });
        const tools = (await connection.client.listTools()).tools.map((t) => t.name);
        expect(tools).toContain('get_customer');
        expect(tools).not.toContain('create_customer');
      } finally {
        await connection.close();
      }
      expect(idp.jwksFetches()).toBeGreaterThan(0);
    });

    it('refuses a token the same issuer made for another audience, naming the rule', async () => {
      const token = await idp.sign({ sub: 'agent-7', aud: 'https://billing.example.com/api/mcp', scope: 'customers:read' });
      const res = await request(running.app.getHttpServer())
        .post('/api/mcp')
        .set('Authorization', `Bearer ${token}`)
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_customer', arguments: { id: 1 } } })
        .expect(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
      expect(res.headers['www-authenticate']).toMatch(/audience \(aud\) is not this resource/);
      expect(JSON.stringify(res.body)).not.toContain(token);
      // The official client gets the same refusal.
      await expect(connectSdk(running.base, token)).rejects.toThrow(/audience \(aud\) is not this resource/);
    });
  });
}
