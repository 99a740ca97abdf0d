import type { ResolvedMcpOptions } from '../interfaces/mcp-module-options.interface.js';
import { requestStateSecret, type McpRedisBackend } from '../redis/redis-backend.js';
import { McpBuiltInTokenVerifier } from './token.verifier.js';

/**
 * The built-in token verification of `auth`, sharing the module's Redis (introspection cache,
 * DPoP replay store) and its request-state secret (DPoP nonces), so instances agree.
 */
export function builtInTokenVerifier(
  options: ResolvedMcpOptions,
  redis: McpRedisBackend | null,
): McpBuiltInTokenVerifier | undefined {
  if (!options.auth) return undefined;
  return McpBuiltInTokenVerifier.create(options.auth, {
    redis: redis ? { client: (store) => redis.health.view(store), prefix: redis.keys.prefix } : undefined,
    nonceSecret: requestStateSecret(options, redis),
  });
}
