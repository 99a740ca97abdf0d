import type { ListCacheHint } from '../protocol/catalog.js';

/**
 * Checks a capability's `listCache` at bootstrap, so a typo fails there instead of silently
 * changing what clients cache.
 */
export function checkListCache(value: ListCacheHint | undefined, site: string): ListCacheHint | undefined {
  if (value === undefined || typeof value === 'function') return value;
  const { ttlMs, cacheScope } = (value ?? {}) as { ttlMs?: unknown; cacheScope?: unknown };
  const ttlOk = ttlMs === undefined || (Number.isSafeInteger(ttlMs) && (ttlMs as number) >= 0);
  const scopeOk = cacheScope === undefined || cacheScope === 'public' || cacheScope === 'private';
  if (typeof value !== 'object' || value === null || !ttlOk || !scopeOk) {
    throw new Error(
      `${site}: "listCache" must be { ttlMs?: a non-negative integer, cacheScope?: "public" | "private" } or a function (ctx) returning one. Fix the option of the decorator or definition.`,
    );
  }
  return Object.freeze({
    ...(ttlMs === undefined ? {} : { ttlMs: ttlMs as number }),
    ...(cacheScope === undefined ? {} : { cacheScope: cacheScope as 'public' | 'private' }),
  });
}
