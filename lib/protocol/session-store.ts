import { randomBytes } from 'node:crypto';
import type { Implementation, JsonObject, LogLevel } from './mcp-types.js';

/** What a legacy (initialize-based) session remembers between requests. Keep it small. */
export interface McpSession {
  id: string;
  protocolVersion: string;
  capabilities: JsonObject;
  clientInfo?: Implementation;
  logLevel?: LogLevel;
  /** Set by authorization so that another principal cannot use this session id. */
  principal?: string;
  /**
   * Who the session counts against: `principal:<id>` for an authenticated caller, else
   * `address:<client address>`. Stores cap sessions per owner (see {@link McpSessionCreateOptions}).
   */
  owner?: string;
  /** Resource URIs this session subscribed to (`resources/subscribe`). */
  subscriptions?: string[];
  /** When `initialize` opened it (ms since the epoch), for the admin view's age. */
  createdAt?: number;
  /**
   * The app's per-session state: seeded by `sessions.onSession`, read and written by handlers
   * through `ctx.state()`. JSON only, at most `limits.sessionStateBytes` serialized.
   */
  state?: JsonObject;
}

/** The fields of a session that requests change after `initialize`, each on its own. */
export type McpSessionField = 'logLevel' | 'subscriptions' | 'state';

/** Why a session ended without a DELETE. */
export type McpSessionEndReason = 'expired' | 'evicted';

/** The bounds `create` enforces. */
export interface McpSessionCreateOptions {
  /**
   * Most live sessions of `session.owner`. At it, `create` ends that owner's least recently used
   * session (an expired one first), never another owner's.
   */
  maxPerOwner: number;
}

/**
 * What `create` did. `created: false` means the store holds its total maximum of live sessions
 * and none had expired: the caller is refused (HTTP 503) instead of evicting anyone.
 */
export type McpSessionCreateResult = { created: true } | { created: false; reason: 'capacity' };

/**
 * Where legacy sessions live. The default keeps them in this process; a shared store lets several
 * instances serve one session. Implementations must expire idle sessions after `idleTtlMs`.
 *
 * Caps: `create` receives the per-owner cap and must end only the new session's owner's sessions
 * to honour it; at its total capacity it drops expired sessions and otherwise refuses (returns
 * `{ created: false }`). A store written before caps existed (returning nothing) keeps working.
 *
 * @publicApi
 */
export interface McpSessionStore {
  /**
   * Stores a new session, within the per-owner cap of `limits` (ending the owner's own least
   * recently used session beyond it) and the store's total capacity (refusing beyond it).
   */
  create(
    session: McpSession,
    limits?: McpSessionCreateOptions,
  ): Promise<McpSessionCreateResult | void> | McpSessionCreateResult | void;
  /** Returns the session and refreshes its idle timer, or undefined when unknown or expired. */
  get(id: string): Promise<McpSession | undefined> | McpSession | undefined;
  /**
   * Stores a live session's `changed` fields (every field when absent), leaving the others as
   * stored: a concurrent request of the same session may have changed them (a subscription made
   * while a long call writes its state). Never brings back a session that ended. Returns false
   * when there is no live session by that id; a store that returns nothing counts as stored.
   */
  update(session: McpSession, changed?: readonly McpSessionField[]): Promise<boolean | void> | boolean | void;
  /** Ends a session. Returns false when it did not exist. */
  delete(id: string): Promise<boolean> | boolean;
  /**
   * Tells the transport about sessions the store ended by itself (idle expiry, eviction beyond an
   * owner's cap), so that their streams and calls end too. Returns an unsubscribe function.
   */
  onSessionEnd?(listener: (sessionId: string, reason: McpSessionEndReason, session?: McpSession) => void): () => void;
  /**
   * The live sessions, for the admin view (`McpSessionAdmin`); at most `limit` of them. A store
   * without it makes the admin view list nothing.
   */
  list?(limit: number): Promise<McpSession[]> | McpSession[];
  /** Releases timers and connections. */
  close?(): Promise<void> | void;
}

export interface InMemorySessionStoreOptions {
  idleTtlMs: number;
  /** Most live sessions in all; beyond it `create` refuses (after dropping expired ones). */
  maxSessions: number;
  onEvict?: (session: McpSession, reason: 'expired' | 'capacity') => void;
  /** The clock (tests). @default Date.now */
  now?: () => number;
}

interface Entry {
  session: McpSession;
  expiresAt: number;
}

/**
 * Sessions in a Map kept in least-recently-used order (a touch re-inserts), so the expiry sweep
 * starts from the oldest entry and stops early. Each owner's sessions are a second Map in the same
 * order, so ending an owner's least recently used session is O(1) too.
 */
export class InMemorySessionStore implements McpSessionStore {
  private readonly entries = new Map<string, Entry>();
  private readonly byOwner = new Map<string, Map<string, Entry>>();
  private readonly listeners = new Set<
    (sessionId: string, reason: McpSessionEndReason, session?: McpSession) => void
  >();
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(private readonly options: InMemorySessionStoreOptions) {
    this.now = options.now ?? Date.now;
    const every = Math.max(1000, Math.min(options.idleTtlMs, 60_000));
    this.sweeper = setInterval(() => this.sweep(this.now()), every);
    this.sweeper.unref();
  }

  get size(): number {
    return this.entries.size;
  }

  create(session: McpSession, limits?: McpSessionCreateOptions): McpSessionCreateResult {
    const now = this.now();
    const owned = session.owner !== undefined ? this.byOwner.get(session.owner) : undefined;
    if (owned && limits) {
      // In LRU order an expired session is always older than a live one: first is idle-first.
      while (owned.size >= limits.maxPerOwner) {
        const oldest = owned.keys().next().value as string;
        const entry = owned.get(oldest)!;
        this.end(oldest, entry, entry.expiresAt <= now ? 'expired' : 'evicted');
      }
    }
    if (this.entries.size >= this.options.maxSessions) this.sweep(now);
    if (this.entries.size >= this.options.maxSessions) return { created: false, reason: 'capacity' };
    const entry: Entry = { session, expiresAt: now + this.options.idleTtlMs };
    this.entries.set(session.id, entry);
    if (session.owner !== undefined) {
      let mine = this.byOwner.get(session.owner);
      if (!mine) this.byOwner.set(session.owner, (mine = new Map()));
      mine.set(session.id, entry);
    }
    return { created: true };
  }

  get(id: string): McpSession | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    const now = this.now();
    if (entry.expiresAt <= now) {
      this.end(id, entry, 'expired');
      return undefined;
    }
    entry.expiresAt = now + this.options.idleTtlMs;
    this.entries.delete(id);
    this.entries.set(id, entry);
    const owned = entry.session.owner !== undefined ? this.byOwner.get(entry.session.owner) : undefined;
    if (owned) {
      owned.delete(id);
      owned.set(id, entry);
    }
    return entry.session;
  }

  update(session: McpSession, changed?: readonly McpSessionField[]): boolean {
    const entry = this.entries.get(session.id);
    if (!entry) return false;
    if (changed) patchSession(entry.session, session, changed);
    // The owner is fixed at creation: the per-owner index is keyed by it.
    else entry.session = session.owner === entry.session.owner ? session : { ...session, owner: entry.session.owner };
    return true;
  }

  delete(id: string): boolean {
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.remove(id, entry);
    return true;
  }

  onSessionEnd(listener: (sessionId: string, reason: McpSessionEndReason, session?: McpSession) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  list(limit: number): McpSession[] {
    const now = this.now();
    const live: McpSession[] = [];
    for (const entry of this.entries.values()) {
      if (live.length >= limit) break;
      if (entry.expiresAt > now) live.push(entry.session);
    }
    return live;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.byOwner.clear();
    this.listeners.clear();
  }

  private sweep(now: number): void {
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now) break;
      this.end(id, entry, 'expired');
    }
  }

  private end(id: string, entry: Entry, reason: McpSessionEndReason): void {
    this.remove(id, entry);
    this.options.onEvict?.(entry.session, reason === 'expired' ? 'expired' : 'capacity');
    for (const listener of this.listeners) listener(id, reason, entry.session);
  }

  private remove(id: string, entry: Entry): void {
    this.entries.delete(id);
    const owner = entry.session.owner;
    const owned = owner !== undefined ? this.byOwner.get(owner) : undefined;
    if (owned) {
      owned.delete(id);
      if (owned.size === 0) this.byOwner.delete(owner!);
    }
  }
}

/** Copies the `changed` fields of `from` onto `into` (a field `from` lacks is removed). */
export function patchSession(into: McpSession, from: McpSession, changed: readonly McpSessionField[]): void {
  if (into === from) return;
  for (const field of changed) {
    if (from[field] === undefined) delete into[field];
    else (into as unknown as Record<string, unknown>)[field] = from[field];
  }
}

/** 128 random bits, base64url: globally unique and visible ASCII as the spec requires. */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}
