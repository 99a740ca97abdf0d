import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Test } from '@nestjs/testing';
import {
  type McpClient,
  McpClientError,
  McpClientModule,
  McpClients,
  type McpClientOptions,
} from 'nestjs-model-context/client';
import { ClientUpstreamModule, upstreamSeen } from '../fixtures/client-upstream.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { APP_AUDIENCE, UPSTREAM_AUDIENCE, claimsOf, startAuthServer, type TestAuthServer } from '../utils/oidc.js';

type Whoami = { whoami: { args: Record<string, never>; result: { authorization: string | null } } };

describe('McpClientModule credentials, against a real authorization server (oidc-provider)', () => {
  let auth: TestAuthServer;
  let upstream: RunningApp;
  let alice: string;
  let bob: string;
  let clients: McpClients;
  let close: () => Promise<void>;

  before(async () => {
    auth = await startAuthServer();
    upstream = await startApp(ClientUpstreamModule.register());
    alice = await auth.tokenFor('alice');
    bob = await auth.tokenFor('bob');
    const oauth = {
      tokenEndpoint: auth.tokenEndpoint,
      clientId: 'gateway',
      clientSecret: 'gateway-secret',
      resource: UPSTREAM_AUDIENCE,
    };
    const http = { type: 'http' as const, url: upstream.url };
    const options: McpClientOptions[] = [
      { name: 'plain', transport: http },
      { name: 'static', transport: http, headers: { authorization: 'Bearer static-key' } },
      { name: 'service', transport: http, auth: { type: 'client-credentials', ...oauth, scope: 'mcp' } },
      { name: 'same-audience', transport: http, auth: { type: 'pass-through', audience: APP_AUDIENCE } },
      { name: 'other-audience', transport: http, auth: { type: 'pass-through', audience: UPSTREAM_AUDIENCE } },
      { name: 'obo', transport: http, auth: { type: 'token-exchange', ...oauth } },
      {
        name: 'obo-bad-secret',
        transport: http,
        auth: { type: 'token-exchange', ...oauth, clientSecret: 'wrong' },
        retry: false,
      },
    ];
    const moduleRef = await Test.createTestingModule({
      imports: [McpClientModule.forRoot({ clients: options })],
    }).compile();
    await moduleRef.init();
    clients = moduleRef.get(McpClients);
    close = () => moduleRef.close();
  });
  after(async () => {
    await close();
    await upstream.close();
    await auth.close();
  });
  beforeEach(() => {
    upstreamSeen.authorizations.length = 0;
  });

  const client = (name: string) => clients.get<McpClient<Whoami>>(name);
  const seen = async (name: string, caller?: { id: string; token: string }) =>
    (await client(name).callTool('whoami', {}, { caller })).structuredContent?.authorization ?? null;

  it('sends nothing by default, even when the call names a caller', async () => {
    assert.equal(await seen('plain', { id: 'alice', token: alice }), null);
  });

  it('sends static headers', async () => {
    assert.equal(await seen('static'), 'Bearer static-key');
  });

  it("client credentials: the app's own token for the upstream, fetched once and reused", async () => {
    const first = claimsOf(await seen('service'));
    assert.equal(first.sub, 'gateway');
    assert.equal(first.aud, UPSTREAM_AUDIENCE);
    await seen('service');
    await seen('service');
    assert.equal(auth.clientGrants.get('gateway'), 1);
  });

  it("pass-through forwards the caller's own token only to its own audience", async () => {
    assert.equal(await seen('same-audience', { id: 'alice', token: alice }), `Bearer ${alice}`);
    upstreamSeen.authorizations.length = 0;
    await assert.rejects(
      client('other-audience').callTool('whoami', {}, { caller: { id: 'alice', token: alice } }),
      (error: unknown) =>
        error instanceof McpClientError &&
        error.kind === 'credentials' &&
        error.message.includes(`only to its own audience "${UPSTREAM_AUDIENCE}"`) &&
        error.message.includes('token-exchange'),
    );
    assert.deepEqual(upstreamSeen.authorizations, [], 'the upstream never saw the call');
  });

  it('token exchange: on behalf of each caller, cached per caller within its lifetime', async () => {
    const forAlice = claimsOf(await seen('obo', { id: 'alice', token: alice }));
    assert.equal(forAlice.on_behalf_of, 'alice');
    assert.equal(forAlice.aud, UPSTREAM_AUDIENCE);
    assert.deepEqual(forAlice.act, { sub: 'gateway' });
    const forBob = claimsOf(await seen('obo', { id: 'bob', token: bob }));
    assert.equal(forBob.on_behalf_of, 'bob');
    await seen('obo', { id: 'alice', token: alice });
    await seen('obo', { id: 'bob', token: bob });
    assert.equal(auth.exchanges.get('alice'), 1);
    assert.equal(auth.exchanges.get('bob'), 1);
  });

  it("the caller's token itself never reaches the upstream on exchange", async () => {
    const got = await seen('obo', { id: 'alice', token: alice });
    assert.notEqual(got, `Bearer ${alice}`);
  });

  it('a call without a caller is refused before anything is sent', async () => {
    await assert.rejects(
      client('obo').callTool('whoami', {}),
      (error: unknown) =>
        error instanceof McpClientError && error.kind === 'credentials' && /gave no caller/.test(error.message),
    );
    assert.deepEqual(upstreamSeen.authorizations, []);
  });

  it("an exchange the authorization server refuses is a credentials error naming the upstream and the server's reason", async () => {
    await assert.rejects(
      client('obo-bad-secret').callTool('whoami', {}, { caller: { id: 'alice', token: alice } }),
      (error: unknown) =>
        error instanceof McpClientError &&
        error.kind === 'credentials' &&
        error.message.includes('"obo-bad-secret"') &&
        /invalid_client/.test(error.message) &&
        !error.message.includes(alice),
    );
    const wrongAudience = await auth.tokenFor('mallory', UPSTREAM_AUDIENCE);
    await assert.rejects(
      client('obo').callTool('whoami', {}, { caller: { id: 'mallory', token: wrongAudience } }),
      (error: unknown) =>
        error instanceof McpClientError &&
        error.kind === 'credentials' &&
        /invalid_grant/.test(error.message) &&
        !error.message.includes(wrongAudience),
    );
  });
});
