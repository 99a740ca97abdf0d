import { createHash } from 'node:crypto';
import {
  patchSession,
  type McpSession,
  type McpSessionCreateOptions,
  type McpSessionCreateResult,
  type McpSessionEndReason,
  type McpSessionField,
  type McpSessionStore,
} from '../protocol/session-store.js';
import { type RedisKeys, RedisScripts, type McpRedisClient } from './redis-client.js';
import { SESSION_ADMIT, SESSION_DELETE, SESSION_PATCH, SESSION_SWEEP } from './redis-scripts.js';

export interface RedisSessionStoreOptions {
  idleTtlMs: number;
  /** Most live sessions in all; beyond it `create` refuses (after dropping expired ones). */
  maxSessions: number;
  onEvict?: (sessionId: string, reason: 'capacity') => void;
  /** Publish with SPUBLISH (sharded pub/sub) rather than PUBLISH. @default false */
  shardedPubSub?: boolean;
}

/**
 * Legacy sessions in Redis, so that any instance can serve any session. Each session is one JSON
 * string whose TTL is the idle timeout. A request costs one `GETEX` (which refreshes the TTL), then,
 * without waiting for it, one `SET` of the time of use in µs: the remaining TTL is what orders
 * sessions by last use, the time of use breaks ties within a millisecond (TTLs have no finer
 * unit), so no index is written per request. Times of use come from each instance's clock: ties
 * between instances on hosts whose clocks differ rank by those clocks.
 * One lexicographic index names every session by owner, for `maxSessions` and the per-owner cap:
 * `create` writes the session and its entry and reads both counts in one pipelined round trip (4
 * commands), and only when a count is over its cap runs a script that drops expired entries, ends
 * the owner's least recently used sessions, or withdraws the new one when Redis holds
 * `maxSessions` live sessions. Redis expiry does the sweeping (a tailed GET stream of an expired
 * session ends at its next read). Redis tells no one when it expires a key (keyspace notifications
 * need CONFIG SET, which managed Redis often forbids), so each instance reads the index as often
 * as the in-memory store sweeps (every idle TTL, within 1 s to 60 s) and removes the entries whose
 * key is gone: one script removes and returns them, so each expired session is reported (and its
 * close hook run) by exactly one instance, without its state, which expired with the key.
 *
 * @publicApi
 */
export class RedisSessionStore implements McpSessionStore {
  private readonly scripts: RedisScripts;
  private readonly listeners = new Set<
    (sessionId: string, reason: McpSessionEndReason, session?: McpSession) => void
  >();
  private lastUse = 0;
  private readonly sweeper: NodeJS.Timeout;
  private sweeping = false;
  private closed = false;

  constructor(
    private readonly client: McpRedisClient,
    private readonly keys: RedisKeys,
    private readonly options: RedisSessionStoreOptions,
  ) {
    this.scripts = new RedisScripts(client, options.shardedPubSub);
    const every = Math.max(1000, Math.min(options.idleTtlMs, 60_000));
    this.sweeper = setInterval(() => void this.sweep(), every);
    this.sweeper.unref();
  }

  /** This instance's clock in µs, strictly increasing, so two uses here never share a time. */
  private useTime(): number {
    const now = Math.round((performance.timeOrigin + performance.now()) * 1000);
    this.lastUse = now > this.lastUse ? now : this.lastUse + 1;
    return this.lastUse;
  }

  async create(session: McpSession, limits?: McpSessionCreateOptions): Promise<McpSessionCreateResult> {
    const tag = limits && session.owner !== undefined ? ownerTag(session.owner) : '-';
    const member = `${tag}:${session.id}`;
    const index = this.keys.sessionIndex;
    const key = this.keys.session(session.id);
    // Sent back to back, not awaited one by one: one round trip. Not atomic, which the caps do not
    // need: a create that sees a count over its cap settles it in the script below.
    // Creating is a use: its time, kept in the value (no extra command), ranks the session
    // against others used in the same millisecond until a request records a later one.
    const stored: StoredSession = { ...session, usedUs: this.useTime() };
    const [, , owned, total] = (await Promise.all([
      this.client.call('SET', key, JSON.stringify(stored), 'PX', this.options.idleTtlMs),
      this.client.call('ZADD', index, 0, member),
      this.client.call('ZLEXCOUNT', index, `[${tag}:`, `(${tag};`),
      this.client.call('ZCARD', index),
    ])) as [unknown, unknown, number, number];
    // The total counts the heartbeat's '' entry too, so the script also runs at exactly
    // maxSessions: it counts without it.
    if ((tag === '-' || owned <= limits!.maxPerOwner) && total <= this.options.maxSessions) return { created: true };
    const [admitted, evicted, expired] = (await this.scripts.run(
      SESSION_ADMIT,
      [index, key, this.keys.sessionsFull, `${this.keys.prefix}owned:${tag}`],
      [member, tag === '-' ? '' : tag, limits?.maxPerOwner ?? 0, this.options.maxSessions, this.options.idleTtlMs],
    )) as [number, string[], string[]];
    for (const id of evicted) this.options.onEvict?.(id, 'capacity');
    this.ended(evicted, 'evicted');
    this.ended(expired, 'expired');
    return admitted === 1 ? { created: true } : { created: false, reason: 'capacity' };
  }

  onSessionEnd(listener: (sessionId: string, reason: McpSessionEndReason, session?: McpSession) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async get(id: string): Promise<McpSession | undefined> {
    const used = this.useTime();
    const value = (await this.client.call('GETEX', this.keys.session(id), 'PX', this.options.idleTtlMs)) as
      string | null;
    if (value === null) return undefined;
    // Only once the session is known to exist, so that unknown ids leave nothing behind; not
    // awaited, so a request still waits for one round trip (an eviction reads it a round trip
    // later at the earliest: the create that triggers one waits for its own first).
    this.client.call('SET', this.keys.sessionUsed(id), used, 'PX', this.options.idleTtlMs).catch(() => undefined);
    try {
      const { usedUs: _, ...session } = JSON.parse(value) as StoredSession;
      return session;
    } catch {
      return undefined;
    }
  }

  /**
   * Every instance's live sessions: the index names them (the heartbeat's '' entry aside), and
   * one MGET per batch reads them without refreshing their idle timers.
   */
  async list(limit: number): Promise<McpSession[]> {
    const members = ((await this.client.call('ZRANGE', this.keys.sessionIndex, 0, -1)) as string[]).filter(
      (m) => m !== '',
    );
    const sessions: McpSession[] = [];
    for (let i = 0; i < members.length && sessions.length < limit; i += LIST_BATCH) {
      const ids = members.slice(i, i + LIST_BATCH).map((m) => m.slice(m.indexOf(':') + 1));
      const values = (await this.client.call('MGET', ...ids.map((id) => this.keys.session(id)))) as Array<
        string | null
      >;
      for (const value of values) {
        if (value === null || sessions.length >= limit) continue;
        try {
          const { usedUs: _, ...session } = JSON.parse(value) as StoredSession;
          sessions.push(session);
        } catch {
          // A value this version cannot read is left out of the view.
        }
      }
    }
    return sessions;
  }

  /**
   * Replaces a live session only (XX), like the in-memory store. With `changed`, only those fields:
   * the stored value is read, patched and written back if no other write came in between (a
   * script compares), else read again, so that concurrent requests of one session keep each
   * other's fields.
   */
  async update(session: McpSession, changed?: readonly McpSessionField[]): Promise<boolean> {
    const key = this.keys.session(session.id);
    if (!changed)
      return (await this.client.call('SET', key, JSON.stringify(session), 'PX', this.options.idleTtlMs, 'XX')) !== null;
    for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt++) {
      const value = (await this.client.call('GET', key)) as string | null;
      if (value === null) return false;
      const stored = JSON.parse(value) as StoredSession;
      patchSession(stored, session, changed);
      const outcome = (await this.scripts.run(
        SESSION_PATCH,
        [key],
        [value, JSON.stringify(stored), this.options.idleTtlMs],
      )) as number;
      if (outcome !== -1) return outcome === 1;
    }
    throw new Error(
      `session ${session.id} was written by ${PATCH_ATTEMPTS} other requests while this one tried to store its ${changed.join(', ')}; nothing was stored`,
    );
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.scripts.run(
      SESSION_DELETE,
      [this.keys.sessionIndex, this.keys.session(id), this.keys.getStreams, this.keys.sessionsFull],
      [id],
    );
    return result !== null;
  }

  /** Stops the sweep; the connection belongs to the Redis backend, which closes it. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
  }

  /**
   * One pass over the session index, in batches so that no script holds Redis for long: the
   * sessions whose entries this instance removed expired, and are reported here only.
   */
  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      let after = '';
      do {
        const [next, expired] = (await this.scripts.run(
          SESSION_SWEEP,
          [this.keys.sessionIndex],
          [after, SWEEP_BATCH],
        )) as [string, string[]];
        this.ended(expired, 'expired');
        after = next;
      } while (after !== '' && !this.closed);
    } catch {
      // Redis is unreachable: RedisHealth logs the outage once; the next pass finds what this one missed.
    } finally {
      this.sweeping = false;
    }
  }

  private ended(ids: string[], reason: McpSessionEndReason): void {
    for (const id of ids) for (const listener of this.listeners) listener(id, reason);
  }
}

/** Index entries one sweep script reads. */
const SWEEP_BATCH = 500;

/** Reads and compares of one field update before it gives up (each lost only to another write of the session). */
const PATCH_ATTEMPTS = 16;

/** Sessions read per MGET by `list`. */
const LIST_BATCH = 200;

/** A session as stored: with the time of its creation, for ties within a millisecond. */
type StoredSession = McpSession & { usedUs?: number };

/** An owner's name in the session index: fixed length, no separator, the same as SESSION_DELETE computes. */
export function ownerTag(owner: string): string {
  return createHash('sha1').update(owner).digest('hex').slice(0, 16);
}
