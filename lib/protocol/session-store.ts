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
  /** Resource URIs this session subscribed to (`resources/subscribe`). */
  subscriptions?: string[];
}

/**
 * Where legacy sessions live. The default keeps them in this process; a shared store lets several
 * instances serve one session. Implementations must expire idle sessions after `idleTtlMs`.
 *
 * @publicApi
 */
export interface McpSessionStore {
  /** Stores a new session. May evict the least recently used one when full. */
  create(session: McpSession): Promise<void> | void;
  /** Returns the session and refreshes its idle timer, or undefined when unknown or expired. */
  get(id: string): Promise<McpSession | undefined> | McpSession | undefined;
  /** Replaces the stored session (for example after `logging/setLevel`). */
  update(session: McpSession): Promise<void> | void;
  /** Ends a session. Returns false when it did not exist. */
  delete(id: string): Promise<boolean> | boolean;
  /** Releases timers and connections. */
  close?(): Promise<void> | void;
}

export interface InMemorySessionStoreOptions {
  idleTtlMs: number;
  maxSessions: number;
  onEvict?: (session: McpSession, reason: 'expired' | 'capacity') => void;
}

interface Entry {
  session: McpSession;
  expiresAt: number;
}

/**
 * Sessions in a Map kept in least-recently-used order (a touch re-inserts), so eviction at
 * capacity and the expiry sweep both start from the oldest entry and stop early.
 */
export class InMemorySessionStore implements McpSessionStore {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: InMemorySessionStoreOptions) {
    const every = Math.max(1000, Math.min(options.idleTtlMs, 60_000));
    this.sweeper = setInterval(() => this.sweep(Date.now()), every);
    this.sweeper.unref();
  }

  get size(): number {
    return this.entries.size;
  }

  create(session: McpSession): void {
    while (this.entries.size >= this.options.maxSessions) {
      const oldest = this.entries.keys().next().value as string | undefined;
      if (oldest === undefined) break;
      const evicted = this.entries.get(oldest)!;
      this.entries.delete(oldest);
      this.options.onEvict?.(evicted.session, 'capacity');
    }
    this.entries.set(session.id, { session, expiresAt: Date.now() + this.options.idleTtlMs });
  }

  get(id: string): McpSession | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    const now = Date.now();
    if (entry.expiresAt <= now) {
      this.entries.delete(id);
      this.options.onEvict?.(entry.session, 'expired');
      return undefined;
    }
    entry.expiresAt = now + this.options.idleTtlMs;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.session;
  }

  update(session: McpSession): void {
    const entry = this.entries.get(session.id);
    if (entry) entry.session = session;
  }

  delete(id: string): boolean {
    return this.entries.delete(id);
  }

  close(): void {
    clearInterval(this.sweeper);
    this.entries.clear();
  }

  private sweep(now: number): void {
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now) break;
      this.entries.delete(id);
      this.options.onEvict?.(entry.session, 'expired');
    }
  }
}

/** 128 random bits, base64url: globally unique and visible ASCII as the spec requires. */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}
