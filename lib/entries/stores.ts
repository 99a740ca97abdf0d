/**
 * `nestjs-model-context/stores`: what a custom backend implements, and the in-memory defaults
 * (one instance). Sessions, resumable event streams, change notifications across instances,
 * relays to the instance that holds a stream and rate-limit counters (the task store is in `/tasks`).
 * `/redis` has the implementations for several instances.
 */
export {
  InMemorySessionStore,
  type McpSession,
  type McpSessionCreateOptions,
  type McpSessionCreateResult,
  type McpSessionEndReason,
  type McpSessionField,
  type McpSessionStore,
} from '../protocol/session-store.js';
export { InMemoryEventStore, type McpEventStore, type StoredEvent } from '../protocol/event-store.js';
export {
  InProcessNotificationBus,
  type McpChangeEvent,
  type McpNotificationBus,
  type McpToggleState,
  type McpToggleTarget,
} from '../protocol/notification-bus.js';
export type { McpRelay, McpRelayStreamRequest } from '../engine/relay.js';
export type { McpThrottlerStorage, McpThrottlerStorageRecord } from '../redis/redis-throttler.storage.js';
export { McpStoreUnavailableError } from '../protocol/errors.js';
