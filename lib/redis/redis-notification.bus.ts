import {
  changeNotificationMethod,
  type McpChangeEvent,
  type McpNotificationBus,
} from '../protocol/notification-bus.js';
import { describeError, type RedisKeys, RedisScripts, type McpRedisClient, type RedisLogger } from './redis-client.js';
import { BUS_PUBLISH } from './redis-stream-scripts.js';

export interface RedisNotificationBusOptions {
  maxEventsPerStream: number;
  streamTtlMs: number;
  logger?: RedisLogger;
  /** Publish with SPUBLISH (sharded pub/sub) rather than PUBLISH. @default false */
  shardedPubSub?: boolean;
}

/**
 * Change events across instances. `publish` runs one script that appends the notification to
 * the GET stream of every legacy session that wants it (so the event is stored once, even for a
 * stream no instance holds right now) and publishes the event on a channel that every instance's
 * `subscriptions/listen` streams hear. Legacy GET streams are therefore not fed by the local
 * listeners: they are tails of the stored streams (see RedisRelay).
 *
 * @publicApi
 */
export class RedisNotificationBus implements McpNotificationBus {
  private readonly scripts: RedisScripts;
  private readonly listeners = new Set<(event: McpChangeEvent) => void>();

  constructor(
    client: McpRedisClient,
    private readonly keys: RedisKeys,
    private readonly options: RedisNotificationBusOptions,
  ) {
    this.scripts = new RedisScripts(client, options.shardedPubSub);
  }

  /** Never rejects: a change that cannot be announced is logged, not thrown at the registry. */
  async publish(event: McpChangeEvent): Promise<void> {
    const notification =
      event.type === 'resource-updated'
        ? { jsonrpc: '2.0', method: changeNotificationMethod(event), params: { uri: event.uri } }
        : { jsonrpc: '2.0', method: changeNotificationMethod(event) };
    try {
      await this.scripts.run(
        BUS_PUBLISH,
        [this.keys.getStreams],
        [
          JSON.stringify(event),
          JSON.stringify(notification),
          event.type === 'resource-updated' ? 'resource' : 'list',
          event.type === 'resource-updated' ? event.uri : '',
          this.options.maxEventsPerStream,
          this.options.streamTtlMs,
        ],
      );
    } catch (error) {
      this.options.logger?.error(
        `Could not publish the change "${changeNotificationMethod(event)}" through Redis: ${describeError(error)}`,
      );
    }
  }

  subscribe(listener: (event: McpChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called by the backend for each message on the bus channel. @internal */
  dispatch(raw: string): void {
    let event: McpChangeEvent;
    try {
      event = JSON.parse(raw) as McpChangeEvent;
    } catch {
      return;
    }
    if (!isChangeEvent(event)) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.options.logger?.error(`A change listener failed: ${describeError(error)}`, (error as Error)?.stack);
      }
    }
  }

  /** The connections belong to the Redis backend, which closes them. */
  close(): void {
    this.listeners.clear();
  }
}

function isChangeEvent(value: unknown): value is McpChangeEvent {
  if (typeof value !== 'object' || value === null) return false;
  const event = value as { type?: unknown; kind?: unknown; uri?: unknown };
  if (event.type === 'resource-updated') return typeof event.uri === 'string';
  return (
    event.type === 'list-changed' && (event.kind === 'tools' || event.kind === 'prompts' || event.kind === 'resources')
  );
}
