import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import { McpConnection, type McpMessageOutput } from '../engine/connection.js';
import { addressOwner } from '../protocol/principal.js';
import type { McpSessionCloseReason, SessionHooks } from '../engine/session-hooks.js';
import type { McpBodyOutcome, McpScopeCheck } from '../engine/sink.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import { ErrorCode, failure, type JsonRpcMessage } from '../protocol/json-rpc.js';
import type { LogLevel } from '../protocol/mcp-types.js';
import type { McpChangeEvent } from '../protocol/notification-bus.js';
import { serializeMessage } from '../protocol/serialize.js';
import { newSessionId } from '../protocol/session-store.js';
import type { ResolvedMcpLimits } from '../engine/limits.js';
import { NodeResponseSink } from './node-sink.js';
import { SSE_HEADERS, limitSseBuffer, writeFlushed } from './sse.js';

/**
 * Where the legacy HTTP+SSE transport (protocol revision 2024-11-05) is served, relative to the
 * app's global prefix. @publicApi
 */
export interface McpLegacySseOptions {
  /** The GET route that opens a session's event stream. @default 'sse' */
  path?: string;
  /** The POST route the `endpoint` event announces (with `?sessionId=`). @default 'messages' */
  messagesPath?: string;
  /**
   * The former name of McpModule's `limits.maxRequestsInFlight` (one bound for every transport):
   * when set, it sets that option. This transport answers every POST with 202 at once and the
   * result later on the stream, so a request past the bound is answered on the stream with
   * JSON-RPC `-32000`, and never runs. Notifications and answers to the server's requests are
   * never refused (a cancel or an elicitation answer frees a slot).
   * @deprecated Use `limits.maxRequestsInFlight`.
   */
  maxRequestsInFlight?: number;
}

/** {@link McpLegacySseOptions} with its defaults applied and slashes trimmed. */
export interface ResolvedLegacySseOptions {
  path: string;
  messagesPath: string;
  /** Set only when given: it then sets `limits.maxRequestsInFlight`. */
  maxRequestsInFlight?: number;
}

export function resolveLegacySse(
  option: boolean | McpLegacySseOptions | undefined,
): ResolvedLegacySseOptions | undefined {
  if (option === undefined || option === false) return undefined;
  const given = option === true ? {} : option;
  const trim = (p: string): string => p.replace(/^\/+|\/+$/g, '');
  const resolved: ResolvedLegacySseOptions = {
    path: trim(given.path ?? 'sse'),
    messagesPath: trim(given.messagesPath ?? 'messages'),
  };
  if (given.maxRequestsInFlight !== undefined) {
    if (!Number.isSafeInteger(given.maxRequestsInFlight) || given.maxRequestsInFlight < 1) {
      throw new Error(
        `McpModule legacySse: maxRequestsInFlight is ${JSON.stringify(given.maxRequestsInFlight)}; it must be a positive integer. It is the former name of limits.maxRequestsInFlight (default 32): set that instead, such as limits: { maxRequestsInFlight: 32 }.`,
      );
    }
    resolved.maxRequestsInFlight = given.maxRequestsInFlight;
  }
  if (resolved.path === '' || resolved.messagesPath === '' || resolved.path === resolved.messagesPath) {
    throw new Error(
      `McpModule legacySse: path "${resolved.path}" and messagesPath "${resolved.messagesPath}" must be two different, non-empty routes. Set legacySse: { path: 'sse', messagesPath: 'messages' } or leave both out for those defaults.`,
    );
  }
  return resolved;
}

export interface LegacySseTransportOptions extends ResolvedLegacySseOptions {
  limits: ResolvedMcpLimits;
  /** `sessions.maxSessions`: open legacy streams count against it like sessions do. */
  maxSessions: number;
  keepAliveMs: number;
  defaultLogLevel?: LogLevel;
  checkScopes?: McpScopeCheck;
  /** `sessions.onSession` / `onSessionClose`: each stream's `initialize` is refused or seeded by them. */
  hooks?: SessionHooks;
}

/** Seconds a client refused for `sessions.maxSessions` is asked to wait before retrying. */
const FULL_RETRY_AFTER_S = 30;

/** One open GET stream: the session it is, bound to the principal that opened it. */
interface LegacySseSession {
  id: string;
  owner: string;
  principal: string | null;
  connection: McpConnection;
  /** Where the session's messages go: its event stream. */
  output: McpMessageOutput;
  res: ServerResponse;
  /** Ends the stream and the session; `reason` is what the close hook hears. */
  end(reason?: McpSessionCloseReason): void;
}

/**
 * The HTTP+SSE transport of protocol revision 2024-11-05, for clients that speak only it. A GET
 * opens the event stream and is the session: its first event (`endpoint`) names the URL to POST
 * messages to, every answer and notification comes back on the stream, and the stream closing
 * ends the session and cancels its calls. Each stream drives one {@link McpConnection}, the same
 * engine as stdio and in-process clients. Origin/Host, bearer auth and body reading are the HTTP
 * handler's, as on Streamable HTTP.
 *
 * Sessions live in this process (the stream is the session), so behind several instances the
 * POSTs of a session must reach the instance holding its stream (sticky routing on `sessionId`).
 */
export class LegacySseTransport {
  private readonly sessions = new Map<string, LegacySseSession>();
  /** Open streams per owner, oldest first, for `limits.sessionsPerPrincipal` / `sessionsPerAddress`. */
  private readonly owners = new Map<string, LegacySseSession[]>();

  constructor(
    private readonly server: McpDispatcher,
    private readonly options: LegacySseTransportOptions,
  ) {}

  /** GET on the stream path: opens a session and announces its POST endpoint. */
  open(
    req: IncomingMessage,
    res: ServerResponse,
    principal: McpPrincipal | undefined,
    clientAddress: string | undefined,
  ): void {
    const sink = new NodeResponseSink(res);
    const accept = req.headers.accept;
    if (accept !== undefined && !accept.includes('text/event-stream') && !accept.includes('*/*')) {
      return sink.json(
        406,
        failure(
          null,
          ErrorCode.InvalidRequest,
          'Not Acceptable: the legacy SSE endpoint answers with an event stream. Send Accept: text/event-stream.',
        ),
      );
    }
    if (this.sessions.size >= this.options.maxSessions) {
      return sink.json(
        503,
        failure(
          null,
          ErrorCode.ServerBusy,
          `Server busy: it holds its maximum of ${this.options.maxSessions} legacy SSE sessions (sessions.maxSessions). Retry after ${FULL_RETRY_AFTER_S} s, close unused streams, or raise McpModule's sessions.maxSessions.`,
        ),
        { 'Retry-After': String(FULL_RETRY_AFTER_S) },
      );
    }
    const principalId = principal?.id ?? null;
    const owner = principalId !== null ? `principal:${principalId}` : `address:${addressOwner(clientAddress)}`;
    const cap =
      principalId !== null ? this.options.limits.sessionsPerPrincipal : this.options.limits.sessionsPerAddress;
    // As on Streamable HTTP, an owner at its cap loses its oldest session rather than its newest.
    const held = this.owners.get(owner) ?? [];
    for (const oldest of [...held]) {
      if (held.length < cap) break;
      oldest.end('evicted');
    }
    // What is left are closed sessions whose handlers still run (they ignored the abort): each
    // keeps its place until they settle, or dropping and reopening streams would run handlers
    // past limits.maxRequestsInFlight without end.
    if (held.length >= cap) {
      return sink.json(
        503,
        failure(
          null,
          ErrorCode.ServerBusy,
          `Server busy: ${held.length} closed legacy SSE session(s) of this caller still run handlers, and a caller holds at most ${cap} sessions (limits.${principalId !== null ? 'sessionsPerPrincipal' : 'sessionsPerAddress'}). Retry once they have finished.`,
        ),
        { 'Retry-After': String(FULL_RETRY_AFTER_S) },
      );
    }

    limitSseBuffer(res, this.options.limits.sseBufferBytes);
    const id = newSessionId();
    const write = (data: string): void => void writeFlushed(res, `event: message\ndata: ${data}\n\n`);
    const output: McpMessageOutput = {
      message: (message) =>
        write(Array.isArray(message) ? JSON.stringify(message) : serializeMessage(message as JsonRpcMessage)),
      serialized: write,
    };
    const connection = new McpConnection(this.server, {
      defaultLogLevel: this.options.defaultLogLevel,
      checkScopes: this.options.checkScopes,
      limits: this.options.limits,
      hooks: this.options.hooks,
      session: output,
      maxRequestsInFlight: this.options.maxRequestsInFlight ?? this.options.limits.maxRequestsInFlight,
    });
    let ended = false;
    let timer: NodeJS.Timeout | undefined;
    const session: LegacySseSession = {
      id,
      owner,
      principal: principalId,
      connection,
      output,
      res,
      // The client closing its stream ends the session as a DELETE would.
      end: (reason = 'deleted') => {
        if (ended) return;
        ended = true;
        clearInterval(timer);
        this.sessions.delete(id);
        // The session is the stream: its calls end with it (their `finally` blocks run).
        connection.close(reason);
        // It leaves its owner's count once its handlers have settled, not before.
        const leave = (): void => {
          const list = this.owners.get(owner);
          const at = list?.indexOf(session) ?? -1;
          if (at < 0) return;
          list!.splice(at, 1);
          if (list!.length === 0) this.owners.delete(owner);
        };
        const running = connection.idle();
        if (running) void running.then(leave);
        else leave();
        if (!res.writableEnded) res.end();
      },
    };
    this.sessions.set(id, session);
    held.push(session);
    this.owners.set(owner, held);
    res.once('close', () => session.end());

    res.writeHead(200, SSE_HEADERS);
    writeFlushed(res, `event: endpoint\ndata: ${this.endpointOf(req, id)}\n\n`);
    if (this.options.keepAliveMs > 0) {
      timer = setInterval(() => void writeFlushed(res, ':\n\n'), this.options.keepAliveMs);
      timer.unref();
    }
  }

  /**
   * POST on the messages path: the message goes to its session, its answer on the stream. The
   * session is found before the body is read, so a POST to no session costs no body.
   */
  async post(
    req: IncomingMessage,
    res: ServerResponse,
    caller: {
      principal?: McpPrincipal;
      clientAddress?: string;
      /** The request the app's guards saw (Fastify's, not `req.raw`). */ request?: unknown;
    },
    readBody: () => McpBodyOutcome | Promise<McpBodyOutcome>,
  ): Promise<void> {
    const sink = new NodeResponseSink(res);
    const sessionId = new URL(req.url ?? '/', 'http://localhost').searchParams.get('sessionId');
    if (sessionId === null || sessionId === '') {
      return sink.json(
        400,
        failure(
          null,
          ErrorCode.InvalidRequest,
          `Bad Request: the sessionId query parameter is required. Open the event stream with GET /${this.options.path} and POST to the URL its endpoint event names.`,
        ),
      );
    }
    const session = this.sessions.get(sessionId);
    const { principal, clientAddress } = caller;
    // A session belongs to the principal that opened its stream; to anyone else it does not exist.
    if (!session || session.principal !== (principal?.id ?? null)) {
      return sink.json(
        404,
        failure(
          null,
          ErrorCode.InvalidRequest,
          `Session not found: no open event stream has this sessionId for this caller. Open a new one with GET /${this.options.path}.`,
        ),
      );
    }
    const read = readBody();
    const body = read instanceof Promise ? await read : read;
    if (!body.ok) return sink.json(body.status, failure(null, body.code, body.message));
    // The session's engine bounds its requests in flight (limits.maxRequestsInFlight); a refusal
    // travels on the stream, where the client waits for answers, and the POST itself is accepted,
    // as every client of this transport expects.
    await session.connection.receive(body.value, {
      principal,
      clientAddress,
      transportRequest: caller.request ?? req,
      headers: headersOf(req),
    });
    sink.empty(202);
  }

  deliverChange(event: McpChangeEvent): void {
    for (const session of this.sessions.values()) session.connection.deliverChange(event);
  }

  /** Ends every stream (application shutdown). */
  close(): void {
    for (const session of [...this.sessions.values()]) session.end('closed');
  }

  /**
   * The POST URL, as an absolute path built from the GET's own path so that a global prefix or
   * version segment in front of the stream path carries over to the messages path.
   */
  private endpointOf(req: IncomingMessage, sessionId: string): string {
    const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    const pathname = url.split('?')[0]!.replace(/\/+$/, '');
    const suffix = `/${this.options.path}`;
    const prefix = pathname.endsWith(suffix) ? pathname.slice(0, -suffix.length) : '';
    return `${prefix}/${this.options.messagesPath}?sessionId=${encodeURIComponent(sessionId)}`;
  }
}

/** A request's headers by lower-case name, repeated ones joined (as `sessions.onSession` reads them on Streamable HTTP). */
function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}
