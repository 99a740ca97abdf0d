import { randomBytes } from 'node:crypto';
import type { JsonRpcMessage } from './json-rpc.js';

export interface StoredEvent {
  id: string;
  message: JsonRpcMessage;
}

/**
 * Keeps the SSE events of legacy sessions so that a client reconnecting with `Last-Event-ID`
 * gets what it missed, from that stream only. Event ids are `<streamId>.<seq>`, unique per session
 * and stream.
 *
 * @publicApi
 */
export interface McpEventStore {
  /** Opens a stream for a session and returns its id. */
  openStream(sessionId: string): Promise<string> | string;
  /** Stores one event and returns its id. */
  append(streamId: string, message: JsonRpcMessage): Promise<string> | string;
  /** Events after `lastEventId` on its stream, if the id is known and belongs to the session. */
  replay(sessionId: string, lastEventId: string): Promise<{ streamId: string; events: StoredEvent[] } | undefined> | { streamId: string; events: StoredEvent[] } | undefined;
  /** Marks a stream finished (its response was sent); it is kept for replay until it expires. */
  finish?(streamId: string): void | Promise<void>;
  close?(): void | Promise<void>;
}

export interface InMemoryEventStoreOptions {
  /** Events kept per stream (older ones are dropped). */
  maxEventsPerStream: number;
  /** Streams kept in all; the oldest is dropped beyond it. */
  maxStreams: number;
  /** How long a stream stays replayable after its last event. */
  ttlMs: number;
}

interface StreamRecord {
  sessionId: string;
  seq: number;
  events: StoredEvent[];
  expiresAt: number;
}

/** Bounded in-process event store: capped per stream, in stream count, and in time. */
export class InMemoryEventStore implements McpEventStore {
  private readonly streams = new Map<string, StreamRecord>();

  constructor(private readonly options: InMemoryEventStoreOptions = { maxEventsPerStream: 1000, maxStreams: 10_000, ttlMs: 5 * 60_000 }) {}

  openStream(sessionId: string): string {
    this.prune();
    const streamId = randomBytes(9).toString('base64url');
    this.streams.set(streamId, { sessionId, seq: 0, events: [], expiresAt: Date.now() + this.options.ttlMs });
    return streamId;
  }

  append(streamId: string, message: JsonRpcMessage): string {
    const stream = this.streams.get(streamId);
    const seq = stream ? ++stream.seq : 0;
    const id = `${streamId}.${seq}`;
    if (!stream) return id;
    stream.events.push({ id, message });
    if (stream.events.length > this.options.maxEventsPerStream) stream.events.shift();
    stream.expiresAt = Date.now() + this.options.ttlMs;
    this.streams.delete(streamId);
    this.streams.set(streamId, stream);
    return id;
  }

  replay(sessionId: string, lastEventId: string): { streamId: string; events: StoredEvent[] } | undefined {
    const dot = lastEventId.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const streamId = lastEventId.slice(0, dot);
    const seq = Number(lastEventId.slice(dot + 1));
    const stream = this.streams.get(streamId);
    if (!stream || stream.sessionId !== sessionId || !Number.isInteger(seq) || stream.expiresAt <= Date.now()) return undefined;
    return { streamId, events: stream.events.filter((e) => Number(e.id.slice(dot + 1)) > seq) };
  }

  close(): void {
    this.streams.clear();
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, stream] of this.streams) {
      if (stream.expiresAt > now && this.streams.size < this.options.maxStreams) break;
      this.streams.delete(id);
    }
  }
}
