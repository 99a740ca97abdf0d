import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { exportJWK, exportSPKI, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { TASKS_EXTENSION } from 'nestjs-model-context/tasks';
import type { McpAuthOptions } from 'nestjs-model-context/options';
import { McpTestClient, McpTestError } from 'nestjs-model-context/testing';
import {
  startAuthorizationServer,
  type AgentClient,
  type AuthorizationServer,
} from '../../sample/12-oauth/authorization-server.js';
import { clientCredentialsToken, DpopKey, dpopFetch } from '../../sample/12-oauth/agent.js';
import { AppModule as SampleModule } from '../../sample/12-oauth/app.module.js';
import { OAuthAppModule } from '../fixtures/oauth.module.js';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';
import { connectModernClient, connectSdkClient, META_KEYS, modernRpc, rpc, type RpcResult } from '../utils/clients.js';
import { startScriptedServer } from '../utils/http.js';
import { LegacyCaller } from '../utils/legacy-session.js';
import { openSseSession, openStream, post } from '../utils/legacy-sse.js';
import { clearRedisPrefix, REDIS_URL } from '../utils/redis.js';
import { freePort, RedisChild } from '../utils/redis-server.js';

type Json = Record<string, any>;

/**
 * Issue 31: McpModule's built-in resource-server verification (JWT/JWKS, RFC 7662 introspection,
 * DPoP) against a real authorization server (oidc-provider, in process, on loopback), from the
 * attacker's side: every forged, misdirected, stale or replayed credential is refused with 401 and
 * a challenge naming the failed rule (never echoing the token), an authorization server that cannot
 * answer gives 503 (never fail-open), and what one agent holds stays its own.
 */
const SCOPES = ['notes:read', 'notes:write'];
const ALICE: AgentClient = { clientId: 'agent-alice', clientSecret: 'alice-secret', scope: 'notes:read notes:write' };
const BOB: AgentClient = { clientId: 'agent-bob', clientSecret: 'bob-secret', scope: 'notes:read' };
const RESOURCE_SERVER = { clientId: 'mcp-notes', clientSecret: 'mcp-notes-secret' };
const OTHER_OPAQUE = 'https://other.example.com/opaque-mcp';
const WHOAMI = { name: 'whoami', arguments: {} };

const textOf = (result: Json): string => (result.content as Array<{ text: string }>)[0].text;
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = (): number => Math.floor(Date.now() / 1000);

/** The refusal of a request: 401, the challenge of `scheme` with `error` and a description naming `rule`, and nothing of the token. */
function assertRefused(
  res: RpcResult,
  token: string,
  expected: { scheme?: 'Bearer' | 'DPoP'; error: string; rule: RegExp },
): void {
  const challenge = res.headers.get('www-authenticate') ?? '';
  const what = `${res.status} ${challenge} ${res.text}`;
  assert.equal(res.status, 401, what);
  assert.ok(challenge.includes(`${expected.scheme ?? 'Bearer'} error="${expected.error}"`), what);
  const description =
    new RegExp(`${expected.scheme ?? 'Bearer'} error="${expected.error}"[^]*?error_description="([^"]*)"`).exec(
      challenge,
    )?.[1] ?? '';
  assert.match(description, expected.rule, what);
  assert.match((res.json as Json).error.message, expected.rule, what);
  for (const part of token.split('.').filter((p) => p.length >= 8)) {
    assert.ok(!res.text.includes(part) && !challenge.includes(part), `the refusal echoes the token: ${what}`);
  }
}

describe('built-in OAuth verification against oidc-provider (issue 31)', () => {
  let as: AuthorizationServer;
  let otherAs: AuthorizationServer;
  let jwtApp: RunningApp;
  let resource: string;
  let opaqueApp: RunningApp;
  let opaqueResource: string;
  let downApp: RunningApp;

  const jwtAuth = (res: string, extra: Partial<McpAuthOptions> = {}): McpAuthOptions => ({
    resource: res,
    authorizationServers: [as.issuer],
    scopesSupported: SCOPES,
    jwt: {},
    dpop: {},
    ...extra,
  });

  before(async () => {
    const [jwtPort, opaquePort, closedPort, downPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    resource = `http://127.0.0.1:${jwtPort}/mcp`;
    opaqueResource = `http://127.0.0.1:${opaquePort}/mcp`;
    as = await startAuthorizationServer({
      agents: [ALICE, BOB],
      scopes: SCOPES,
      opaqueResources: [opaqueResource, OTHER_OPAQUE],
      resourceServer: RESOURCE_SERVER,
    });
    otherAs = await startAuthorizationServer({ agents: [ALICE], scopes: SCOPES });
    jwtApp = await startApp(OAuthAppModule.register(jwtAuth(resource), { tasks: {}, legacySse: true }), {
      port: jwtPort,
    });
    opaqueApp = await startApp(
      OAuthAppModule.register({
        resource: opaqueResource,
        authorizationServers: [as.issuer],
        scopesSupported: SCOPES,
        introspection: { clientId: RESOURCE_SERVER.clientId, clientSecret: RESOURCE_SERVER.clientSecret },
      }),
      { port: opaquePort },
    );
    // Nothing listens on closedPort: the JWKS and the introspection endpoint are down.
    const down = `http://127.0.0.1:${closedPort}`;
    downApp = await startApp(
      OAuthAppModule.register({
        resource: `http://127.0.0.1:${downPort}/mcp`,
        authorizationServers: [as.issuer],
        jwt: { jwksUri: `${down}/jwks`, fetchTimeoutMs: 2_000 },
        introspection: { endpoint: `${down}/introspect`, timeoutMs: 2_000 },
      }),
      { port: downPort },
    );
  });
  after(async () => {
    await Promise.all([jwtApp?.close(), opaqueApp?.close(), downApp?.close()]);
    await Promise.all([as?.close(), otherAs?.close()]);
  });

  const tokenFor = (
    agent: AgentClient,
    options: { resource?: string; scope?: string; dpop?: DpopKey } = {},
  ): Promise<string> =>
    clientCredentialsToken(as.tokenEndpoint, agent, {
      resource: options.resource ?? resource,
      scope: options.scope ?? agent.scope,
      dpop: options.dpop,
    });

  /** A token signed with the authorization server's own key: what only a compromised or buggy issuer could mint. */
  async function issuerSigned(claims: Json, header: Json = {}): Promise<string> {
    const key = await importJWK(as.signingKey, 'ES256');
    return new SignJWT({
      iss: as.issuer,
      aud: resource,
      client_id: ALICE.clientId,
      sub: ALICE.clientId,
      scope: ALICE.scope,
      iat: now(),
      exp: now() + 300,
      ...claims,
    })
      .setProtectedHeader({ alg: 'ES256', kid: as.signingKey.kid, typ: 'at+jwt', ...header })
      .sign(key);
  }

  const callWith = (url: string, headers: Record<string, string>): Promise<RpcResult> =>
    modernRpc(url, 'tools/call', WHOAMI, { headers });
  const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });
  async function dpopHeaders(
    key: DpopKey,
    token: string,
    options: { url?: string; htm?: string; htu?: string; iat?: number; jti?: string; nonce?: string } = {},
  ): Promise<Record<string, string>> {
    const url = options.url ?? jwtApp.url;
    return {
      Authorization: `DPoP ${token}`,
      DPoP: await key.proof(options.htm ?? 'POST', options.htu ?? url, {
        accessToken: token,
        iat: options.iat,
        jti: options.jti,
        nonce: options.nonce,
      }),
    };
  }

  describe('the official clients call tools through the built-in verification', () => {
    for (const platform of ['express', 'fastify'] as TestPlatform[]) {
      it(`v2 client (2026-07-28) with a DPoP-bound token, and v1 SDK (2025-11-25) with a bearer token and with DPoP (${platform})`, async () => {
        const port = await freePort();
        const url = `http://127.0.0.1:${port}/mcp`;
        // On Fastify, the sample's own module (sample/12-oauth), so the sample cannot rot.
        const app =
          platform === 'express' ? jwtApp : await startApp(SampleModule.forIssuer(as.issuer, url), { port, platform });
        const appUrl = platform === 'express' ? jwtApp.url : url;
        const audience = platform === 'express' ? resource : url;
        try {
          const key = await DpopKey.generate();
          const bound = await tokenFor(ALICE, { dpop: key, resource: audience });
          const modern = await connectModernClient(appUrl, { fetch: dpopFetch(key, bound) });
          assert.deepEqual(JSON.parse(textOf(await modern.client.callTool(WHOAMI))), {
            principal: ALICE.clientId,
            scopes: SCOPES,
          });
          assert.equal(
            textOf(await modern.client.callTool({ name: 'write_note', arguments: {} })),
            `note written by ${ALICE.clientId}`,
          );
          await modern.close();

          const plain = await tokenFor(BOB, { resource: audience });
          const legacy = await connectSdkClient(appUrl, { headers: bearer(plain) });
          assert.equal(legacy.protocolVersion, '2025-11-25');
          assert.deepEqual(JSON.parse(textOf(await legacy.client.callTool(WHOAMI))), {
            principal: BOB.clientId,
            scopes: ['notes:read'],
          });
          // Bob's token lacks notes:write: the 403 challenge names it.
          await assert.rejects(legacy.client.callTool({ name: 'write_note', arguments: {} }), /notes:write/);
          await legacy.close();

          if (platform === 'fastify') {
            // The sample asks for server nonces: the challenge and every answer carry one.
            const first = await callWith(appUrl, await dpopHeaders(key, bound, { url: appUrl }));
            assertRefused(first, bound, { scheme: 'DPoP', error: 'use_dpop_nonce', rule: /nonce/ });
            const answered = await callWith(
              appUrl,
              await dpopHeaders(key, bound, { url: appUrl, nonce: first.headers.get('dpop-nonce')! }),
            );
            assert.equal(answered.status, 200, answered.text);
            assert.match(answered.headers.get('dpop-nonce') ?? '', /^[0-9a-z]+\.[\w-]{22}$/);
          }
          const legacyDpop = await connectSdkClient(appUrl, { fetch: dpopFetch(key, bound) });
          assert.deepEqual(JSON.parse(textOf(await legacyDpop.client.callTool(WHOAMI))), {
            principal: ALICE.clientId,
            scopes: SCOPES,
          });
          await legacyDpop.close();
        } finally {
          if (app !== jwtApp) await app.close();
        }
      });
    }

    it('v1 SDK with an opaque token checked by introspection, answered from the cache while it lives', async () => {
      const token = await tokenFor(ALICE, { resource: opaqueResource });
      assert.ok(!token.includes('.'), 'the authorization server issued an opaque token');
      const before = as.served.get('/token/introspection') ?? 0;
      const client = await connectSdkClient(opaqueApp.url, { headers: bearer(token) });
      // The introspection answer of a client-credentials token has no sub: the id is the client's form.
      for (let i = 0; i < 3; i++)
        assert.deepEqual(JSON.parse(textOf(await client.client.callTool(WHOAMI))), {
          principal: `client:${ALICE.clientId}`,
          scopes: SCOPES,
        });
      await client.close();
      assert.equal(
        (as.served.get('/token/introspection') ?? 0) - before,
        1,
        'one introspection for a connection and three calls',
      );
    });

    it('serves the RFC 9728 document with the authorization servers, scopes and DPoP support', async () => {
      const res = await fetch(`${jwtApp.base}/.well-known/oauth-protected-resource/mcp`);
      assert.deepEqual(await res.json(), {
        resource,
        authorization_servers: [as.issuer],
        bearer_methods_supported: ['header'],
        scopes_supported: SCOPES,
        dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'EdDSA'],
        dpop_bound_access_tokens_required: false,
      });
      const missing = await callWith(jwtApp.url, {});
      assert.equal(missing.status, 401);
      assert.equal(
        missing.headers.get('www-authenticate'),
        `Bearer scope="notes:read notes:write", resource_metadata="${jwtApp.base}/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256 ES384 ES512 PS256 PS384 PS512 RS256 EdDSA"`,
      );
    });
  });

  describe('forged and misdirected JWTs', () => {
    it('refuses a token the authorization server issued for another resource (RFC 8707 audience)', async () => {
      const token = await tokenFor(ALICE, { resource: 'https://other.example.com/mcp' });
      assertRefused(await callWith(jwtApp.url, bearer(token)), token, {
        error: 'invalid_token',
        rule: /audience \(aud\) is not this resource/,
      });
    });

    it('refuses a token of another authorization server without fetching anything of it', async () => {
      const token = await clientCredentialsToken(otherAs.tokenEndpoint, ALICE, { resource, scope: ALICE.scope });
      assertRefused(await callWith(jwtApp.url, bearer(token)), token, {
        error: 'invalid_token',
        rule: /issuer \(iss\) is not an accepted authorization server/,
      });
      assert.equal(otherAs.served.get('/jwks'), undefined, "the other issuer's keys were never fetched");
      assert.equal(otherAs.served.get('/.well-known/openid-configuration'), undefined);
      // The issuer's key, another iss claim: refused all the same.
      const renamed = await issuerSigned({ iss: otherAs.issuer });
      assertRefused(await callWith(jwtApp.url, bearer(renamed)), renamed, {
        error: 'invalid_token',
        rule: /issuer \(iss\)/,
      });
    });

    it('refuses alg "none" and an HMAC token keyed with the issuer\'s public key', async () => {
      const claims = {
        iss: as.issuer,
        aud: resource,
        sub: ALICE.clientId,
        client_id: ALICE.clientId,
        scope: ALICE.scope,
        iat: now(),
        exp: now() + 300,
      };
      const unsigned = `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims)}.`;
      assertRefused(await callWith(jwtApp.url, bearer(unsigned)), unsigned, {
        error: 'invalid_token',
        rule: /signing algorithm is not allowed/,
      });
      const { d: _private, ...publicJwk } = as.signingKey;
      const publicPem = await exportSPKI(
        (await importJWK(publicJwk as JWK, 'ES256')) as Parameters<typeof exportSPKI>[0],
      );
      for (const secret of [JSON.stringify(publicJwk), publicPem]) {
        const hmac = await new SignJWT(claims)
          .setProtectedHeader({ alg: 'HS256', kid: as.signingKey.kid })
          .sign(new TextEncoder().encode(secret));
        assertRefused(await callWith(jwtApp.url, bearer(hmac)), hmac, {
          error: 'invalid_token',
          rule: /signing algorithm is not allowed/,
        });
      }
    });

    it('refuses an OpenID Connect ID token even when its audience is accepted (jwt.audience = the client id)', async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/mcp`;
      const clientId = 'entra-style-client';
      const app = await startApp(
        OAuthAppModule.register({
          resource: url,
          authorizationServers: [as.issuer],
          jwt: { audience: [url, clientId] },
        }),
        { port },
      );
      try {
        for (const claims of [
          { nonce: 'n-0S6_WzA2Mj' },
          { at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q' },
          { c_hash: 'LDktKdoQak3Pk0cnXxCltA' },
        ]) {
          const idToken = await issuerSigned(
            { aud: clientId, sub: 'alice', client_id: undefined, scope: undefined, ...claims },
            { typ: 'JWT' },
          );
          assertRefused(await callWith(url, bearer(idToken)), idToken, {
            error: 'invalid_token',
            rule: /OpenID Connect ID token[^]*not an access token/,
          });
        }
        // The same claims without the ID-token ones: an access token for that audience passes.
        assert.equal(
          (await callWith(url, bearer(await issuerSigned({ aud: clientId, sub: 'alice' }, { typ: 'JWT' })))).status,
          200,
        );
      } finally {
        await app.close();
      }
    });

    it('a clock tolerance that would accept expired tokens (or refuse every token) fails the bootstrap, naming the option', async () => {
      for (const clockToleranceS of [1e9, -1]) {
        const module = OAuthAppModule.register({
          resource,
          authorizationServers: [as.issuer],
          jwt: { clockToleranceS },
        });
        await assert.rejects(
          NestFactory.create(module, { logger: false, abortOnError: false }).then((app) =>
            app.init().finally(() => app.close()),
          ),
          /auth\.jwt\.clockToleranceS is -?1[0-9]*; it must be a finite number from 0 to 600/,
        );
      }
    });

    it('refuses expired and not-yet-valid tokens beyond the clock tolerance', async () => {
      const expired = await issuerSigned({ iat: now() - 900, exp: now() - 120 });
      assertRefused(await callWith(jwtApp.url, bearer(expired)), expired, {
        error: 'invalid_token',
        rule: /has expired/,
      });
      const early = await issuerSigned({ nbf: now() + 120 });
      assertRefused(await callWith(jwtApp.url, bearer(early)), early, {
        error: 'invalid_token',
        rule: /not yet valid/,
      });
      // Within the tolerance (30 s) both pass: the clocks of two hosts never agree exactly.
      const justExpired = await issuerSigned({ exp: now() - 5 });
      assert.equal((await callWith(jwtApp.url, bearer(justExpired))).status, 200);
    });

    it('fetches the JWKS at most once more however many forged kids arrive', async () => {
      const good = await tokenFor(ALICE);
      assert.equal((await callWith(jwtApp.url, bearer(good))).status, 200, 'the key set is loaded');
      const fetched = as.served.get('/jwks') ?? 0;
      const attacker = await generateKeyPair('ES256');
      const forged = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          new SignJWT({ iss: as.issuer, aud: resource, sub: 'mallory', exp: now() + 300 })
            .setProtectedHeader({ alg: 'ES256', kid: `forged-${i}-${randomBytes(4).toString('hex')}` })
            .sign(attacker.privateKey),
        ),
      );
      for (const token of forged)
        assertRefused(await callWith(jwtApp.url, bearer(token)), token, {
          error: 'invalid_token',
          rule: /no key of the issuer's JWKS matches/,
        });
      assert.ok(
        (as.served.get('/jwks') ?? 0) - fetched <= 1,
        `JWKS fetched ${(as.served.get('/jwks') ?? 0) - fetched} times for 25 forged kids`,
      );
      // The attacker's key embedded in the header (jwk), under the issuer's kid: the header's key is never used.
      const embedded = await new SignJWT({ iss: as.issuer, aud: resource, sub: 'mallory', exp: now() + 300 })
        .setProtectedHeader({ alg: 'ES256', kid: as.signingKey.kid, jwk: await exportJWK(attacker.publicKey) })
        .sign(attacker.privateKey);
      assertRefused(await callWith(jwtApp.url, bearer(embedded)), embedded, {
        error: 'invalid_token',
        rule: /signature does not verify with the issuer's key/,
      });
      // The issuer's real key with a forged kid is still no key.
      const misfiled = await issuerSigned({}, { kid: 'not-the-kid' });
      assertRefused(await callWith(jwtApp.url, bearer(misfiled)), misfiled, { error: 'invalid_token', rule: /kid/ });
    });

    it('with a fixed key set and typ at+jwt: no fetch at all, and a token of another type is refused', async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/mcp`;
      const { d: _private, ...publicJwk } = as.signingKey;
      const app = await startApp(
        OAuthAppModule.register({
          resource: url,
          authorizationServers: [as.issuer],
          jwt: { jwks: { keys: [publicJwk] }, typ: 'at+jwt' },
        }),
        { port },
      );
      try {
        const served = {
          jwks: as.served.get('/jwks'),
          discovery: as.served.get('/.well-known/oauth-authorization-server'),
        };
        assert.equal((await callWith(url, bearer(await tokenFor(ALICE, { resource: url })))).status, 200);
        const plainJwt = await issuerSigned({ aud: url }, { typ: 'JWT' });
        assertRefused(await callWith(url, bearer(plainJwt)), plainJwt, {
          error: 'invalid_token',
          rule: /type \(typ\) is not at\+jwt/,
        });
        assert.deepEqual(
          { jwks: as.served.get('/jwks'), discovery: as.served.get('/.well-known/oauth-authorization-server') },
          served,
        );
      } finally {
        await app.close();
      }
    });

    it('an authorization server failing its metadata or JWKS is asked once per cooldown, however many forged tokens name it', async () => {
      let withMetadata = false;
      const failing = await startScriptedServer((req, res) => {
        if (req.url === '/.well-known/oauth-authorization-server' && withMetadata) {
          return void res
            .writeHead(200, { 'Content-Type': 'application/json' })
            .end(JSON.stringify({ issuer: failing.url, jwks_uri: `${failing.url}/jwks` }));
        }
        res.writeHead(500).end();
      });
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/mcp`;
      const app = await startApp(
        OAuthAppModule.register({ resource: url, authorizationServers: [failing.url], jwt: {} }),
        { port },
      );
      try {
        const attacker = await generateKeyPair('ES256');
        const forge = (i: number) =>
          new SignJWT({ iss: failing.url, aud: url, sub: `mallory-${i}`, exp: now() + 300 })
            .setProtectedHeader({ alg: 'ES256', kid: `k${i}` })
            .sign(attacker.privateKey);
        for (let i = 0; i < 15; i++) assert.equal((await callWith(url, bearer(await forge(i)))).status, 503);
        const metadataFetches =
          (failing.hits.get('/.well-known/oauth-authorization-server') ?? 0) +
          (failing.hits.get('/.well-known/openid-configuration') ?? 0);
        assert.equal(metadataFetches, 2, 'one attempt (both discovery documents) for 15 tokens');
        // Another app whose metadata answers but whose JWKS fails: one JWKS fetch for 15 tokens.
        withMetadata = true;
        const port2 = await freePort();
        const url2 = `http://127.0.0.1:${port2}/mcp`;
        const second = await startApp(
          OAuthAppModule.register({ resource: url2, authorizationServers: [failing.url], jwt: {} }),
          { port: port2 },
        );
        try {
          for (let i = 0; i < 15; i++) {
            const token = await new SignJWT({ iss: failing.url, aud: url2, sub: 'mallory', exp: now() + 300 })
              .setProtectedHeader({ alg: 'ES256', kid: `j${i}` })
              .sign(attacker.privateKey);
            assert.equal((await callWith(url2, bearer(token))).status, 503);
          }
          assert.equal(failing.hits.get('/jwks'), 1, 'one JWKS fetch for 15 tokens');
        } finally {
          await second.close();
        }
      } finally {
        await app.close();
        await failing.close();
      }
    });

    it('a JWKS that cannot be fetched answers 503 and never runs the tool', async () => {
      const token = await tokenFor(ALICE, { resource: downApp.url });
      const res = await callWith(downApp.url, bearer(token));
      assert.equal(res.status, 503, res.text);
      assert.match(
        (res.json as Json).error.message,
        /key set \(JWKS\) could not be fetched[^]*refused rather than let through unverified/,
      );
      assert.ok(res.headers.get('retry-after'));
      assert.ok(!res.text.includes(token.split('.')[2]));
    });
  });

  describe('DPoP-bound tokens (RFC 9449)', () => {
    let key: DpopKey;
    let token: string;
    before(async () => {
      key = await DpopKey.generate();
      token = await tokenFor(ALICE, { dpop: key });
    });

    it('accepts a proof for this request, and refuses the bound token without one or as a bearer token', async () => {
      assert.equal((await callWith(jwtApp.url, await dpopHeaders(key, token))).status, 200);
      assertRefused(await callWith(jwtApp.url, { Authorization: `DPoP ${token}` }), token, {
        scheme: 'DPoP',
        error: 'invalid_dpop_proof',
        rule: /carries no DPoP proof/,
      });
      assertRefused(await callWith(jwtApp.url, bearer(token)), token, {
        scheme: 'DPoP',
        error: 'invalid_token',
        rule: /DPoP-bound \(cnf.jkt\): send it as/,
      });
      const withProof = await dpopHeaders(key, token);
      assertRefused(await callWith(jwtApp.url, { ...withProof, Authorization: `Bearer ${token}` }), token, {
        scheme: 'DPoP',
        error: 'invalid_token',
        rule: /send it as/,
      });
      const refused = await callWith(jwtApp.url, { Authorization: `DPoP ${token}` });
      assert.match(
        refused.headers.get('www-authenticate') ?? '',
        /DPoP error="invalid_dpop_proof", error_description="[^"]+", algs="ES256 /,
      );
    });

    it("refuses another key's proof, a proof for another method or URL, a stale or future iat and another token's ath", async () => {
      const other = await DpopKey.generate();
      assertRefused(await callWith(jwtApp.url, await dpopHeaders(other, token)), token, {
        scheme: 'DPoP',
        error: 'invalid_dpop_proof',
        rule: /signed by a key other than the one the access token is bound to/,
      });
      assertRefused(await callWith(jwtApp.url, await dpopHeaders(key, token, { htm: 'GET' })), token, {
        scheme: 'DPoP',
        error: 'invalid_dpop_proof',
        rule: /another HTTP method \(htm must be POST\)/,
      });
      for (const htu of [
        `${jwtApp.base}/other`,
        `https://127.0.0.1:${new URL(jwtApp.url).port}/mcp`,
        'http://evil.example/mcp',
      ]) {
        assertRefused(await callWith(jwtApp.url, await dpopHeaders(key, token, { htu })), token, {
          scheme: 'DPoP',
          error: 'invalid_dpop_proof',
          rule: /another URL \(htu must be/,
        });
      }
      // The query is not part of htu (RFC 9449 §4.3).
      assert.equal((await callWith(`${jwtApp.url}?tenant=1`, await dpopHeaders(key, token))).status, 200);
      assertRefused(await callWith(jwtApp.url, await dpopHeaders(key, token, { iat: now() - 300 })), token, {
        scheme: 'DPoP',
        error: 'invalid_dpop_proof',
        rule: /too old/,
      });
      assertRefused(await callWith(jwtApp.url, await dpopHeaders(key, token, { iat: now() + 300 })), token, {
        scheme: 'DPoP',
        error: 'invalid_dpop_proof',
        rule: /iat is in the future/,
      });
      const otherToken = await tokenFor(ALICE, { dpop: key });
      const forOther = await dpopHeaders(key, otherToken);
      assertRefused(await callWith(jwtApp.url, { ...forOther, Authorization: `DPoP ${token}` }), token, {
        scheme: 'DPoP',
        error: 'invalid_dpop_proof',
        rule: /ath is not the hash of this access token/,
      });
      assertRefused(
        await callWith(jwtApp.url, {
          ...(await dpopHeaders(key, token)),
          DPoP: `${(await dpopHeaders(key, token)).DPoP}, x`,
        }),
        token,
        { scheme: 'DPoP', error: 'invalid_dpop_proof', rule: /more than one DPoP proof/ },
      );
    });

    it('refuses a proof made for another server, even when the request line names that server (absolute-form)', async () => {
      const elsewhere = 'http://other-mcp.example/mcp';
      const proof = await key.proof('POST', elsewhere, { accessToken: token });
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: WHOAMI });
      const { port } = new URL(jwtApp.url);
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          // write, not end: a half-closed socket gets no answer; Connection: close ends it after one.
          socket.write(
            [
              `POST ${elsewhere} HTTP/1.1`,
              `Host: 127.0.0.1:${port}`,
              `Authorization: DPoP ${token}`,
              `DPoP: ${proof}`,
              'Content-Type: application/json',
              'Accept: application/json, text/event-stream',
              `Content-Length: ${Buffer.byteLength(body)}`,
              'Connection: close',
              '',
              body,
            ].join('\r\n'),
          );
        });
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(raw, /^HTTP\/1\.1 401/, raw);
      assert.match(
        raw,
        /DPoP error="invalid_dpop_proof", error_description="the DPoP proof is for another URL \(htu must be http:\/\/127\.0\.0\.1:\d+\/mcp\)/,
        raw,
      );
    });

    it('checks DPoP-bound opaque tokens too (cnf.jkt from the introspection answer)', async () => {
      const opaque = await tokenFor(ALICE, { resource: opaqueResource, dpop: key });
      assert.ok(!opaque.includes('.'));
      assert.equal((await callWith(opaqueApp.url, await dpopHeaders(key, opaque, { url: opaqueApp.url }))).status, 200);
      assertRefused(await callWith(opaqueApp.url, bearer(opaque)), opaque, {
        scheme: 'DPoP',
        error: 'invalid_token',
        rule: /DPoP-bound \(cnf.jkt\)/,
      });
      const other = await DpopKey.generate();
      assertRefused(await callWith(opaqueApp.url, await dpopHeaders(other, opaque, { url: opaqueApp.url })), opaque, {
        scheme: 'DPoP',
        error: 'invalid_dpop_proof',
        rule: /signed by a key other/,
      });
    });

    it('refuses a replayed proof within the window', async () => {
      const headers = await dpopHeaders(key, token);
      assert.equal((await callWith(jwtApp.url, headers)).status, 200);
      assertRefused(await callWith(jwtApp.url, headers), token, {
        scheme: 'DPoP',
        error: 'invalid_dpop_proof',
        rule: /already used/,
      });
      // A refused proof (another URL) spends nothing: the same jti on a valid proof still passes once.
      const jti = randomBytes(8).toString('hex');
      assertRefused(
        await callWith(jwtApp.url, await dpopHeaders(key, token, { jti, htu: `${jwtApp.base}/x` })),
        token,
        { scheme: 'DPoP', error: 'invalid_dpop_proof', rule: /another URL/ },
      );
      assert.equal((await callWith(jwtApp.url, await dpopHeaders(key, token, { jti }))).status, 200);
    });

    it('refuses a token bound by a confirmation method it cannot check, or with a malformed cnf, rather than take it as a bearer token', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [
          { 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' },
          /confirmation method this resource cannot check \(cnf\.x5t#S256/,
        ],
        [{ jwk: { kty: 'EC', crv: 'P-256', x: 'a', y: 'b' } }, /cnf\.jwk/],
        [{ jkt: 42 }, /cnf\.jkt\) is not a SHA-256 JWK thumbprint/],
        [{}, /cnf\.jkt\) is not a SHA-256 JWK thumbprint/],
        ['bound', /cnf\) is not a JSON object/],
      ];
      for (const [cnf, rule] of cases) {
        const token = await issuerSigned({ cnf });
        assertRefused(await callWith(jwtApp.url, bearer(token)), token, { error: 'invalid_token', rule });
      }
    });

    it('refuses an unbound token sent with the DPoP scheme', async () => {
      const plain = await tokenFor(ALICE);
      assertRefused(await callWith(jwtApp.url, await dpopHeaders(key, plain)), plain, {
        scheme: 'DPoP',
        error: 'invalid_token',
        rule: /not bound to a key/,
      });
    });
  });

  describe('DPoP across two instances on Redis: required, with server nonces', () => {
    const keyPrefix = `oauth-e2e-${randomBytes(4).toString('hex')}:`;
    let first: RunningApp;
    let second: RunningApp;
    let shared: string;
    before(async () => {
      const [a, b] = [await freePort(), await freePort()];
      shared = `http://127.0.0.1:${a}/mcp`;
      // One endpoint behind a balancer: both instances are the same resource.
      const module = () =>
        OAuthAppModule.register(jwtAuth(shared, { dpop: { required: true, nonce: true } }), {
          redis: { url: REDIS_URL, keyPrefix },
          requestState: { secret: 'shared-secret-of-both-instances-32b' },
        });
      first = await startApp(module(), { port: a });
      second = await startApp(module(), { port: b });
    });
    after(async () => {
      await Promise.all([first?.close(), second?.close()]);
      await clearRedisPrefix(keyPrefix);
    });

    it('asks for a nonce, accepts it on either instance, and refuses a proof replayed on the other', async () => {
      const key = await DpopKey.generate();
      const token = await tokenFor(ALICE, { dpop: key, resource: shared });
      const noNonce = await callWith(first.url, await dpopHeaders(key, token, { url: shared }));
      assertRefused(noNonce, token, {
        scheme: 'DPoP',
        error: 'use_dpop_nonce',
        rule: /nonce of the DPoP-Nonce header/,
      });
      const nonce = noNonce.headers.get('dpop-nonce')!;
      assert.ok(nonce);
      const headers = await dpopHeaders(key, token, { url: shared, nonce });
      const ok = await callWith(first.url, headers);
      assert.equal(ok.status, 200, ok.text);
      assert.ok(ok.headers.get('dpop-nonce'), 'a fresh nonce rides on every answer');
      assertRefused(await callWith(second.url, headers), token, {
        scheme: 'DPoP',
        error: 'invalid_dpop_proof',
        rule: /already used/,
      });
      assert.equal(
        (await callWith(second.url, await dpopHeaders(key, token, { url: shared, nonce }))).status,
        200,
        "the first instance's nonce is good on the second",
      );
      // The v2 client, through its fetch, retries with the nonce it is asked for.
      const client = await connectModernClient(first.url, { fetch: dpopFetch(key, token) });
      assert.deepEqual(JSON.parse(textOf(await client.client.callTool(WHOAMI))), {
        principal: ALICE.clientId,
        scopes: SCOPES,
      });
      await client.close();
    });

    it('refuses every token that is not DPoP-bound, with a DPoP-only challenge', async () => {
      const plain = await tokenFor(ALICE, { resource: shared });
      const res = await callWith(first.url, bearer(plain));
      assertRefused(res, plain, {
        scheme: 'DPoP',
        error: 'invalid_token',
        rule: /accepts only DPoP-bound access tokens/,
      });
      assert.ok(!/Bearer/.test(res.headers.get('www-authenticate')!), res.headers.get('www-authenticate')!);
      const meta = (await (await fetch(`${first.base}/.well-known/oauth-protected-resource/mcp`)).json()) as Json;
      assert.equal(meta.dpop_bound_access_tokens_required, true);
    });
  });

  it('refuses DPoP proofs with 503 while the replay store (Redis) is down, never letting a replay through', async () => {
    const redis = await RedisChild.start();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const app = await startApp(
      OAuthAppModule.register(jwtAuth(url), { redis: { url: redis.url, commandTimeoutMs: 500 } }),
      { port },
    );
    try {
      const key = await DpopKey.generate();
      const token = await tokenFor(ALICE, { dpop: key, resource: url });
      assert.equal((await callWith(url, await dpopHeaders(key, token, { url }))).status, 200);
      await redis.stop();
      const res = await callWith(url, await dpopHeaders(key, token, { url }));
      assert.equal(res.status, 503, res.text);
      assert.match((res.json as Json).error.message, /DPoP replay store cannot answer/);
    } finally {
      await app.close();
      await redis.stop();
    }
  });

  describe('opaque tokens by introspection (RFC 7662)', () => {
    it('refuses a token the authorization server reports inactive, and never caches the refusal into a pass', async () => {
      for (const token of ['not-a-token-the-server-issued', randomBytes(32).toString('base64url')]) {
        assertRefused(await callWith(opaqueApp.url, bearer(token)), token, {
          error: 'invalid_token',
          rule: /not active \(introspection .active.: false\)/,
        });
      }
    });

    it('refuses an active token for another resource', async () => {
      const token = await tokenFor(ALICE, { resource: OTHER_OPAQUE });
      assertRefused(await callWith(opaqueApp.url, bearer(token)), token, {
        error: 'invalid_token',
        rule: /audience \(aud\) is not this resource/,
      });
    });

    it('shares its cache across instances on Redis, each entry expiring with the token, never later', async () => {
      const keyPrefix = `oauth-e2e-introspection-${randomBytes(4).toString('hex')}:`;
      const [a, b] = [await freePort(), await freePort()];
      const shared = OTHER_OPAQUE;
      const module = () =>
        OAuthAppModule.register(
          {
            resource: shared,
            authorizationServers: [as.issuer],
            introspection: {
              clientId: RESOURCE_SERVER.clientId,
              clientSecret: RESOURCE_SERVER.clientSecret,
              cacheTtlMs: 3_600_000,
            },
          },
          { redis: { url: REDIS_URL, keyPrefix } },
        );
      const first = await startApp(module(), { port: a });
      const second = await startApp(module(), { port: b });
      const redis = new Redis(REDIS_URL);
      try {
        const token = await tokenFor(ALICE, { resource: shared });
        const before = as.served.get('/token/introspection') ?? 0;
        assert.equal((await callWith(first.url, bearer(token))).status, 200);
        assert.equal((await callWith(second.url, bearer(token))).status, 200);
        assert.equal(
          (as.served.get('/token/introspection') ?? 0) - before,
          1,
          "the second instance read the first one's answer",
        );
        const keys = await redis.keys(`{${keyPrefix}}oauth:introspection:*`);
        assert.equal(keys.length, 1);
        assert.ok(!keys[0]!.includes(token), 'the key is a digest, not the token');
        const ttl = await redis.pttl(keys[0]!);
        // The token lives 600 s (the authorization server's accessTokenTTL): cacheTtlMs (1 h) is cut to it.
        assert.ok(ttl > 0 && ttl <= 600_000, `PTTL ${ttl}`);
      } finally {
        redis.disconnect();
        await Promise.all([first.close(), second.close()]);
        await clearRedisPrefix(keyPrefix);
      }
    });

    it('answers 503 with a clear error while the introspection endpoint is down, never fail-open, and never names its URL', async () => {
      const token = randomBytes(32).toString('base64url');
      const res = await callWith(downApp.url, bearer(token));
      assert.equal(res.status, 503, res.text);
      assert.match(
        (res.json as Json).error.message,
        /^Service unavailable: the access token cannot be verified now: the introspection endpoint did not answer/,
      );
      assert.ok(!res.text.includes(token));
      assert.ok(
        !/127\.0\.0\.1|introspect\b|http:/.test(res.text),
        `the answer names the internal endpoint: ${res.text}`,
      );
    });

    it('a token the authorization server will not introspect (HTTP 400, such as a JWT) is 401 invalid_token, not 503, and the endpoint is not named', async () => {
      const jwt = await tokenFor(ALICE);
      const res = await callWith(opaqueApp.url, bearer(jwt));
      assertRefused(res, jwt, { error: 'invalid_token', rule: /would not introspect the token \(HTTP 400\)/ });
      assert.ok(!res.text.includes(as.issuer), res.text);
    });

    it('refuses an introspection answer with a non-numeric exp, a token_type other than an access token, or a body past maxResponseBytes', async () => {
      let answer: () => string = () => '{}';
      const fake = await startScriptedServer((_req, res) => {
        const body = answer();
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
      });
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/mcp`;
      const app = await startApp(
        OAuthAppModule.register({
          resource: url,
          authorizationServers: [as.issuer],
          introspection: { endpoint: `${fake.url}/introspect`, cacheTtlMs: 0, maxResponseBytes: 4096 },
        }),
        { port },
      );
      try {
        const active = { active: true, sub: 'alice', aud: url, iss: as.issuer, scope: 'notes:read' };
        const token = randomBytes(24).toString('base64url');
        const cases: Array<[Json, RegExp]> = [
          [{ ...active, exp: 'never' }, /exp is not a number of seconds/],
          [{ ...active, exp: now() + 60, nbf: '0' }, /nbf is not a number of seconds/],
          [{ ...active, token_type: 'refresh_token' }, /another kind than an access token/],
          [{ ...active, token_type: 'urn:ietf:params:oauth:token-type:id_token' }, /another kind than an access token/],
        ];
        for (const [claims, rule] of cases) {
          answer = () => JSON.stringify(claims);
          assertRefused(await callWith(url, bearer(token)), token, { error: 'invalid_token', rule });
        }
        for (const tokenType of ['Bearer', 'DPoP', 'access_token', undefined]) {
          answer = () => JSON.stringify({ ...active, exp: now() + 60, token_type: tokenType });
          assert.equal((await callWith(url, bearer(token))).status, 200, `token_type ${tokenType}`);
        }
        answer = () => JSON.stringify({ ...active, padding: 'x'.repeat(5000) });
        const big = await callWith(url, bearer(token));
        assert.equal(big.status, 503, big.text);
        assert.match(
          (big.json as Json).error.message,
          /longer than auth\.introspection\.maxResponseBytes \(4096 bytes\)|announces \d+ bytes, more than auth\.introspection\.maxResponseBytes/,
        );
        assert.ok(!big.text.includes(fake.url), big.text);
      } finally {
        await app.close();
        await fake.close();
      }
    });
  });

  describe('every path to the endpoint passes the same verification', () => {
    it('a 2025-11-25 initialize, a 2025-03-26 batch and the legacy /sse stream refuse a token for another audience and serve a good one', async () => {
      const alice = bearer(await tokenFor(ALICE));
      const misdirected = await tokenFor(ALICE, { resource: 'https://other.example.com/mcp' });
      const initialize = (version: string, headers: Record<string, string>) =>
        rpc(
          jwtApp.url,
          {
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'paths', version: '1' } },
          },
          { headers },
        );
      assertRefused(await initialize('2025-11-25', bearer(misdirected)), misdirected, {
        error: 'invalid_token',
        rule: /audience/,
      });
      const batchSession = await LegacyCaller.open(jwtApp.url, {
        headers: alice,
        protocolVersion: '2025-03-26',
        clientName: 'batch',
      });
      const [answer] = await batchSession.batch([{ method: 'tools/call', params: WHOAMI }]);
      assert.equal(JSON.parse(textOf(answer.result!)).principal, ALICE.clientId);
      const refusedBatch = await rpc(jwtApp.url, [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: WHOAMI }], {
        sessionId: batchSession.sessionId,
        headers: bearer(misdirected),
      });
      assertRefused(refusedBatch, misdirected, { error: 'invalid_token', rule: /audience/ });

      const refusedStream = await openStream(`${jwtApp.base}/sse`, bearer(misdirected));
      assert.equal(refusedStream.res.statusCode, 401);
      assert.match(String(refusedStream.res.headers['www-authenticate']), /^Bearer error="invalid_token"[^]*audience/);
      refusedStream.close();
      const sse = await openSseSession(jwtApp.base, alice);
      const event = await sse.request(1, 'tools/call', WHOAMI);
      assert.equal(JSON.parse(textOf((event.data as Json).result)).principal, ALICE.clientId);
      const bobs = await post(
        sse.messages,
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: WHOAMI },
        bearer(await tokenFor(BOB)),
      );
      assert.equal(bobs.status, 404, `Bob cannot post into Alice's /sse session: ${bobs.text}`);
      sse.stream.close();
    });

    it('in process (McpTestClient, authenticate: true) takes a bearer JWT, and refuses a DPoP-bound token it cannot check a proof for', async () => {
      const asAlice = await McpTestClient.create(jwtApp.app, {
        authenticate: true,
        headers: { Authorization: `Bearer ${await tokenFor(ALICE)}` },
      });
      assert.equal(JSON.parse(textOf(await asAlice.callTool('whoami'))).principal, ALICE.clientId);
      await asAlice.close();
      const key = await DpopKey.generate();
      const bound = await tokenFor(ALICE, { dpop: key });
      await assert.rejects(
        McpTestClient.create(jwtApp.app, {
          authenticate: true,
          headers: {
            Authorization: `DPoP ${bound}`,
            DPoP: await key.proof('POST', jwtApp.url, { accessToken: bound }),
          },
        }),
        (error: unknown) =>
          error instanceof McpTestError &&
          (error.data as Json).status === 401 &&
          /only be checked on an HTTP request/.test(error.message),
      );
    });
  });

  describe('what one agent holds stays its own', () => {
    it("a legacy session opened with Alice's token is not Bob's, on either token kind", async () => {
      const alice = bearer(await tokenFor(ALICE));
      const bob = bearer(await tokenFor(BOB));
      const session = await LegacyCaller.open(jwtApp.url, { headers: alice, clientName: 'alice' });
      const stolen = await rpc(
        jwtApp.url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: WHOAMI },
        { sessionId: session.sessionId, headers: { ...bob, 'MCP-Protocol-Version': '2025-11-25' } },
      );
      assert.equal(stolen.status, 404, stolen.text);
      assert.deepEqual(
        JSON.parse(textOf((await session.call('tools/call', WHOAMI)).result!)).principal,
        ALICE.clientId,
      );
    });

    it("a 2026-07-28 requestState issued to Alice is refused with Bob's token, and still redeems for Alice", async () => {
      const alice = bearer(await tokenFor(ALICE));
      const bob = bearer(await tokenFor(BOB));
      const caps = { [META_KEYS.clientCapabilities]: { elicitation: {} } };
      const first = (
        await modernRpc(
          jwtApp.url,
          'tools/call',
          { name: 'confirm_note', arguments: {}, _meta: caps },
          { headers: alice },
        )
      ).json as Json;
      assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
      const [key] = Object.keys(first.result.inputRequests);
      const retry = {
        name: 'confirm_note',
        arguments: {},
        inputResponses: { [key!]: { action: 'accept', content: { answer: 'yes' } } },
        requestState: first.result.requestState,
        _meta: caps,
      };
      const stolen = (await modernRpc(jwtApp.url, 'tools/call', retry, { headers: bob })).json as Json;
      assert.match(stolen.error?.message ?? '', /^Invalid requestState/, JSON.stringify(stolen));
      assert.ok(!JSON.stringify(stolen).includes('confirmed'), JSON.stringify(stolen));
      const own = (await modernRpc(jwtApp.url, 'tools/call', retry, { headers: alice })).json as Json;
      assert.equal(textOf(own.result), `${ALICE.clientId} confirmed yes`, JSON.stringify(own));
    });

    it("a resources/list cursor Alice got is refused with Bob's token, on both eras", async () => {
      const alice = bearer(await tokenFor(ALICE));
      const bob = bearer(await tokenFor(BOB));
      const first = (await modernRpc(jwtApp.url, 'resources/list', {}, { headers: alice })).json as Json;
      const cursor = first.result?.nextCursor as string;
      assert.ok(cursor?.includes('.'), `a signed repository cursor: ${JSON.stringify(first)}`);
      const stolen = (await modernRpc(jwtApp.url, 'resources/list', { cursor }, { headers: bob })).json as Json;
      assert.equal(stolen.error?.code, -32602, JSON.stringify(stolen));
      const own = (await modernRpc(jwtApp.url, 'resources/list', { cursor }, { headers: alice })).json as Json;
      assert.deepEqual(
        (own.result?.resources as Json[]).map((r) => r.uri),
        ['notes://2', 'notes://3'],
      );
      const bobSession = await LegacyCaller.open(jwtApp.url, { headers: bob, clientName: 'bob-lists' });
      assert.equal((await bobSession.call('resources/list', { cursor })).error?.code, -32602);
    });

    it("with two authorization servers, one issuer's alice is not the other's: ids are qualified by the issuer (session, task, whoami)", async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/mcp`;
      const app = await startApp(
        OAuthAppModule.register(
          { resource: url, authorizationServers: [as.issuer, otherAs.issuer], jwt: {} },
          { tasks: {} },
        ),
        { port },
      );
      try {
        // Both servers register a client "agent-alice": their tokens carry the same sub.
        const first = bearer(
          await clientCredentialsToken(as.tokenEndpoint, ALICE, { resource: url, scope: ALICE.scope }),
        );
        const second = bearer(
          await clientCredentialsToken(otherAs.tokenEndpoint, ALICE, { resource: url, scope: ALICE.scope }),
        );
        const whoami = async (headers: Record<string, string>) =>
          JSON.parse(textOf(((await modernRpc(url, 'tools/call', WHOAMI, { headers })).json as Json).result))
            .principal as string;
        assert.equal(await whoami(first), `${as.issuer}#${ALICE.clientId}`);
        assert.equal(await whoami(second), `${otherAs.issuer}#${ALICE.clientId}`);
        const session = await LegacyCaller.open(url, { headers: first, clientName: 'alice-1' });
        const stolen = await rpc(
          url,
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: WHOAMI },
          { sessionId: session.sessionId, headers: { ...second, 'MCP-Protocol-Version': '2025-11-25' } },
        );
        assert.equal(stolen.status, 404, stolen.text);
        const tasksMeta = { _meta: { [META_KEYS.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } } } };
        const created = (
          await modernRpc(url, 'tools/call', { name: 'notes_report', arguments: {}, ...tasksMeta }, { headers: first })
        ).json as Json;
        const taskId = (created.result?.task?.taskId ?? created.result?.taskId) as string;
        assert.equal(typeof taskId, 'string', JSON.stringify(created));
        const get = (headers: Record<string, string>) =>
          modernRpc(url, 'tasks/get', { taskId, ...tasksMeta }, { headers: { ...headers, 'Mcp-Name': taskId } }).then(
            (r) => r.json as Json,
          );
        assert.ok((await get(second)).error, "the other issuer's alice does not see the task");
        assert.equal((await get(first)).result?.taskId ?? (await get(first)).result?.task?.taskId, taskId);
      } finally {
        await app.close();
      }
    });

    it('a client named like a user never acts as that user: client_id alone gives client:<id>, and a sub in that form is refused', async () => {
      const userAlice = await issuerSigned({ sub: 'alice', client_id: 'some-app' });
      // No sub (undefined leaves the payload): a client acting for itself.
      const clientAlice = await issuerSigned({ sub: undefined, client_id: 'alice' });
      const session = await LegacyCaller.open(jwtApp.url, { headers: bearer(userAlice), clientName: 'user-alice' });
      assert.equal(JSON.parse(textOf((await session.call('tools/call', WHOAMI)).result!)).principal, 'alice');
      const stolen = await rpc(
        jwtApp.url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: WHOAMI },
        { sessionId: session.sessionId, headers: { ...bearer(clientAlice), 'MCP-Protocol-Version': '2025-11-25' } },
      );
      assert.equal(stolen.status, 404, stolen.text);
      assert.equal(
        JSON.parse(textOf(((await callWith(jwtApp.url, bearer(clientAlice))).json as Json).result)).principal,
        'client:alice',
      );
      const posing = await issuerSigned({ sub: 'client:alice' });
      assertRefused(await callWith(jwtApp.url, bearer(posing)), posing, {
        error: 'invalid_token',
        rule: /no subject to act as[^]*client:/,
      });
    });

    it('a claims mapping (auth.principal) that gives no id refuses the token, never binding a session to nobody', async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/mcp`;
      const mappings: Array<McpAuthOptions['principal']> = [
        (claims) => ({ id: claims.oid as string, scopes: [] }),
        (claims) => ({ id: (claims.oid as string) ?? '', scopes: [] }),
      ];
      for (const principal of mappings) {
        const app = await startApp(
          OAuthAppModule.register({ resource: url, authorizationServers: [as.issuer], jwt: {}, principal }),
          { port },
        );
        try {
          const token = await tokenFor(ALICE, { resource: url });
          assertRefused(await callWith(url, bearer(token)), token, {
            error: 'invalid_token',
            rule: /auth\.principal[^]*non-empty string id/,
          });
          const init = await rpc(
            url,
            {
              jsonrpc: '2.0',
              id: 0,
              method: 'initialize',
              params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'nobody', version: '1' } },
            },
            { headers: bearer(token) },
          );
          assert.equal(init.status, 401, init.text);
          assert.equal(init.headers.get('mcp-session-id'), null);
        } finally {
          await app.close();
        }
      }
    });

    it("a task Alice's DPoP-bound token created is unknown to Bob, and Alice reads it with a new proof", async () => {
      const key = await DpopKey.generate();
      const aliceToken = await tokenFor(ALICE, { dpop: key });
      const tasksMeta = { _meta: { [META_KEYS.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } } } };
      const ask = async (method: string, params: Json, headers: Record<string, string>): Promise<Json> =>
        (
          await modernRpc(
            jwtApp.url,
            method,
            { ...params, ...tasksMeta },
            { headers: { ...headers, ...(params.taskId ? { 'Mcp-Name': String(params.taskId) } : {}) } },
          )
        ).json as Json;
      const created = await ask(
        'tools/call',
        { name: 'notes_report', arguments: {} },
        await dpopHeaders(key, aliceToken),
      );
      const taskId = (created.result?.task?.taskId ?? created.result?.taskId) as string;
      assert.equal(typeof taskId, 'string', JSON.stringify(created));
      const bob = bearer(await tokenFor(BOB));
      const fake = 'Z'.repeat(taskId.length);
      const unknown = (answer: Json, id: string): unknown => ({
        code: answer.error?.code,
        message: String(answer.error?.message).replace(id, '<id>'),
      });
      for (const method of ['tasks/get', 'tasks/cancel']) {
        assert.deepEqual(
          unknown(await ask(method, { taskId }, bob), taskId),
          unknown(await ask(method, { taskId: fake }, bob), fake),
          method,
        );
      }
      const mine = await ask('tasks/get', { taskId }, await dpopHeaders(key, aliceToken));
      assert.equal(mine.result?.taskId ?? mine.result?.task?.taskId, taskId, JSON.stringify(mine));
    });
  });
});
