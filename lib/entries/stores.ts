/**
 * `nestjs-model-context/stores`: what a custom backend implements, and the in-memory defaults
 * (one instance). Sessions, resumable event streams, change notifications across instances,
 * relays to the instance that holds a stream, tasks and rate-limit counters. `/redis` has the
 * implementations for several instances.
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
export {
  InMemoryTaskStore,
  type McpTaskLimits,
  type McpTaskRecord,
  type McpTaskSignal,
  type McpTaskStatus,
  type McpTaskStore,
} from '../tasks/task-store.js';
export type { McpThrottlerStorage, McpThrottlerStorageRecord } from '../redis/redis-throttler.storage.js';
export { McpStoreUnavailableError } from '../protocol/errors.js';
