import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { McpAuthenticator } from '../auth/mcp-authenticator.js';
import type { McpAuthOptions } from '../auth/mcp-auth.interface.js';
import { McpStoreUnavailableError } from '../protocol/errors.js';
import { DpopVerifier, MemoryDpopReplayStore } from './dpop.verifier.js';
import { quotable } from './oauth-refusal.js';
import { MemoryIntrospectionCache } from './token-cache.js';
import { McpBuiltInTokenVerifier, principalFromClaims } from './token.verifier.js';

const base: McpAuthOptions = {
  resource: 'https://api.example.com/mcp',
  authorizationServers: ['https://idp.example.com'],
};
const deps = { nonceSecret: randomBytes(32) };

describe('built-in token verification: bootstrap', () => {
  it('asks for no verifier without jwt, introspection or dpop', () => {
    assert.equal(McpBuiltInTokenVerifier.create(base, deps), undefined);
  });

  it('refuses none and HMAC algorithms, verifyToken beside it, and dpop alone, naming the option', () => {
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, jwt: { algorithms: ['RS256', 'none'] } }, deps),
      /auth\.jwt\.algorithms lists "none"/,
    );
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, jwt: { algorithms: ['HS256'] } }, deps),
      /"HS256": only asymmetric/,
    );
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, jwt: {}, dpop: { algorithms: ['HS512'] } }, deps),
      /auth\.dpop\.algorithms/,
    );
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, jwt: {}, verifyToken: () => null }, deps),
      /both set/,
    );
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, dpop: {} }, deps),
      /auth\.dpop needs auth\.jwt or auth\.introspection/,
    );
    assert.throws(
      () =>
        McpBuiltInTokenVerifier.create(
          { ...base, authorizationServers: ['https://a', 'https://b'], jwt: { jwksUri: 'https://a/jwks' } },
          deps,
        ),
      /jwksUri serves one issuer/,
    );
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, introspection: { clientSecret: 's' } }, deps),
      /clientSecret is set without clientId/,
    );
  });

  it('refuses a numeric option that is not finite or out of its range, naming it', () => {
    const cases: Array<[Partial<McpAuthOptions>, RegExp]> = [
      [
        { jwt: { clockToleranceS: 1e9 } },
        /auth\.jwt\.clockToleranceS is 1000000000; it must be a finite number from 0 to 600/,
      ],
      [{ jwt: { clockToleranceS: -1 } }, /auth\.jwt\.clockToleranceS is -1/],
      [{ jwt: { clockToleranceS: Number.NaN } }, /auth\.jwt\.clockToleranceS is NaN/],
      [{ jwt: { fetchTimeoutMs: 0 } }, /auth\.jwt\.fetchTimeoutMs is 0; it must be an integer from 1/],
      [{ jwt: { jwksRefreshCooldownMs: Infinity } }, /auth\.jwt\.jwksRefreshCooldownMs is Infinity/],
      [{ introspection: { timeoutMs: -5 } }, /auth\.introspection\.timeoutMs is -5/],
      [{ introspection: { maxResponseBytes: 1.5 } }, /auth\.introspection\.maxResponseBytes is 1\.5/],
      [{ jwt: {}, dpop: { proofMaxAgeS: 0 } }, /auth\.dpop\.proofMaxAgeS is 0/],
      [{ jwt: {}, dpop: { clockSkewS: 1e6 } }, /auth\.dpop\.clockSkewS is 1000000/],
      [{ jwt: {}, dpop: { nonceLifetimeS: 0 } }, /auth\.dpop\.nonceLifetimeS is 0/],
      [{ jwt: {}, dpop: { replayMaxEntries: -1 } }, /auth\.dpop\.replayMaxEntries is -1/],
      [{ jwt: { clockToleranceS: '30' as unknown as number } }, /auth\.jwt\.clockToleranceS is "30"/],
    ];
    for (const [options, message] of cases)
      assert.throws(() => McpBuiltInTokenVerifier.create({ ...base, ...options }, deps), message);
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, jwt: { audience: [] } }, deps),
      /auth\.jwt\.audience must give the accepted audiences/,
    );
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, jwt: { issuer: [''] } }, deps),
      /auth\.jwt\.issuer must list the accepted issuers/,
    );
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, authorizationServers: [], jwt: {} }, deps),
      /auth\.authorizationServers must list/,
    );
    assert.throws(
      () => McpBuiltInTokenVerifier.create({ ...base, resource: '', jwt: {} }, deps),
      /auth\.resource is ""; it must be this MCP endpoint's absolute URL/,
    );
    assert.ok(
      McpBuiltInTokenVerifier.create(
        { ...base, jwt: { clockToleranceS: 0, fetchTimeoutMs: 2_000 }, dpop: { proofMaxAgeS: 30, clockSkewS: 0 } },
        deps,
      ),
    );
  });
});

describe('built-in token verification: challenges and metadata', () => {
  it('offers Bearer and DPoP challenges, DPoP alone when required, and adds the RFC 9728 fields', () => {
    const optional = new McpAuthenticator(
      { ...base, jwt: {}, dpop: { algorithms: ['ES256'] } },
      McpBuiltInTokenVerifier.create({ ...base, jwt: {}, dpop: { algorithms: ['ES256'] } }, deps),
    );
    assert.equal(
      optional.challengeHeader(undefined, ['a']),
      'Bearer scope="a", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256"',
    );
    assert.equal(
      optional.challengeHeader('invalid_dpop_proof', undefined, { scheme: 'DPoP', description: 'the "proof" failed' }),
      `Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp", DPoP error="invalid_dpop_proof", error_description="the 'proof' failed", algs="ES256"`,
    );
    assert.deepEqual(optional.metadata(), {
      resource: base.resource,
      authorization_servers: base.authorizationServers,
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: ['ES256'],
      dpop_bound_access_tokens_required: false,
    });
    const auth = { ...base, jwt: {}, dpop: { required: true } };
    const required = new McpAuthenticator(auth, McpBuiltInTokenVerifier.create(auth, deps));
    assert.match(
      required.challengeHeader('invalid_token', ['a'], { description: 'x' }),
      /^DPoP error="invalid_token", scope="a", resource_metadata="[^"]+", error_description="x", algs="ES256 /,
    );
    assert.equal(required.metadata().dpop_bound_access_tokens_required, true);
  });

  it('keeps descriptions inside their quoted-string', () => {
    assert.equal(quotable('a "b" \\ c\r\nd'), "a 'b' ' c''d");
  });
});

describe('built-in token verification: stores', () => {
  it('the memory replay store refuses a replay, forgets expired proofs, and refuses (503) when full of live ones', async () => {
    const store = new MemoryDpopReplayStore(2);
    assert.equal(await store.consume('a', 60_000), true);
    assert.equal(await store.consume('a', 60_000), false);
    assert.equal(await store.consume('b', 60_000), true);
    await assert.rejects(
      store.consume('c', 60_000),
      (error: unknown) => error instanceof McpStoreUnavailableError && /replayMaxEntries/.test(error.message),
    );
    const expiring = new MemoryDpopReplayStore(1);
    assert.equal(await expiring.consume('x', -1), true);
    assert.equal(await expiring.consume('y', 60_000), true, 'the expired entry made room');
  });

  it('the memory introspection cache drops the oldest answer and every answer past its time', async () => {
    const cache = new MemoryIntrospectionCache(2);
    await cache.set('a', { active: true }, 60_000);
    await cache.set('b', { active: true }, 60_000);
    await cache.set('c', { active: true }, 60_000);
    assert.equal(await cache.get('a'), undefined);
    assert.deepEqual(await cache.get('c'), { active: true });
    await cache.set('d', { active: true }, -1);
    assert.equal(await cache.get('d'), undefined);
    assert.ok(cache.size <= 2);
  });
});

describe('built-in token verification: nonces and claims', () => {
  it('nonces are HMACs of a time slot: the same secret agrees, another does not', () => {
    const options = {
      required: false,
      algorithms: ['ES256'],
      proofMaxAgeS: 60,
      clockSkewS: 5,
      nonce: true,
      nonceLifetimeS: 60,
    };
    const secret = randomBytes(32);
    const a = new DpopVerifier(options, 'https://api.example.com', new MemoryDpopReplayStore(10), secret);
    const b = new DpopVerifier(options, 'https://api.example.com', new MemoryDpopReplayStore(10), secret);
    const other = new DpopVerifier(options, 'https://api.example.com', new MemoryDpopReplayStore(10), randomBytes(32));
    const at = Date.UTC(2026, 0, 1);
    assert.equal(a.currentNonce(at), b.currentNonce(at));
    assert.notEqual(a.currentNonce(at), other.currentNonce(at));
    assert.notEqual(a.currentNonce(at), a.currentNonce(at + 60_000));
  });

  it('maps sub (else client_id) and scope or scp to the principal', () => {
    assert.deepEqual(principalFromClaims({ sub: 'u', scope: 'a b' }), {
      id: 'u',
      scopes: ['a', 'b'],
      claims: { sub: 'u', scope: 'a b' },
    });
    assert.deepEqual(principalFromClaims({ client_id: 'c', scp: ['x'] })?.scopes, ['x']);
    assert.equal(principalFromClaims({ scope: 'a' }), undefined);
  });

  it("never lets a client take a user's id, nor one issuer's subject another's", () => {
    assert.equal(principalFromClaims({ sub: 'alice', client_id: 'app' })?.id, 'alice');
    assert.equal(principalFromClaims({ client_id: 'alice' })?.id, 'client:alice');
    assert.equal(principalFromClaims({ sub: 'client:alice' }), undefined, 'a sub in the client form is refused');
    assert.equal(principalFromClaims({ sub: '' }), undefined);
    assert.equal(principalFromClaims({ sub: 7 }), undefined);
    const qualified = { qualifyIssuer: true };
    assert.equal(
      principalFromClaims({ iss: 'https://as1.example', sub: 'alice' }, qualified)?.id,
      'https://as1.example#alice',
    );
    assert.equal(
      principalFromClaims({ iss: 'https://as2.example', client_id: 'alice' }, qualified)?.id,
      'https://as2.example#client:alice',
    );
    assert.equal(principalFromClaims({ sub: 'alice' }, qualified), undefined, 'no issuer, no qualified id');
    assert.equal(principalFromClaims({ iss: 'https://as1.example#x', sub: 'alice' }, qualified), undefined);
  });
});
