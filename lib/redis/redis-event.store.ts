import { createHash, randomBytes } from 'node:crypto';
import type { McpEventStore, StoredEvent } from '../protocol/event-store.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import { describeError, type RedisKeys, RedisScripts, type McpRedisClient, type RedisLogger } from './redis-client.js';
import {
  SESSION_STREAMS_DROP,
  STREAM_APPEND,
  STREAM_DROP,
  STREAM_FINISH,
  STREAM_OPEN,
} from './redis-stream-scripts.js';

export interface RedisEventStoreOptions {
  maxEventsPerStream: number;
  /** Bytes of events kept per stream (`limits.eventStoreBytesPerStream`); the oldest go first. @default 1048576 */
  maxBytesPerStream?: number;
  /** Bytes of events kept per session, across its streams (`limits.eventStoreBytesPerSession`); its least recently written stream loses its oldest first. @default 4194304 */
  maxBytesPerSession?: number;
  /** Bytes of events kept in all, by every instance sharing the key prefix (`limits.eventStoreBytesTotal`); the least recently written stream loses its oldest first. @default 67108864 */
  maxBytesTotal?: number;
  ttlMs: number;
  /** This instance's id, recorded as the owner of the streams it opens. */
  instanceId: string;
  logger?: RedisLogger;
  /** Publish with SPUBLISH (sharded pub/sub) rather than PUBLISH. @default false */
  shardedPubSub?: boolean;
}

const TAG_LENGTH = 8;
/** Redis entry ids, or `0` for the priming event (before every entry). */
const POSITION = /^\d{1,20}(-\d{1,20})?$/;

/**
 * Binds a stream to its session without storing anything: the stream id starts with a digest of
 * the session id, so a stream can be checked against a session even after its metadata expired,
 * and a Last-Event-ID from another session never matches.
 */
export function sessionTag(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('base64url').slice(0, TAG_LENGTH);
}

export function newStreamId(sessionId: string): string {
  return sessionTag(sessionId) + randomBytes(9).toString('base64url');
}

/** Splits `<streamId>.<position>` and checks that the stream belongs to the session. */
export function parseEventId(sessionId: string, eventId: string): { streamId: string; position: string } | undefined {
  const dot = eventId.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const streamId = eventId.slice(0, dot);
  const position = eventId.slice(dot + 1);
  if (!POSITION.test(position) || streamId.length > 64 || !streamId.startsWith(sessionTag(sessionId))) return undefined;
  return { streamId, position };
}

/**
 * SSE events in Redis Streams, one per SSE stream, capped in events and in bytes per stream, per
 * session and in all, with the in-memory store's order (the oldest go first: of the stream, of the
 * session's least recently written stream, of the least recently written stream overall; a resume
 * after dropped events replays those left, with a gap in the ids) and expiring after `ttlMs`
 * without events; a session's streams are deleted when it is (`dropSession`). The bytes counted are
 * those of each message's JSON; the bounds are checked atomically on each append, so they hold
 * across instances. Event ids are `<streamId>.<redis entry id>`: Redis assigns entry ids in order,
 * so ids stay unique and ordered when another instance continues a stream, even after the key
 * expired and was created again.
 *
 * @publicApi
 */
export class RedisEventStore implements McpEventStore {
  private readonly scripts: RedisScripts;

  constructor(
    private readonly client: McpRedisClient,
    private readonly keys: RedisKeys,
    private readonly options: RedisEventStoreOptions,
  ) {
    this.scripts = new RedisScripts(client, options.shardedPubSub);
  }

  /**
   * Synchronous, as the interface requires: the id is random, and the metadata write is queued on
   * the connection ahead of any append or read of the stream.
   */
  openStream(sessionId: string): string {
    const streamId = newStreamId(sessionId);
    this.scripts
      .run(
        STREAM_OPEN,
        [this.keys.streamMeta(streamId), this.keys.sessionStreams(sessionId)],
        [streamId, 'p', this.options.instanceId, this.options.ttlMs, sessionId],
      )
      .catch((error) =>
        this.options.logger?.warn(`Could not record SSE stream ${streamId} in Redis: ${describeError(error)}`),
      );
    return streamId;
  }

  async append(streamId: string, message: JsonRpcMessage): Promise<string> {
    const keys = [
      this.keys.eventClock,
      this.keys.stream(streamId),
      this.keys.streamMeta(streamId),
      ...this.keys.eventAccounting,
    ];
    const id = (await this.scripts.run(STREAM_APPEND, keys, [
      streamId,
      JSON.stringify(message),
      this.options.maxEventsPerStream,
      this.options.ttlMs,
      this.options.maxBytesPerStream ?? 1024 * 1024,
      this.options.maxBytesPerSession ?? 4 * 1024 * 1024,
      this.options.maxBytesTotal ?? 64 * 1024 * 1024,
    ])) as string;
    return `${streamId}.${id}`;
  }

  async replay(
    sessionId: string,
    lastEventId: string,
  ): Promise<{ streamId: string; events: StoredEvent[] } | undefined> {
    const parsed = parseEventId(sessionId, lastEventId);
    if (!parsed) return undefined;
    const [exists, entries] = await Promise.all([
      this.client.call(
        'EXISTS',
        this.keys.stream(parsed.streamId),
        this.keys.streamMeta(parsed.streamId),
      ) as Promise<number>,
      this.client.call('XRANGE', this.keys.stream(parsed.streamId), `(${parsed.position}`, '+') as Promise<
        RedisStreamEntry[]
      >,
    ]);
    if (exists === 0) return undefined;
    return { streamId: parsed.streamId, events: toEvents(parsed.streamId, entries) };
  }

  async finish(streamId: string): Promise<void> {
    if (!streamId) return;
    await this.scripts.run(
      STREAM_FINISH,
      [this.keys.streamMeta(streamId), this.keys.relayChannel],
      [streamId, this.options.ttlMs],
    );
  }

  async dropSession(sessionId: string): Promise<void> {
    try {
      const keys = [
        this.keys.sessionStreams(sessionId),
        this.keys.sessionEvents(sessionId),
        this.keys.sessionBytes(sessionId),
      ];
      await this.scripts.run(SESSION_STREAMS_DROP, keys, [sessionId]);
    } catch (error) {
      this.options.logger?.warn(
        `Could not delete the SSE streams of an ended session from Redis (they expire on their own): ${describeError(error)}`,
      );
    }
  }

  async dropStream(streamId: string): Promise<void> {
    try {
      await this.scripts.run(
        STREAM_DROP,
        [this.keys.stream(streamId), this.keys.streamMeta(streamId), this.keys.relayChannel],
        [streamId],
      );
    } catch (error) {
      this.options.logger?.warn(
        `Could not delete the SSE stream of a cancelled call from Redis (it expires on its own): ${describeError(error)}`,
      );
    }
  }

  /** Bytes of events held in all (each message's JSON), by every instance on this key prefix, for monitoring. */
  async storedBytes(): Promise<number> {
    return Number((await this.client.call('GET', this.keys.eventTotal)) ?? 0);
  }

  /** Bytes of events held for one session, across its streams. */
  async sessionBytes(sessionId: string): Promise<number> {
    return Number((await this.client.call('GET', this.keys.sessionBytes(sessionId))) ?? 0);
  }

  /** The connection belongs to the Redis backend, which closes it. */
  close(): void {}
}

/** An XRANGE entry: [id, [field, value, ...]]. */
export type RedisStreamEntry = [string, string[]];

export function toEvents(streamId: string, entries: RedisStreamEntry[]): StoredEvent[] {
  const events: StoredEvent[] = [];
  for (const [id, fields] of entries) {
    const index = fields.indexOf('m');
    if (index < 0) continue;
    try {
      events.push({ id: `${streamId}.${id}`, message: JSON.parse(fields[index + 1]) as JsonRpcMessage });
    } catch {
      // A corrupt entry is skipped rather than ending the stream.
    }
  }
  return events;
}
