import type { McpPrincipal } from '../protocol/principal.js';
import { McpError } from '../protocol/errors.js';
import { httpStatusFor } from '../protocol/errors.js';
import { ErrorCode, failure, type JsonRpcId } from '../protocol/json-rpc.js';
import type { Implementation, JsonObject } from '../protocol/mcp-types.js';
import type { McpSession } from '../protocol/session-store.js';
import type { ProtocolEra } from '../protocol/versions.js';
import type { McpRefusal, McpTransportFacts } from './sink.js';

/**
 * What `sessions.onSession` can read of the connection that opens a session (legacy era:
 * `initialize`) or, on the 2026-07-28 era (which has no session), of each request.
 *
 * @publicApi
 */
export interface McpSessionConnection {
  era: ProtocolEra;
  /** The legacy session being opened; undefined on the 2026-07-28 era. */
  sessionId?: string;
  protocolVersion: string;
  /** The `clientInfo` the client sent (legacy: at `initialize`; 2026-07-28: in `_meta`, when it sent one). */
  clientInfo?: Implementation;
  capabilities: JsonObject;
  /** The authenticated caller (with `auth`): id, scopes, claims. */
  principal?: McpPrincipal;
  /** A request header by lower-case name (none on stdio). */
  header(name: string): string | undefined;
  /** The HTTP request as the app's guards saw it (Express's `req`, Fastify's request); none on stdio. */
  request?: unknown;
}

import type { McpSessionCloseReason } from '../protocol/call-facts.js';

export type { McpSessionCloseReason };

/**
 * What `sessions.onSessionClose` receives. `session` is the ended session with its last stored
 * state; it is undefined when the store no longer had it: a Redis eviction, and a Redis idle
 * expiry, where the state expired with the session's key (the hook then runs on one instance, at
 * its next sweep of the session index: within the idle TTL, at least 1 s and at most 60 s, of the
 * expiry).
 *
 * @publicApi
 */
export interface McpSessionClosed {
  sessionId: string;
  reason: McpSessionCloseReason;
  session?: Readonly<McpSession>;
}

/**
 * Seeds a session's state from its connection. Return the initial state (a JSON object), or
 * nothing for an empty one; throw an `McpError` to refuse the connection with its code.
 *
 * @publicApi
 */
export type McpOnSession = (connection: McpSessionConnection) => JsonObject | void | Promise<JsonObject | void>;

/** Runs when a legacy session ends (the seeds' `handle_close`). @publicApi */
export type McpOnSessionClose = (closed: McpSessionClosed) => void | Promise<void>;

/** The hooks and bounds of session state, as the engine takes them. @internal */
export interface SessionHooksOptions {
  onSession?: McpOnSession;
  onSessionClose?: McpOnSessionClose;
  /** Most bytes of one session's state, serialized. */
  stateBytes: number;
  logger?: { error(message: string, trace?: string): void };
}

/**
 * Runs the app's session hooks: the open hook's answer is checked (a JSON object within
 * `limits.sessionStateBytes`), a close hook's failure is logged and never reaches the client.
 * @internal
 */
export class SessionHooks {
  constructor(readonly options: SessionHooksOptions) {}

  get seeds(): boolean {
    return this.options.onSession !== undefined;
  }

  /** The initial state for a connection; throws an McpError to refuse it. */
  async open(connection: McpSessionConnection): Promise<JsonObject> {
    const hook = this.options.onSession;
    if (!hook) return {};
    let seeded: JsonObject | void;
    try {
      seeded = await hook(connection);
    } catch (error) {
      if (error instanceof McpError) throw error;
      this.options.logger?.error(
        `sessions.onSession failed: ${error instanceof Error ? error.message : String(error)}`,
        error instanceof Error ? error.stack : undefined,
      );
      throw new McpError(
        ErrorCode.InternalError,
        'Internal error: the server could not open the session (its sessions.onSession hook failed; the server log has the reason).',
      );
    }
    if (seeded === undefined || seeded === null) return {};
    if (typeof seeded !== 'object' || Array.isArray(seeded)) {
      throw new McpError(
        ErrorCode.InternalError,
        'Internal error: sessions.onSession must return a plain object (the initial session state) or nothing.',
      );
    }
    return checkState(seeded, this.options.stateBytes, 'sessions.onSession returned');
  }

  /** The initial state for a connection, or the refusal the hook's McpError makes of it. */
  async seed(connection: McpSessionConnection, id: JsonRpcId | null): Promise<{ state: JsonObject } | McpRefusal> {
    try {
      return { state: await this.open(connection) };
    } catch (error) {
      if (!(error instanceof McpError)) throw error;
      return { status: error.httpStatus ?? httpStatusFor(error.code), body: failure(id, error.code, error.message) };
    }
  }

  /** Runs the close hook without letting it fail the caller. */
  closed(closed: McpSessionClosed): void {
    const hook = this.options.onSessionClose;
    if (!hook) return;
    const report = (error: unknown): void =>
      this.options.logger?.error(
        `sessions.onSessionClose failed for a session ended by "${closed.reason}": ${error instanceof Error ? error.message : String(error)}`,
        error instanceof Error ? error.stack : undefined,
      );
    try {
      const outcome = hook(closed);
      if (outcome instanceof Promise) outcome.catch(report);
    } catch (error) {
      report(error);
    }
  }
}

/** `state` as JSON, within `max` bytes: a copy, so later edits of the caller's object change nothing stored. */
export function checkState(state: unknown, max: number, what: string): JsonObject {
  let text: string;
  try {
    text = JSON.stringify(state);
  } catch (error) {
    throw new McpError(
      ErrorCode.InternalError,
      `${what} a session state that is not JSON (${error instanceof Error ? error.message : String(error)}). Keep only JSON values in session state.`,
    );
  }
  if (typeof state !== 'object' || state === null || Array.isArray(state) || text === undefined) {
    throw new McpError(
      ErrorCode.InternalError,
      `${what} a session state that is not a JSON object. Session state is one object.`,
    );
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > max) {
    throw new McpError(
      ErrorCode.InternalError,
      `${what} a session state of ${bytes} bytes, over the ${max}-byte limit (limits.sessionStateBytes). Keep less per session (store large data elsewhere and keep its key), or raise McpModule's limits.sessionStateBytes.`,
    );
  }
  return JSON.parse(text) as JsonObject;
}

/** What the open hook reads of a connection: the transport's facts and the request's protocol facts. */
export function connectionOf(
  facts: McpTransportFacts,
  opened: Pick<McpSessionConnection, 'era' | 'sessionId' | 'protocolVersion' | 'clientInfo' | 'capabilities'>,
): McpSessionConnection {
  return {
    era: opened.era,
    sessionId: opened.sessionId,
    protocolVersion: opened.protocolVersion,
    clientInfo: opened.clientInfo,
    capabilities: opened.capabilities,
    principal: facts.principal,
    header: (name) => facts.header(name),
    request: facts.transportRequest,
  };
}
