import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Observable, Subscription } from 'rxjs';
import type { RequestEnvelope } from '../protocol/context.js';
import { httpStatusFor } from '../protocol/errors.js';
import { decodeHeaderValue } from '../protocol/header-value.js';
import {
  ErrorCode,
  classifyMessage,
  failure,
  isResponse,
  success,
  type JsonRpcFailure,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../protocol/json-rpc.js';
import type { JsonObject, LogLevel } from '../protocol/mcp-types.js';
import { isObject, type McpServer } from '../protocol/server.js';
import { newSessionId, type McpSession, type McpSessionEndReason, type McpSessionStore } from '../protocol/session-store.js';
import { DEFAULT_MCP_LIMITS, type ResolvedMcpLimits } from '../interfaces/mcp-module-options.interface.js';
import {
  DEFAULT_LEGACY_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  META_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSIONS,
  isModernVersionString,
  isSupportedLegacyVersion,
} from '../protocol/versions.js';
import type { OriginPolicy } from './origin-policy.js';
import { SSE_HEADERS, limitSseBuffer, writeFlushed } from './sse.js';
import { serializeMessage } from '../protocol/serialize.js';
import { SseStream } from './sse-stream.js';
import type { McpAuthenticator } from '../auth/mcp-authenticator.js';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import type { McpEventStore } from '../protocol/event-store.js';
import { ServerRequestBroker } from '../protocol/interaction.js';
import { McpError } from '../protocol/errors.js';
import { changeNotificationMethod, type McpChangeEvent } from '../protocol/notification-bus.js';
import { readModernMeta } from '../protocol/modern-meta.js';
import { supportsPrimingEvents } from '../protocol/versions.js';
import type { McpRelay } from '../protocol/relay.js';

export interface McpHttpHandlerOptions {
  /** Legacy-era session handling. The modern era is always stateless. */
  sessions: 'stateful' | 'stateless';
  maxBodyBytes: number;
  /** Most messages in one JSON-RPC batch (`limits.maxBatchLength`). */
  maxBatchLength: number;
  originPolicy: OriginPolicy;
  /** Legacy log threshold before the client calls `logging/setLevel`. */
  defaultLogLevel?: LogLevel;
  /** Interval of `:` comment lines on long-lived SSE streams and slow calls. */
  keepAliveMs: number;
  /** Stores legacy SSE events for `Last-Event-ID` resumption (stateful sessions only). */
  eventStore?: McpEventStore;
  /** The `retry:` hint of priming events. @default 1000 */
  retryMs?: number;
  /**
   * Several instances as one server (McpModule's `redis` option): legacy GET streams, messages
   * for sessions whose stream is elsewhere, and client answers that reached the wrong instance.
   */
  relay?: McpRelay;
  /** Bearer authentication and challenges, when McpModule's `auth` option is set. */
  auth?: McpAuthenticator;
  /** `sessions.maxSessions`, named in the refusal when the store is full. @default 10000 */
  maxSessions?: number;
  /** McpModule's resolved `limits`. @default DEFAULT_MCP_LIMITS */
  limits?: ResolvedMcpLimits;
}

/** Seconds a client refused for `sessions.maxSessions` is asked to wait before retrying. */
const SESSIONS_FULL_RETRY_AFTER_S = 30;

/** Client capabilities the protocol defines; a session keeps these and drops the rest. */
const KEPT_CAPABILITIES = ['roots', 'sampling', 'elicitation', 'experimental', 'tasks', 'extensions'] as const;
/** `clientInfo` (Implementation) fields a session keeps. */
const KEPT_CLIENT_INFO = ['name', 'version', 'title', 'description', 'websiteUrl', 'icons'] as const;

/** Per-call transport state, created before dispatch so the context can close the stream. */
interface CallChannel {
  stream?: SseStream;
  /** Set by `ctx.closeSseStream()` before any event was written. */
  detachRequested: boolean;
}

type BodyOutcome = { ok: true; value: unknown } | { ok: false; status: number; code: number; message: string };

const NAME_HEADER_METHODS: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Streamable HTTP for both protocol eras on one endpoint. Routes each POST by era, enforces the
 * header rules of each era, keeps legacy sessions in the session store, and writes the
 * dispatcher's Observable as one JSON body or as an SSE stream. Closing the response unsubscribes,
 * which cancels the call. Plain class: a Nest controller (or any Node HTTP server) drives it.
 */
export class McpHttpHandler {
  /** Cancels an in-flight legacy call (by session and request id), ending its response. */
  private readonly inflight = new Map<string, () => void>();
  private readonly getStreams = new Map<string, SseStream>();
  /**
   * Resumable POST streams still running, by stream id, with the session that owns each: an event
   * id resumes a stream only for that session (so for its principal too), since a foreign GET
   * would otherwise take over the stream's response and cancel its call.
   */
  private readonly liveStreams = new Map<string, { stream: SseStream; sessionId: string }>();
  /** Legacy server-to-client requests awaiting the client's answer. */
  readonly broker = new ServerRequestBroker();
  /**
   * Calls that may need keep-alives, watched by one shared ticker: a timer per request would be
   * created and cleared on every call, though nearly all answer long before the first beat.
   */
  private readonly slowCalls = new Set<{ since: number; beat(): void }>();
  private ticker?: NodeJS.Timeout;
  private readonly stopRelay?: () => void;
  private readonly principals = new WeakMap<IncomingMessage, McpPrincipal>();
  /**
   * Subscriptions of the sessions that have a GET stream here, so that a resource update finds
   * its streams without a session-store read per stream. Filled when the stream opens, kept in
   * step by `resources/subscribe` and `unsubscribe`, dropped when the session ends.
   */
  private readonly streamSubscriptions = new Map<string, Set<string>>();
  private readonly stopSessionEnds?: () => void;

  private readonly limits: ResolvedMcpLimits;

  constructor(
    private readonly server: McpServer,
    private readonly store: McpSessionStore,
    private readonly options: McpHttpHandlerOptions,
  ) {
    this.limits = options.limits ?? DEFAULT_MCP_LIMITS;
    // An answer published by the instance it reached resolves here if this instance awaits it.
    this.stopRelay = options.relay?.onResponse((response, sessionId) => this.broker.resolve(response, sessionId));
    this.stopSessionEnds = store.onSessionEnd?.((sessionId, reason) => void this.endSession(sessionId, reason));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    limitSseBuffer(res, this.limits.sseBufferBytes);
    try {
      const verdict = this.options.originPolicy.check(req);
      if (!verdict.ok) return this.sendError(res, 403, null, ErrorCode.InvalidRequest, `Forbidden: ${verdict.reason}`);
      // Browser clients can read these only when exposed.
      if (req.headers.origin !== undefined) res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version');
      if (this.options.auth) {
        const outcome = await this.options.auth.authenticate(req, res);
        if (!outcome.ok) return;
        if (outcome.principal) this.principals.set(req, outcome.principal);
      }
      switch (req.method) {
        case 'POST':
          return await this.post(req, res);
        case 'GET':
          return await this.get(req, res);
        case 'DELETE':
          return await this.delete(req, res);
        default:
          res.setHeader('Allow', this.allowedMethods());
          return this.sendError(res, 405, null, ErrorCode.InvalidRequest, `Method ${req.method} is not allowed on the MCP endpoint.`);
      }
    } catch (error) {
      if (!res.headersSent) {
        this.sendError(res, 500, null, ErrorCode.InternalError, 'Internal error while handling the MCP request.');
      } else res.end();
      throw error;
    }
  }

  /** Maps a body-parser failure (raised before the controller runs) to the JSON-RPC error it is. */
  handleParserError(error: { type?: string; status?: number; body?: unknown; limit?: number; message?: string }, res: ServerResponse, req?: IncomingMessage): boolean {
    if (error.type === 'entity.parse.failed') {
      // A strict JSON parser also refuses valid JSON that is not an object or array.
      if (typeof error.body === 'string' && isJson(error.body)) {
        this.sendError(res, 400, null, ErrorCode.InvalidRequest, 'Invalid Request: a JSON-RPC message must be a JSON object.');
      } else {
        this.sendError(res, 400, null, ErrorCode.ParseError, 'Parse error: the request body is not valid JSON.');
      }
      return true;
    }
    if (error.type === 'entity.too.large' || error.status === 413) {
      // The app's parser refused the body before McpModule saw it: its limit is the one to raise.
      const limit = typeof error.limit === 'number' ? `${error.limit} bytes` : 'its limit';
      this.sendError(
        res,
        413,
        null,
        ErrorCode.InvalidRequest,
        `Payload Too Large: the request body exceeds the app's JSON body-parser limit of ${limit}. Raise it with app.useBodyParser('json', { limit }) (Express) when creating the Nest app; McpModule's own maxBodyBytes (${this.options.maxBodyBytes} bytes) applies after it.`,
      );
      return true;
    }
    if (error.type === 'charset.unsupported' || error.type === 'encoding.unsupported') {
      this.sendError(res, 415, null, ErrorCode.InvalidRequest, 'Unsupported body encoding: send UTF-8 JSON.');
      return true;
    }
    // A decompression failure (zlib/brotli) carries no body-parser type, only the codec's message.
    const encoding = req?.headers['content-encoding']?.trim().toLowerCase();
    if (error.type === undefined && error.status === 400 && encoding !== undefined && encoding !== 'identity') {
      this.sendError(
        res,
        400,
        null,
        ErrorCode.ParseError,
        `Parse error: the request body could not be decoded with Content-Encoding "${encoding}" (${error.message ?? 'invalid data'}). Send it compressed with that encoding, or uncompressed without the header.`,
      );
      return true;
    }
    return false;
  }

  /** Ends every open stream; called on application shutdown. */
  close(): void {
    clearInterval(this.ticker);
    this.ticker = undefined;
    this.slowCalls.clear();
    for (const cancel of [...this.inflight.values()]) cancel();
    this.inflight.clear();
    for (const stream of this.getStreams.values()) stream.end();
    this.getStreams.clear();
    this.liveStreams.clear();
    this.streamSubscriptions.clear();
    this.stopRelay?.();
    this.stopSessionEnds?.();
  }

  /**
   * Ends what this process holds for a session that ended for any reason (DELETE, idle expiry,
   * eviction beyond its owner's cap): its GET stream (here and, with a relay, wherever it is
   * tailed) and its in-flight calls. The one place a session's resources are released.
   */
  /**
   * Everything a legacy session holds ends with it, whatever ended it (DELETE, idle expiry,
   * eviction at its owner's cap): its GET stream, relay stream, in-flight calls and stored events.
   */
  /**
   * Everything a legacy session holds ends with it, whatever ended it (DELETE, idle expiry,
   * eviction at its owner's cap): its GET stream, relay stream, in-flight calls and stored events.
   */
  private async endSession(sessionId: string, _reason: 'deleted' | McpSessionEndReason): Promise<void> {
    this.getStreams.get(sessionId)?.end();
    this.getStreams.delete(sessionId);
    this.streamSubscriptions.delete(sessionId);
    void this.options.relay?.endSessionStream(sessionId);
    const prefix = `${sessionId}\u0000`;
    for (const [key, cancel] of [...this.inflight]) {
      if (key.startsWith(prefix)) cancel();
    }
    // An ended session's events can never be resumed: release them now rather than at expiry.
    await this.options.eventStore?.dropSession?.(sessionId);
  }

  private allowedMethods(): string {
    return this.options.sessions === 'stateful' ? 'GET, POST, DELETE' : 'POST';
  }

  private async post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Streamable HTTP bodies are JSON; a form or text body (which a browser may send cross-site
    // without a preflight) is never read as a message.
    if (!isJsonContentType(header(req, 'content-type'))) {
      return this.sendError(
        res,
        415,
        null,
        ErrorCode.InvalidRequest,
        `Unsupported Media Type: an MCP POST body is JSON; send it with "Content-Type: application/json" (got ${JSON.stringify(header(req, 'content-type') ?? 'none')}).`,
      );
    }
    const body = await this.readBody(req);
    if (!body.ok) return this.sendError(res, body.status, null, body.code, body.message);
    if (Array.isArray(body.value)) return this.batch(req, res, body.value);
    const parsed = classifyMessage(body.value);
    if (parsed.kind === 'invalid') return this.sendError(res, 400, parsed.id, ErrorCode.InvalidRequest, `Invalid Request: ${parsed.reason}`);
    if (parsed.kind === 'response') return this.clientResponse(req, res, parsed.message);
    const message = parsed.message;
    const id = parsed.kind === 'request' ? parsed.message.id : null;
    if (id !== null && !this.authorize(req, res, [message as JsonRpcRequest])) return;
    const meta = message.params?._meta;
    const headerVersion = header(req, 'mcp-protocol-version');
    const modern =
      (isObject(meta) && META_PROTOCOL_VERSION in meta) ||
      (headerVersion !== undefined && isModernVersionString(headerVersion));
    if (modern) return this.modernPost(req, res, message, id);
    return this.legacyPost(req, res, message, id, headerVersion);
  }

  /**
   * The one scope decision for every way a request arrives (alone or in a batch): each request
   * needs its scopes, and when one lacks them the caller gets the 403 challenge before any runs.
   */
  private authorize(req: IncomingMessage, res: ServerResponse, requests: readonly JsonRpcRequest[]): boolean {
    const auth = this.options.auth;
    if (!auth) return true;
    const principal = this.principals.get(req);
    for (const request of requests) {
      if (!auth.checkScopes(this.server.requiredScopes(request.method, request.params), principal, res, request.id)) return false;
    }
    return true;
  }

  // ---------------------------------------------------------------- modern era (2026-07-28)

  private modernPost(
    req: IncomingMessage,
    res: ServerResponse,
    message: JsonRpcRequest | JsonRpcNotification,
    id: JsonRpcId | null,
  ): void {
    const envelope = this.modernEnvelope(req, message, id);
    if ('error' in envelope) return this.sendJson(res, httpStatusFor(envelope.error.code), envelope);
    if (id === null) return this.accepted(res);
    this.respond(req, res, this.server.handle(message as JsonRpcRequest, envelope), 'modern');
  }

  private modernEnvelope(
    req: IncomingMessage,
    message: JsonRpcRequest | JsonRpcNotification,
    id: JsonRpcId | null,
  ): RequestEnvelope | JsonRpcFailure {
    const meta = readModernMeta(message.params, id, (version) => {
      const headerVersion = header(req, 'mcp-protocol-version');
      if (headerVersion === undefined) {
        return failure(id, ErrorCode.HeaderMismatch, `Header mismatch: the MCP-Protocol-Version header is required and must equal "${version}".`);
      }
      if (headerVersion !== version) {
        return failure(
          id,
          ErrorCode.HeaderMismatch,
          `Header mismatch: MCP-Protocol-Version header "${headerVersion}" does not match the body's protocol version "${version}".`,
        );
      }
      return undefined;
    });
    if ('error' in meta) return meta;
    if (id !== null) {
      const methodHeader = header(req, 'mcp-method');
      if (methodHeader === undefined || methodHeader.trim() !== message.method) {
        return failure(
          id,
          ErrorCode.HeaderMismatch,
          methodHeader === undefined
            ? `Header mismatch: the Mcp-Method header is required and must equal "${message.method}".`
            : `Header mismatch: Mcp-Method header "${methodHeader}" does not match the body method "${message.method}".`,
        );
      }
      if (!this.server.hasMethod('modern', message.method)) {
        return this.server.methodNotFoundResponse(id, message.method, 'modern');
      }
      const nameField = Object.hasOwn(NAME_HEADER_METHODS, message.method) ? NAME_HEADER_METHODS[message.method] : undefined;
      if (nameField !== undefined) {
        const problem = this.checkNameHeader(req, message.params?.[nameField], nameField);
        if (problem) return failure(id, ErrorCode.HeaderMismatch, problem);
      }
      if (message.method === 'tools/call') {
        const problem = this.server.checkToolHeaders(message.params ?? {}, (name) => header(req, name));
        if (problem) return failure(id, ErrorCode.HeaderMismatch, problem);
      }
    }
    return {
      era: 'modern',
      protocolVersion: meta.protocolVersion,
      capabilities: meta.capabilities,
      clientInfo: meta.clientInfo,
      transportRequest: req,
      logLevel: meta.logLevel,
      principal: this.principals.get(req)?.id,
      auth: this.principals.get(req),
    };
  }

  private checkNameHeader(req: IncomingMessage, bodyValue: unknown, field: 'name' | 'uri'): string | undefined {
    const raw = header(req, 'mcp-name');
    if (raw === undefined) return `Header mismatch: the Mcp-Name header is required and must equal params.${field}.`;
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok) return 'Header mismatch: the Mcp-Name header has invalid characters or a malformed =?base64?…?= value.';
    if (typeof bodyValue !== 'string' || decoded.value !== bodyValue.trim()) {
      return `Header mismatch: Mcp-Name header "${decoded.value}" does not match params.${field}.`;
    }
    return undefined;
  }

  // ---------------------------------------------------------------- legacy era (2025-03-26 … 2025-11-25)

  private async legacyPost(
    req: IncomingMessage,
    res: ServerResponse,
    message: JsonRpcRequest | JsonRpcNotification,
    id: JsonRpcId | null,
    headerVersion: string | undefined,
  ): Promise<void> {
    if (message.method === 'initialize' && id !== null) return this.initialize(req, res, message as JsonRpcRequest, this.principals.get(req)?.id);
    const context = await this.legacyContext(req, res, id, headerVersion);
    if (!context) return;
    if (id === null) {
      this.legacyNotification(message as JsonRpcNotification, context.session);
      return this.accepted(res);
    }
    const channel: CallChannel = { detachRequested: false };
    if (context.session && context.protocolVersion >= '2025-11-25' && this.options.eventStore) {
      context.closeStream = () => {
        if (channel.stream) channel.stream.detach();
        else channel.detachRequested = true;
      };
    }
    this.respond(req, res, this.server.handle(message as JsonRpcRequest, context), 'legacy', context.session?.id, id, channel, context.protocolVersion);
  }

  /** Resolves the session and version of a non-initialize legacy request, or answers the error. */
  private async legacyContext(
    req: IncomingMessage,
    res: ServerResponse,
    id: JsonRpcId | null,
    headerVersion: string | undefined,
  ): Promise<RequestEnvelope | undefined> {
    let session: McpSession | undefined;
    if (this.options.sessions === 'stateful') {
      const resolved = await this.resolveSession(req, res, id);
      if (!resolved) return undefined;
      session = resolved;
    }
    let version = session?.protocolVersion ?? DEFAULT_LEGACY_VERSION;
    if (headerVersion !== undefined) {
      if (!isSupportedLegacyVersion(headerVersion)) {
        this.sendError(
          res,
          400,
          id,
          ErrorCode.InvalidRequest,
          `Bad Request: unsupported MCP-Protocol-Version "${headerVersion}". Supported: ${[...LEGACY_PROTOCOL_VERSIONS, ...MODERN_PROTOCOL_VERSIONS].join(', ')}.`,
        );
        return undefined;
      }
      // On a session, features follow the version negotiated at initialize, never a per-request
      // claim: a downgrade to 2025-03-26 would re-enable batches, which bypass nothing today but
      // would make every era rule depend on what the client says per request.
      if (session && headerVersion !== session.protocolVersion) {
        this.sendError(
          res,
          400,
          id,
          ErrorCode.InvalidRequest,
          `Bad Request: the MCP-Protocol-Version header "${headerVersion}" does not match the version this session negotiated ("${session.protocolVersion}"). Send the negotiated version on every request, or initialize a new session to use another one.`,
        );
        return undefined;
      }
      version = headerVersion;
    }
    const current = session;
    return {
      era: 'legacy',
      protocolVersion: version,
      capabilities: current?.capabilities ?? {},
      clientInfo: current?.clientInfo,
      session: current,
      transportRequest: req,
      principal: this.principals.get(req)?.id,
      auth: this.principals.get(req),
      logLevel: current?.logLevel ?? this.options.defaultLogLevel,
      setLogLevel: current
        ? async (level) => {
            current.logLevel = level;
            await this.store.update(current);
          }
        : undefined,
      broker: this.broker,
      subscribe: current
        ? async (uri) => {
            const subscriptions = new Set(current.subscriptions ?? []);
            if (subscriptions.has(uri)) return;
            const max = this.limits.subscriptionsPerSession;
            if (subscriptions.size >= max) {
              throw new McpError(
                ErrorCode.InvalidParams,
                `Too many subscriptions: this session already holds ${max} resource subscriptions, the limit (limits.subscriptionsPerSession). Call resources/unsubscribe for some first, or raise McpModule's limits.subscriptionsPerSession.`,
              );
            }
            current.subscriptions = [...subscriptions, uri];
            await this.store.update(current);
            this.streamSubscriptions.get(current.id)?.add(uri);
          }
        : undefined,
      unsubscribe: current
        ? async (uri) => {
            if (!current.subscriptions?.includes(uri)) return;
            current.subscriptions = current.subscriptions.filter((u) => u !== uri);
            await this.store.update(current);
            this.streamSubscriptions.get(current.id)?.delete(uri);
          }
        : undefined,
    };
  }

  /**
   * The session named by `Mcp-Session-Id`, for every request and client answer on a stateful
   * endpoint. A session belongs to the principal that opened it; to anyone else it does not
   * exist. Answers the 400/404 itself and returns undefined when there is none.
   */
  private async resolveSession(req: IncomingMessage, res: ServerResponse, id: JsonRpcId | null): Promise<McpSession | undefined> {
    const sessionId = header(req, 'mcp-session-id');
    if (sessionId === undefined) {
      this.sendError(res, 400, id, ErrorCode.InvalidRequest, 'Bad Request: the Mcp-Session-Id header is required. Call initialize first and send the session id it returns on every request.');
      return undefined;
    }
    const session = await this.store.get(sessionId);
    if (!session || (session.principal ?? null) !== (this.principals.get(req)?.id ?? null)) {
      this.sendError(res, 404, id, ErrorCode.InvalidRequest, 'Session not found: it expired or was deleted. Start a new session with initialize.');
      return undefined;
    }
    return session;
  }

  private async initialize(req: IncomingMessage, res: ServerResponse, message: JsonRpcRequest, principal?: string): Promise<void> {
    const params = message.params ?? {};
    const { protocolVersion, result } = this.server.initializeResult(params.protocolVersion);
    const headers: Record<string, string> = {};
    if (this.options.sessions === 'stateful') {
      const limits = this.limits;
      // Only what the protocol defines is kept, and bounded: every session holds it until it ends.
      const capabilities = pick(params.capabilities, KEPT_CAPABILITIES, isObject);
      const clientInfo = isObject(params.clientInfo) ? pick(params.clientInfo, KEPT_CLIENT_INFO, (v, field) => (field === 'icons' ? Array.isArray(v) : typeof v === 'string')) : undefined;
      const keptBytes = Buffer.byteLength(JSON.stringify({ capabilities, clientInfo }));
      if (keptBytes > limits.initializeParamsBytes) {
        return this.sendError(
          res,
          400,
          message.id,
          ErrorCode.InvalidParams,
          `Invalid params: the initialize capabilities and clientInfo are ${keptBytes} bytes, over the ${limits.initializeParamsBytes}-byte limit a session keeps (limits.initializeParamsBytes). Send smaller capabilities and clientInfo, or raise McpModule's limits.initializeParamsBytes.`,
        );
      }
      const session: McpSession = { id: newSessionId(), protocolVersion, capabilities };
      if (clientInfo) session.clientInfo = clientInfo as unknown as McpSession['clientInfo'];
      if (principal !== undefined) session.principal = principal;
      // Anonymous callers are told apart by address: Express's req.ip honours 'trust proxy'.
      const address = (req as IncomingMessage & { ip?: string }).ip ?? req.socket.remoteAddress ?? 'unknown';
      session.owner = principal !== undefined ? `principal:${principal}` : `address:${address}`;
      const maxPerOwner = principal !== undefined ? limits.sessionsPerPrincipal : limits.sessionsPerAddress;
      const created = await this.store.create(session, { maxPerOwner });
      if (created && !created.created) {
        const max = this.options.maxSessions ?? 10_000;
        return this.sendJson(
          res,
          503,
          failure(
            message.id,
            ErrorCode.ServerBusy,
            `Server busy: it holds its maximum of ${max} sessions (sessions.maxSessions) and none has expired. Retry after ${SESSIONS_FULL_RETRY_AFTER_S} s, end unused sessions with DELETE, or raise McpModule's sessions.maxSessions.`,
          ),
          { 'Retry-After': String(SESSIONS_FULL_RETRY_AFTER_S) },
        );
      }
      headers['Mcp-Session-Id'] = session.id;
    }
    this.sendJson(res, 200, success(message.id, result), headers);
  }

  private legacyNotification(message: JsonRpcNotification, session: McpSession | undefined): void {
    if (message.method === 'notifications/cancelled' && session) {
      const requestId = message.params?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') {
        this.inflight.get(`${session.id}\u0000${String(requestId)}`)?.();
      }
    }
  }

  private async batch(req: IncomingMessage, res: ServerResponse, items: unknown[]): Promise<void> {
    const headerVersion = header(req, 'mcp-protocol-version');
    if (items.length === 0) return this.sendError(res, 400, null, ErrorCode.InvalidRequest, 'Invalid Request: an empty batch.');
    const maxBatchLength = this.options.maxBatchLength;
    if (items.length > maxBatchLength) {
      return this.sendError(
        res,
        400,
        null,
        ErrorCode.InvalidRequest,
        `Invalid Request: the batch has ${items.length} messages; at most ${maxBatchLength} are accepted (McpModule option limits.maxBatchLength). Split it into smaller batches or raise limits.maxBatchLength.`,
      );
    }
    const context = await this.legacyContext(req, res, null, headerVersion);
    if (!context) return;
    // On a session this is the negotiated version (legacyContext refuses a header that differs).
    const version = context.protocolVersion;
    if (version > '2025-03-26') {
      return this.sendError(
        res,
        400,
        null,
        ErrorCode.InvalidRequest,
        `Invalid Request: JSON-RPC batches are only accepted from 2025-03-26 (and older) clients (this ${context.session ? 'session negotiated' : 'request speaks'} ${version}). Send one message per POST.`,
      );
    }
    const classified = items.map((item) => classifyMessage(item));
    const requests = classified.flatMap((parsed) => (parsed.kind === 'request' && parsed.message.method !== 'initialize' ? [parsed.message] : []));
    if (!this.authorize(req, res, requests)) return;
    const responses: JsonRpcMessage[] = [];
    const pending: Array<Promise<void>> = [];
    for (const parsed of classified) {
      if (parsed.kind === 'invalid') {
        responses.push(failure(parsed.id, ErrorCode.InvalidRequest, `Invalid Request: ${parsed.reason}`));
      } else if (parsed.kind === 'notification') {
        this.legacyNotification(parsed.message, context.session);
      } else if (parsed.kind === 'request') {
        if (parsed.message.method === 'initialize') {
          responses.push(failure(parsed.message.id, ErrorCode.InvalidRequest, 'Invalid Request: initialize must not be part of a batch.'));
          continue;
        }
        pending.push(
          new Promise<void>((resolve) => {
            this.server.handle(parsed.message, context).subscribe({
              next: (m) => isResponse(m) && responses.push(m),
              complete: resolve,
              error: resolve,
            });
          }),
        );
      }
    }
    await Promise.all(pending);
    if (responses.length === 0) return this.accepted(res);
    this.sendJson(res, 200, responses);
  }

  /** A client's answer to a server-to-client request (legacy era). Late or unknown answers are ignored. */
  private async clientResponse(req: IncomingMessage, res: ServerResponse, message: JsonRpcResponse): Promise<void> {
    let owner: string | undefined;
    if (this.options.sessions === 'stateful') {
      // The same binding as requests: only the session's own principal may answer on it.
      const session = await this.resolveSession(req, res, null);
      if (!session) return;
      owner = session.id;
    }
    if (!this.broker.resolve(message, owner) && this.options.relay) void this.options.relay.publishResponse(message, owner);
    this.accepted(res);
  }

  // ---------------------------------------------------------------- GET and DELETE (legacy sessions)

  private async get(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.options.sessions !== 'stateful') {
      res.setHeader('Allow', this.allowedMethods());
      return this.sendError(res, 405, null, ErrorCode.InvalidRequest, 'Method Not Allowed: this endpoint keeps no sessions, so there is no GET stream. Use POST.');
    }
    const context = await this.legacyContext(req, res, null, header(req, 'mcp-protocol-version'));
    if (!context?.session) return;
    const sessionId = context.session.id;
    const lastEventId = header(req, 'last-event-id');
    if (lastEventId !== undefined && this.options.eventStore) {
      // Another session's event id is treated like an unknown one: a fresh stream of this session.
      const live = this.liveStreams.get(lastEventId.slice(0, lastEventId.lastIndexOf('.')));
      if (live?.sessionId === sessionId) {
        res.writeHead(200, SSE_HEADERS);
        res.flushHeaders();
        this.keepAlive(res);
        return live.stream.resume(res, sessionId, lastEventId);
      }
      if (this.options.relay) return this.relayStream(res, sessionId, lastEventId, context.protocolVersion);
      const replay = await this.options.eventStore.replay(sessionId, lastEventId);
      if (replay) {
        res.writeHead(200, SSE_HEADERS);
        for (const event of replay.events) writeFlushed(res, `id: ${event.id}\nevent: message\ndata: ${JSON.stringify(event.message)}\n\n`);
        const standalone = this.getStreams.get(sessionId);
        if (standalone?.streamId === replay.streamId) {
          standalone.resume(res, sessionId, `${replay.streamId}.${Number.MAX_SAFE_INTEGER}`);
          this.keepAlive(res);
          return;
        }
        res.end();
        return;
      }
    }
    if (this.options.relay) return this.relayStream(res, sessionId, undefined, context.protocolVersion);
    this.getStreams.get(sessionId)?.end();
    this.streamSubscriptions.set(sessionId, new Set(context.session.subscriptions ?? []));
    const streamId = this.options.eventStore ? await this.options.eventStore.openStream(sessionId) : undefined;
    const stream = new SseStream(res, {
      store: this.options.eventStore,
      streamId,
      priming: streamId !== undefined && supportsPrimingEvents(context.protocolVersion),
      retryMs: this.options.retryMs ?? 1000,
    });
    this.getStreams.set(sessionId, stream);
    this.keepAlive(res);
    res.on('close', () => {
      if (this.getStreams.get(sessionId) !== stream || stream.detached) return;
      if (streamId !== undefined) return stream.detach();
      // Without an event store nothing can resume it: drop it rather than keep a dead entry.
      stream.end();
      this.getStreams.delete(sessionId);
      this.streamSubscriptions.delete(sessionId);
    });
  }

  /**
   * Sends a server-initiated message on a legacy session's GET stream (list changes, resource
   * updates). Returns false when the session has no open stream. With a relay the message goes to
   * the session's stream wherever it is held, and true means it was handed over.
   */
  sendToSession(sessionId: string, message: JsonRpcMessage): boolean {
    const stream = this.getStreams.get(sessionId);
    if (!stream || stream.finished) {
      if (!this.options.relay) return false;
      void this.options.relay.sendToSession(sessionId, message);
      return true;
    }
    stream.send(message);
    return true;
  }

  /**
   * Delivers a change to the legacy sessions of this process that have a GET stream: list
   * changes to all of them, resource updates to those subscribed to the URI.
   */
  async deliverChange(event: McpChangeEvent): Promise<void> {
    // Every entry is a live session's stream (endSession drops the rest), so this costs one step
    // per live stream and no store round trip.
    const method = changeNotificationMethod(event);
    for (const [sessionId, stream] of this.getStreams) {
      if (stream.finished) continue;
      if (event.type === 'resource-updated') {
        if (!this.streamSubscriptions.get(sessionId)?.has(event.uri)) continue;
        stream.send({ jsonrpc: '2.0', method, params: { uri: event.uri } });
      } else {
        stream.send({ jsonrpc: '2.0', method });
      }
    }
  }

  /** Sends `:` comments on calls running longer than keepAliveMs (switching them to SSE). */
  private watchSlowCall(call: { since: number; beat(): void }): void {
    this.slowCalls.add(call);
    if (this.ticker) return;
    const every = this.options.keepAliveMs;
    this.ticker = setInterval(() => {
      const due = Date.now() - every;
      for (const slow of this.slowCalls) {
        if (slow.since > due) continue;
        slow.since = Date.now();
        slow.beat();
      }
      if (this.slowCalls.size === 0) {
        clearInterval(this.ticker);
        this.ticker = undefined;
      }
    }, Math.max(100, Math.floor(every / 2)));
    this.ticker.unref();
  }

  private keepAlive(res: ServerResponse): void {
    const timer = setInterval(() => !res.writableEnded && writeFlushed(res, ':\n\n'), this.options.keepAliveMs);
    timer.unref();
    res.on('close', () => clearInterval(timer));
  }

  private async delete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.options.sessions !== 'stateful') {
      res.setHeader('Allow', this.allowedMethods());
      return this.sendError(res, 405, null, ErrorCode.InvalidRequest, 'Method Not Allowed: this endpoint keeps no sessions to delete.');
    }
    const sessionId = header(req, 'mcp-session-id');
    if (sessionId === undefined) {
      return this.sendError(res, 400, null, ErrorCode.InvalidRequest, 'Bad Request: DELETE needs the Mcp-Session-Id header of the session to end.');
    }
    const owned = await this.store.get(sessionId);
    if (!owned || (owned.principal ?? null) !== (this.principals.get(req)?.id ?? null) || !(await this.store.delete(sessionId))) {
      return this.sendError(res, 404, null, ErrorCode.InvalidRequest, 'Session not found: it expired or was already deleted.');
    }
    await this.endSession(sessionId, 'deleted');
    res.writeHead(200).end();
  }

  // ---------------------------------------------------------------- writing

  /**
   * Writes a dispatcher stream: one JSON body when the response comes first, otherwise an SSE
   * stream that the response ends. A slow call switches to SSE to send keep-alive comments.
   * Closing the connection early unsubscribes (cancellation), unless the server itself closed a
   * resumable stream (the client then resumes with Last-Event-ID).
   */
  private respond(
    req: IncomingMessage,
    res: ServerResponse,
    stream$: Observable<JsonRpcMessage>,
    era: 'legacy' | 'modern',
    sessionId?: string,
    requestId?: JsonRpcId,
    channel: CallChannel = { detachRequested: false },
    protocolVersion?: string,
  ): void {
    const accept = header(req, 'accept');
    const sseAllowed = accept === undefined || accept.includes('text/event-stream') || accept.includes('*/*');
    const resumable = era === 'legacy' && sessionId !== undefined && this.options.eventStore !== undefined && protocolVersion !== undefined && supportsPrimingEvents(protocolVersion);
    let finished = false;
    let subscription: Subscription | undefined;
    const key = sessionId !== undefined && requestId !== undefined ? `${sessionId}\u0000${String(requestId)}` : undefined;
    const startSse = (): SseStream => {
      if (channel.stream) return channel.stream;
      const streamId = resumable ? this.openStreamSync(sessionId!) : undefined;
      const stream = new SseStream(res, {
        store: resumable ? this.options.eventStore : undefined,
        streamId,
        priming: resumable,
        retryMs: this.options.retryMs ?? 1000,
      });
      channel.stream = stream;
      if (streamId !== undefined) this.liveStreams.set(streamId, { stream, sessionId: sessionId! });
      if (channel.detachRequested) stream.detach();
      return stream;
    };
    const pulse = sseAllowed ? { since: Date.now(), beat: () => startSse().comment() } : undefined;
    if (pulse) this.watchSlowCall(pulse);
    const finish = (): void => {
      finished = true;
      if (pulse) this.slowCalls.delete(pulse);
      if (key !== undefined) this.inflight.delete(key);
      const streamId = channel.stream?.streamId;
      if (streamId !== undefined) this.liveStreams.delete(streamId);
    };
    res.once('close', () => {
      if (!finished && !channel.stream?.detached && !channel.detachRequested) {
        finish();
        subscription?.unsubscribe();
      }
    });
    subscription = stream$.subscribe({
      next: (message) => {
        if (finished) return;
        if (isResponse(message)) {
          const stream = channel.stream;
          finish();
          if (stream) {
            stream.end(message);
          } else if (channel.detachRequested && resumable) {
            startSse().end(message);
          } else {
            const status = era === 'modern' && 'error' in message ? modernErrorStatus(message.error.code) : 200;
            this.sendJson(res, status, message);
          }
          return;
        }
        if (!sseAllowed) {
          // A plain JSON answer cannot carry a server-to-client request; the session's GET stream can.
          if (sessionId !== undefined && 'method' in message && 'id' in message) this.sendToSession(sessionId, message);
          return;
        }
        startSse().send(message);
      },
      error: () => {
        if (finished) return;
        finish();
        if (channel.stream) channel.stream.end();
        else this.sendError(res, 500, requestId ?? null, ErrorCode.InternalError, 'Internal error.');
      },
    });
    if (!finished && key !== undefined) {
      this.inflight.set(key, () => {
        if (finished) return;
        finish();
        subscription?.unsubscribe();
        if (channel.stream) channel.stream.end();
        else if (!res.headersSent) res.writeHead(204).end();
        else res.end();
      });
    }
  }

  /** With a relay, legacy GET streams are tails of the shared event store (see McpRelay). */
  private relayStream(res: ServerResponse, sessionId: string, lastEventId: string | undefined, protocolVersion: string): Promise<void> {
    return this.options.relay!.serveStream(res, {
      sessionId,
      lastEventId,
      priming: supportsPrimingEvents(protocolVersion),
      retryMs: this.options.retryMs ?? 1000,
      keepAliveMs: this.options.keepAliveMs,
    });
  }

  /** Stream ids are random, so they can be minted without awaiting a shared store. */
  private openStreamSync(sessionId: string): string {
    const opened = this.options.eventStore!.openStream(sessionId);
    if (typeof opened === 'string') return opened;
    throw new Error('McpEventStore.openStream must return the stream id synchronously.');
  }

  private async readBody(req: IncomingMessage): Promise<BodyOutcome> {
    const preParsed = (req as IncomingMessage & { body?: unknown }).body;
    const limit = this.options.maxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      return { ok: false, status: 413, code: ErrorCode.InvalidRequest, message: this.tooLargeMessage() };
    }
    // A JSON body parser turns an empty body into {}; it is not JSON, so it is a parse error.
    if (declared === 0) return { ok: false, status: 400, code: ErrorCode.ParseError, message: EMPTY_BODY_MESSAGE };
    if (preParsed !== undefined && !Buffer.isBuffer(preParsed) && typeof preParsed !== 'string') {
      return { ok: true, value: preParsed };
    }
    let text: string;
    if (preParsed !== undefined) {
      text = Buffer.isBuffer(preParsed) ? preParsed.toString('utf8') : preParsed;
      if (Buffer.byteLength(text) > limit) {
        return { ok: false, status: 413, code: ErrorCode.InvalidRequest, message: this.tooLargeMessage() };
      }
    } else {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > limit) {
          return { ok: false, status: 413, code: ErrorCode.InvalidRequest, message: this.tooLargeMessage() };
        }
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks).toString('utf8');
    }
    if (text.trim() === '') return { ok: false, status: 400, code: ErrorCode.ParseError, message: EMPTY_BODY_MESSAGE };
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      return { ok: false, status: 400, code: ErrorCode.ParseError, message: 'Parse error: the request body is not valid JSON.' };
    }
  }

  private tooLargeMessage(): string {
    return `Payload Too Large: the request body exceeds ${this.options.maxBodyBytes} bytes, McpModule's maxBodyBytes limit. Raise McpModule.forRoot({ maxBodyBytes }) to accept it.`;
  }

  private accepted(res: ServerResponse): void {
    res.writeHead(202).end();
  }

  private sendError(res: ServerResponse, status: number, id: JsonRpcId | null, code: number, message: string, data?: unknown): void {
    this.sendJson(res, status, failure(id, code, message, data));
  }

  private sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
    const payload = Array.isArray(body) ? JSON.stringify(body) : serializeMessage(body as JsonRpcMessage);
    res.writeHead(status, {
      ...headers,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(payload),
    });
    res.end(payload);
  }
}

const EMPTY_BODY_MESSAGE = 'Parse error: the request body is empty; send one JSON-RPC message (or, for 2025-03-26 sessions, a batch) as JSON.';

/** `application/json`, with or without parameters such as `charset`. */
function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && value.split(';')[0].trim().toLowerCase() === 'application/json';
}

/** The listed fields of `value` that pass `keep`, as a new object. */
function pick(value: unknown, fields: readonly string[], keep: (v: unknown, field: string) => boolean): JsonObject {
  const kept: JsonObject = {};
  if (!isObject(value)) return kept;
  for (const field of fields) {
    const v = (value as JsonObject)[field];
    if (Object.hasOwn(value, field) && keep(v, field)) kept[field] = v;
  }
  return kept;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** On the modern era some JSON-RPC errors carry a mandated HTTP status. */
function modernErrorStatus(code: number): number {
  switch (code) {
    case ErrorCode.MethodNotFound:
      return 404;
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
      return 400;
    default:
      return 200;
  }
}

export type { JsonObject };
