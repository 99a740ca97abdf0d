/**
 * `nestjs-model-context/redis`: the Redis building blocks behind `redis: { client }` (sessions,
 * event streams, notifications, relays, replay guard), for apps that compose them by hand, and the
 * throttler storage for `@nestjs/throttler`. Needs the optional peer `ioredis`.
 */
export type { McpRedisClient, McpRedisOptions } from '../redis/redis-client.js';
export { McpRedisBackend } from '../redis/redis-backend.js';
export { RedisSessionStore } from '../redis/redis-session.store.js';
export { RedisEventStore } from '../redis/redis-event.store.js';
export { RedisNotificationBus } from '../redis/redis-notification.bus.js';
export { RedisReplayGuard } from '../redis/redis-replay.guard.js';
export { RedisRelay } from '../redis/redis-relay.js';
export { McpRedisThrottlerStorage } from '../redis/redis-throttler.storage.js';
