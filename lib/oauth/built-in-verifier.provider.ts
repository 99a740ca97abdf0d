import type { McpRedisBackend } from '../redis/redis-backend.js';
import type { McpAuthOptions } from './oauth-options.interface.js';
import { McpBuiltInTokenVerifier } from './token.verifier.js';

/**
 * The built-in token verification of `auth`, sharing the module's Redis (introspection cache,
 * DPoP replay store) and its request-state secret (DPoP nonces), so instances agree.
 */
export function builtInTokenVerifier(
  auth: McpAuthOptions | undefined,
  redis: McpRedisBackend | null,
  nonceSecret: Buffer,
): McpBuiltInTokenVerifier | undefined {
  if (!auth) return undefined;
  return McpBuiltInTokenVerifier.create(auth, {
    redis: redis ? { client: (store) => redis.health.view(store), prefix: redis.keys.prefix } : undefined,
    nonceSecret,
  });
}
