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
  /**
   * Events after `lastEventId` on its stream, if the id is known and belongs to the session.
   * A bounded store may have dropped some of them: it returns those it still has.
   */
  replay(
    sessionId: string,
    lastEventId: string,
  ):
    | Promise<{ streamId: string; events: StoredEvent[] } | undefined>
    | { streamId: string; events: StoredEvent[] }
    | undefined;
  /** Marks a stream finished (its response was sent); it is kept for replay until it expires. */
  finish?(streamId: string): void | Promise<void>;
  /**
   * Forgets every event of a session that ended (DELETE): nothing of it can be replayed any more,
   * and what it held is released at once rather than when it expires.
   */
  dropSession?(sessionId: string): void | Promise<void>;
  /**
   * Forgets the events of one stream whose call was cancelled (its client went away, or sent
   * `notifications/cancelled`): no response will ever follow them, so nothing is worth a resume,
   * and what they held is released at once rather than when the stream expires.
   */
  dropStream?(streamId: string): void | Promise<void>;
  close?(): void | Promise<void>;
}

export interface InMemoryEventStoreOptions {
  /** Events kept per stream (older ones are dropped). @default 1000 */
  maxEventsPerStream?: number;
  /** Streams kept in all; the oldest is dropped beyond it. @default 10000 */
  maxStreams?: number;
  /** How long a stream stays replayable after its last event. @default 300000 (5 minutes) */
  ttlMs?: number;
  /** Bytes of events kept per stream (`limits.eventStoreBytesPerStream`). @default 1048576 (1 MiB) */
  maxBytesPerStream?: number;
  /** Bytes of events kept per session, across its streams (`limits.eventStoreBytesPerSession`). @default 4194304 (4 MiB) */
  maxBytesPerSession?: number;
  /** Bytes of events kept in all (`limits.eventStoreBytesTotal`). @default 67108864 (64 MiB) */
  maxBytesTotal?: number;
}

/**
 * An event as held: its JSON text, not the message object, so that what the byte bounds count
 * is what the store keeps alive (a message object would also pin every string the handler put
 * in it, and weighs several times its JSON when it has many small fields).
 */
interface HeldEvent {
  id: string;
  data: string;
  seq: number;
  bytes: number;
}

/** Bookkeeping counted per event on top of its JSON and id: the record, its array slot, the id's header. */
const EVENT_OVERHEAD_BYTES = 160;

interface StreamRecord {
  sessionId: string;
  seq: number;
  events: HeldEvent[];
  bytes: number;
  expiresAt: number;
}

interface SessionRecord {
  streams: Set<string>;
  bytes: number;
}

/**
 * Bounded in-process event store: capped per stream in events and bytes, per session and in all
 * in bytes, in stream count, and in time. An event counts its JSON text (which is what it keeps),
 * its id and 160 bytes of bookkeeping, so that the byte bounds bound the heap it holds (measured:
 * 15.8 MiB of heap for a 16 MiB bound filled with small events). Beyond a byte cap the oldest
 * events go first (of the
 * stream, of the session's least recently written stream, of the least recently written stream
 * overall). A client that resumes after dropped events gets the events that are left after its
 * `Last-Event-ID`: it sees a gap in the event numbers, not an error. When the whole stream is
 * gone, the resume is answered like an unknown id (a fresh stream).
 *
 * @publicApi
 */
export class InMemoryEventStore implements McpEventStore {
  private readonly streams = new Map<string, StreamRecord>();
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly limits: Required<InMemoryEventStoreOptions>;
  private bytes = 0;

  constructor(options: InMemoryEventStoreOptions = {}) {
    this.limits = {
      maxEventsPerStream: options.maxEventsPerStream ?? 1000,
      maxStreams: options.maxStreams ?? 10_000,
      ttlMs: options.ttlMs ?? 5 * 60_000,
      maxBytesPerStream: options.maxBytesPerStream ?? 1024 * 1024,
      maxBytesPerSession: options.maxBytesPerSession ?? 4 * 1024 * 1024,
      maxBytesTotal: options.maxBytesTotal ?? 64 * 1024 * 1024,
    };
  }

  /** Bytes of events held in all (each event's JSON, its id and 160 bytes of bookkeeping), for monitoring. */
  get storedBytes(): number {
    return this.bytes;
  }

  openStream(sessionId: string): string {
    this.prune();
    const streamId = randomBytes(9).toString('base64url');
    this.streams.set(streamId, { sessionId, seq: 0, events: [], bytes: 0, expiresAt: Date.now() + this.limits.ttlMs });
    let session = this.sessions.get(sessionId);
    if (!session) this.sessions.set(sessionId, (session = { streams: new Set(), bytes: 0 }));
    session.streams.add(streamId);
    return streamId;
  }

  append(streamId: string, message: JsonRpcMessage): string {
    const stream = this.streams.get(streamId);
    const seq = stream ? ++stream.seq : 0;
    const id = `${streamId}.${seq}`;
    if (!stream) return id;
    const data = JSON.stringify(message);
    const bytes = Buffer.byteLength(data) + id.length + EVENT_OVERHEAD_BYTES;
    stream.events.push({ id, data, seq, bytes });
    stream.bytes += bytes;
    this.bytes += bytes;
    const session = this.sessions.get(stream.sessionId)!;
    session.bytes += bytes;
    while (
      (stream.events.length > this.limits.maxEventsPerStream || stream.bytes > this.limits.maxBytesPerStream) &&
      this.dropOldest(stream)
    );
    stream.expiresAt = Date.now() + this.limits.ttlMs;
    this.streams.delete(streamId);
    this.streams.set(streamId, stream);
    while (session.bytes > this.limits.maxBytesPerSession && this.dropOldest(this.leastRecentOf(session.streams)));
    // Map order is least recently written first (append re-inserts), so the head holds the oldest events.
    while (this.bytes > this.limits.maxBytesTotal && this.dropOldest(this.firstWithEvents()));
    return id;
  }

  replay(sessionId: string, lastEventId: string): { streamId: string; events: StoredEvent[] } | undefined {
    const dot = lastEventId.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const streamId = lastEventId.slice(0, dot);
    const seq = Number(lastEventId.slice(dot + 1));
    const stream = this.streams.get(streamId);
    if (!stream || stream.sessionId !== sessionId || !Number.isInteger(seq) || stream.expiresAt <= Date.now())
      return undefined;
    return {
      streamId,
      events: stream.events
        .filter((e) => e.seq > seq)
        .map(({ id, data }) => ({ id, message: JSON.parse(data) as JsonRpcMessage })),
    };
  }

  dropStream(streamId: string): void {
    this.deleteStream(streamId);
  }

  dropSession(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    for (const streamId of [...session.streams]) this.deleteStream(streamId);
    this.sessions.delete(sessionId);
  }

  close(): void {
    this.streams.clear();
    this.sessions.clear();
    this.bytes = 0;
  }

  /** Of a session's streams that hold events, the least recently written one. */
  private leastRecentOf(ids: Iterable<string>): StreamRecord | undefined {
    let oldest: StreamRecord | undefined;
    for (const id of ids) {
      const stream = this.streams.get(id);
      if (!stream?.events.length) continue;
      if (!oldest || stream.expiresAt < oldest.expiresAt) oldest = stream;
    }
    return oldest;
  }

  private firstWithEvents(): StreamRecord | undefined {
    for (const stream of this.streams.values()) if (stream.events.length) return stream;
    return undefined;
  }

  /** Drops the stream's oldest event; false when there was none (nothing left to drop). */
  private dropOldest(stream: StreamRecord | undefined): boolean {
    const event = stream?.events.shift();
    if (!stream || !event) return false;
    stream.bytes -= event.bytes;
    this.bytes -= event.bytes;
    const session = this.sessions.get(stream.sessionId);
    if (session) session.bytes -= event.bytes;
    return true;
  }

  private deleteStream(streamId: string): void {
    const stream = this.streams.get(streamId);
    if (!stream) return;
    this.streams.delete(streamId);
    this.bytes -= stream.bytes;
    const session = this.sessions.get(stream.sessionId);
    if (!session) return;
    session.bytes -= stream.bytes;
    session.streams.delete(streamId);
    if (session.streams.size === 0) this.sessions.delete(stream.sessionId);
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, stream] of this.streams) {
      if (stream.expiresAt > now && this.streams.size < this.limits.maxStreams) break;
      this.deleteStream(id);
    }
  }
}
