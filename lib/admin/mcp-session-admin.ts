import { Inject, Injectable } from '@nestjs/common';
import { MCP_HTTP_HANDLER, MCP_SESSION_OPTIONS, MCP_SESSION_STORE } from '../common/mcp.constants.js';
import type { ResolvedMcpSessionOptions } from '../engine/session-options.js';
import type { McpSession, McpSessionStore } from '../protocol/session-store.js';
import { MCP_REDIS, type McpRedisBackend } from '../redis/redis-backend.js';
import type { McpHttpHandler } from '../transport/http-handler.js';

/**
 * One live legacy session as the admin view shows it. Never its state, its subscriptions or any
 * token: only what tells who holds it and for how long.
 *
 * @publicApi
 */
export interface McpSessionSummary {
  id: string;
  /** The authenticated principal's id (with `auth`); undefined for anonymous sessions. */
  principal?: string;
  protocolVersion: string;
  /** The client's `clientInfo` name, version and title. */
  clientInfo?: { name: string; version: string; title?: string };
  /** When it opened (ISO 8601); undefined for sessions opened before the admin view existed. */
  createdAt?: string;
  /** Milliseconds since it opened. */
  ageMs?: number;
  /** SSE streams this instance holds for it (its GET stream, running call streams, resumes). */
  openStreams: number;
  /** Whether it has a GET stream open: on any instance with `redis`, else on this one. */
  getStream: boolean;
}

/**
 * The live legacy sessions, for the people on call: list them (across instances with `redis`)
 * and close one (its streams and calls end, and `sessions.onSessionClose` runs with reason
 * `closed`). Inject it in the app's own admin controller, or serve the read-only routes of
 * `McpModule.forRoot({ adminRoutes })`.
 *
 * @publicApi
 */
@Injectable()
export class McpSessionAdmin {
  constructor(
    @Inject(MCP_SESSION_STORE) private readonly store: McpSessionStore,
    @Inject(MCP_HTTP_HANDLER) private readonly handler: McpHttpHandler,
    @Inject(MCP_SESSION_OPTIONS) private readonly sessions: ResolvedMcpSessionOptions,
    @Inject(MCP_REDIS) private readonly redis: McpRedisBackend | null,
  ) {}

  /** Live sessions, at most `limit` (default: `sessions.maxSessions`, every one). */
  async list(options: { limit?: number } = {}): Promise<McpSessionSummary[]> {
    const limit = Math.max(0, Math.min(options.limit ?? this.sessions.maxSessions, this.sessions.maxSessions));
    const sessions = (await this.store.list?.(limit)) ?? [];
    const remote = this.redis ? await this.redis.relay.hasGetStreams(sessions.map((s) => s.id)) : undefined;
    const now = Date.now();
    return sessions.map((session, i) => this.summary(session, now, remote?.[i]));
  }

  /** One live session, or undefined. */
  async find(sessionId: string): Promise<McpSessionSummary | undefined> {
    return (await this.list()).find((session) => session.id === sessionId);
  }

  /** Ends a session, whoever owns it. False when no live session has that id. */
  close(sessionId: string): Promise<boolean> {
    return this.handler.closeSession(sessionId);
  }

  private summary(session: McpSession, now: number, remoteGetStream: boolean | undefined): McpSessionSummary {
    const openStreams = this.handler.openStreams(session.id);
    const summary: McpSessionSummary = {
      id: session.id,
      protocolVersion: session.protocolVersion,
      openStreams,
      getStream: remoteGetStream ?? openStreams > 0,
    };
    if (session.principal !== undefined) summary.principal = session.principal;
    const info = session.clientInfo;
    if (info) {
      // Client-sent: bounded, so that 10,000 sessions with 16 KiB clientInfo each cannot make one listing 160 MiB.
      summary.clientInfo = { name: clientText(info.name), version: clientText(info.version) };
      if (typeof info.title === 'string') summary.clientInfo.title = clientText(info.title);
    }
    if (session.createdAt !== undefined) {
      summary.createdAt = new Date(session.createdAt).toISOString();
      summary.ageMs = Math.max(0, now - session.createdAt);
    }
    return summary;
  }
}

/** Longest client-sent text the view shows (as OpenTelemetry spans and McpEvents cap client names). */
const MAX_CLIENT_TEXT = 128;

function clientText(value: unknown): string {
  const text = String(value);
  return text.length > MAX_CLIENT_TEXT ? `${text.slice(0, MAX_CLIENT_TEXT)}…` : text;
}
