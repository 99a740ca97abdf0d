/**
 * The heap the built-in verification's in-memory bounds hold when full: the DPoP replay store at
 * `auth.dpop.replayMaxEntries` (100,000 proofs) and the introspection cache at
 * `auth.introspection.cacheMaxEntries` (10,000 answers shaped as oidc-provider's). Heap after GC,
 * against the start; not a timing.
 *   npm run build && node --expose-gc dist/bench/oauth-memory.js
 */
import { createHash, randomUUID } from 'node:crypto';
import { MemoryDpopReplayStore } from '../lib/oauth/dpop.verifier.js';
import { MemoryIntrospectionCache } from '../lib/oauth/token-cache.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('Run with node --expose-gc.');

function heap(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

const digest = (value: string): string => createHash('sha256').update(value).digest('base64url');

const start = heap();
const replays = new MemoryDpopReplayStore(100_000);
for (let i = 0; i < 100_000; i++) await replays.consume(digest(randomUUID()), 600_000);
const afterReplays = heap();
const cache = new MemoryIntrospectionCache(10_000);
for (let i = 0; i < 10_000; i++) {
  await cache.set(
    digest(randomUUID()),
    {
      active: true,
      client_id: `agent-${i}`,
      exp: 1_900_000_000,
      iat: 1_899_999_400,
      iss: 'https://idp.example.com/realms/agents',
      aud: 'https://api.example.com/mcp',
      scope: 'notes:read notes:write',
      token_type: 'Bearer',
      cnf: { jkt: digest(String(i)) },
    },
    600_000,
  );
}
const afterCache = heap();
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
console.log(
  `DPoP replay store, 100,000 proofs: ${mib(afterReplays - start)} (${Math.round((afterReplays - start) / 100_000)} B each)`,
);
console.log(
  `introspection cache, 10,000 answers: ${mib(afterCache - afterReplays)} (${Math.round((afterCache - afterReplays) / 10_000)} B each)`,
);
// Keep both alive until measured.
if (replays === undefined || cache.size < 0) console.log('unreachable');
