import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_SESSION_OPTIONS } from '../engine/session-options.js';
import { Logger } from '@nestjs/common';
import type { McpAuthenticator } from '../auth/mcp-authenticator.js';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import { McpEngine, allowedMethods } from '../engine/engine.js';
import type { McpBodyOutcome, McpTransportFacts } from '../engine/sink.js';
import type { McpEventStore } from '../protocol/event-store.js';
import type { ServerRequestBroker } from '../protocol/interaction.js';
import { ErrorCode, failure, type JsonRpcMessage } from '../protocol/json-rpc.js';
import { McpStoreUnavailableError, storeUnavailableFailure } from '../protocol/errors.js';
import type { LogLevel } from '../protocol/mcp-types.js';
import type { McpChangeEvent } from '../protocol/notification-bus.js';
import type { McpRelay } from '../engine/relay.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import type { McpSessionStore } from '../protocol/session-store.js';
import type { ResolvedMcpLimits } from '../engine/limits.js';
import { DEFAULT_MCP_LIMITS } from '../engine/limits.js';
import { NodeResponseSink } from './node-sink.js';
import type { OriginPolicy } from './origin-policy.js';
import { BodyRefusals } from './body-refusals.js';
import { carriesRequest, refuseDraining } from './draining-refusal.js';
import { parserErrorOutcome } from './parser-errors.js';
import { LegacySseTransport, type ResolvedLegacySseOptions } from './legacy-sse.transport.js';
import type { SessionHooks } from '../engine/session-hooks.js';

export interface McpHttpHandlerOptions {
  /** Legacy-era session handling. The modern era is always stateless. */
  sessions: 'stateful' | 'stateless';
  maxBodyBytes: number;
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
  /** Serve the legacy HTTP+SSE transport (2024-11-05) too, at these routes. */
  legacySse?: ResolvedLegacySseOptions;
  /** `sessions.onSession` / `onSessionClose` and the session-state bound. */
  hooks?: SessionHooks;
  /** The `Retry-After` of requests refused while the server shuts down, in seconds. @default 1 */
  shutdownRetryAfterS?: number;
}

type Admission = { ok: true; principal?: McpPrincipal } | { ok: false };
const ADMITTED: Admission = { ok: true };

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * What the engine needs to know of a Node HTTP request. `transportRequest` is the app's request
 * (Express's `req`, Fastify's request), what guards and `ctx.request` see; headers and the client
 * address are read from the Node request under it.
 */
class NodeTransportFacts implements McpTransportFacts {
  readonly headerRules = true;

  constructor(
    private readonly req: IncomingMessage,
    readonly transportRequest: object,
    readonly principal: McpPrincipal | undefined,
    readonly acceptsStream: boolean,
  ) {}

  header(name: string): string | undefined {
    return header(this.req, name);
  }

  /** Express's req.ip honours 'trust proxy' at a cost per read; without X-Forwarded-For it is the socket's. */
  get clientAddress(): string {
    const req = this.req;
    const ip = req.headers['x-forwarded-for'] === undefined ? undefined : (req as IncomingMessage & { ip?: string }).ip;
    return ip ?? req.socket.remoteAddress ?? 'unknown';
  }
}

/**
 * The HTTP layer every HTTP adapter shares (Express through the Nest controller, Fastify through
 * `request.raw`/`reply.raw`, plain node:http): Origin/Host policy, bearer authentication, the JSON
 * content type, the body (size, decoding, a body a framework already parsed into `req.body`) and
 * body-parser errors. The protocol itself, both eras, is the {@link McpEngine}'s.
 */
export class McpHttpHandler {
  private readonly engine: McpEngine;
  private readonly limits: ResolvedMcpLimits;
  private readonly legacySse?: LegacySseTransport;
  /** Set once shutdown began: new sessions, calls and streams go to another instance. */
  private draining = false;

  constructor(
    server: McpDispatcher,
    store: McpSessionStore,
    private readonly options: McpHttpHandlerOptions,
  ) {
    this.limits = options.limits ?? DEFAULT_MCP_LIMITS;
    const auth = options.auth;
    this.engine = new McpEngine(server, store, {
      sessions: options.sessions,
      limits: this.limits,
      defaultLogLevel: options.defaultLogLevel,
      keepAliveMs: options.keepAliveMs,
      eventStore: options.eventStore,
      retryMs: options.retryMs,
      relay: options.relay,
      maxSessions: options.maxSessions,
      hooks: options.hooks,
      checkScopes: auth
        ? (required, principal, request) => auth.scopeRefusal(required, principal, request.id)
        : undefined,
      // legacySse.maxRequestsInFlight is the option's former name.
      maxRequestsInFlight: options.legacySse?.maxRequestsInFlight ?? this.limits.maxRequestsInFlight,
    });
    if (options.legacySse) {
      this.legacySse = new LegacySseTransport(server, {
        ...options.legacySse,
        limits: this.limits,
        maxSessions: options.maxSessions ?? DEFAULT_SESSION_OPTIONS.maxSessions,
        keepAliveMs: options.keepAliveMs,
        defaultLogLevel: options.defaultLogLevel,
        checkScopes: auth
          ? (required, principal, request) => auth.scopeRefusal(required, principal, request.id)
          : undefined,
        hooks: options.hooks,
      });
    }
  }

  /** Legacy server-to-client requests awaiting the client's answer. */
  get broker(): ServerRequestBroker {
    return this.engine.broker;
  }

  /**
   * Serves one request. `appRequest` is the request the app's guards saw (Fastify's request over
   * `req`, or `req` itself on Express and plain node:http): the principal is read there. Returns
   * a promise only when something had to be awaited (a token, a body to stream, a session store):
   * most POSTs are answered without one. A failure after the answer began rejects it.
   */
  handle(req: IncomingMessage, res: ServerResponse, appRequest: object = req): void | Promise<void> {
    const sink = new NodeResponseSink(res, this.limits.sseBufferBytes);
    let served: void | Promise<void>;
    try {
      const admission = this.admit(req, res, sink, appRequest);
      served =
        admission instanceof Promise
          ? admission.then((admitted) => this.serve(admitted, req, appRequest, sink))
          : this.serve(admission, req, appRequest, sink);
    } catch (error) {
      return this.failed(error, res, sink);
    }
    return served instanceof Promise ? served.catch((error: unknown) => this.failed(error, res, sink)) : served;
  }

  private serve(
    admitted: Admission,
    req: IncomingMessage,
    appRequest: object,
    sink: NodeResponseSink,
  ): void | Promise<void> {
    if (!admitted.ok) return;
    const facts = this.facts(req, appRequest, admitted.principal);
    switch (req.method) {
      case 'POST': {
        // A body the framework already parsed needs no await.
        const body = this.post(req);
        return body instanceof Promise
          ? body.then((outcome) => this.dispatch(outcome, facts, sink))
          : this.dispatch(body, facts, sink);
      }
      case 'GET':
        if (this.draining) return refuseDraining(sink, undefined, this.options.shutdownRetryAfterS);
        return this.engine.stream(facts, sink);
      case 'DELETE':
        return this.engine.end(facts, sink);
      default:
        return sink.json(
          405,
          failure(null, ErrorCode.InvalidRequest, `Method ${req.method} is not allowed on the MCP endpoint.`),
          {
            Allow: allowedMethods(this.options.sessions),
          },
        );
    }
  }

  private dispatch(outcome: McpBodyOutcome, facts: McpTransportFacts, sink: NodeResponseSink): void | Promise<void> {
    // Client answers and notifications still land: calls finishing here may await them.
    if (this.draining && outcome.ok && carriesRequest(outcome.value))
      return refuseDraining(sink, outcome.value, this.options.shutdownRetryAfterS);
    return this.engine.message(outcome, facts, sink); // most calls: synchronously
  }

  /** What a request that failed inside the handler answers; rejects with the error unless a store was down. */
  private failed(error: unknown, res: ServerResponse, sink: NodeResponseSink): void | Promise<never> {
    // The engine answers these itself; this covers a path that reached a store before it.
    if (error instanceof McpStoreUnavailableError) {
      if (!res.headersSent)
        sink.json(503, storeUnavailableFailure(null, error), { 'Retry-After': String(error.retryAfterS) });
      else res.end();
      return;
    }
    if (!res.headersSent)
      sink.json(500, failure(null, ErrorCode.InternalError, 'Internal error while handling the MCP request.'));
    else res.end();
    return Promise.reject(error);
  }

  /**
   * The legacy HTTP+SSE transport's two routes (`stream`: the GET that opens a session,
   * `messages`: the POSTs into it), behind the same Origin/Host policy, authentication and body
   * rules as Streamable HTTP.
   */
  async handleLegacySse(
    req: IncomingMessage,
    res: ServerResponse,
    route: 'stream' | 'messages',
    appRequest: object = req,
  ): Promise<void> {
    const transport = this.legacySse;
    const sink = new NodeResponseSink(res);
    if (!transport)
      return sink.json(
        404,
        failure(
          null,
          ErrorCode.InvalidRequest,
          'Not Found: the legacy SSE transport is off. Enable it with McpModule.forRoot({ legacySse: true }).',
        ),
      );
    try {
      const admitted = await this.admit(req, res, sink, appRequest);
      if (!admitted.ok) return;
      if (route === 'stream' && this.draining) return refuseDraining(sink, undefined, this.options.shutdownRetryAfterS);
      const clientAddress = new NodeTransportFacts(req, appRequest, undefined, true).clientAddress;
      if (route === 'stream') return transport.open(req, res, admitted.principal, clientAddress);
      return await transport.post(req, res, { principal: admitted.principal, clientAddress, request: appRequest }, () =>
        this.post(req),
      );
    } catch (error) {
      if (!res.headersSent)
        sink.json(500, failure(null, ErrorCode.InternalError, 'Internal error while handling the MCP request.'));
      else res.end();
      throw error;
    }
  }

  private userWithoutAuthTold = false;

  /**
   * The app's guard authenticated the request (it set `request.user`), but without `auth` the
   * module cannot know it: every caller is anonymous to it, so sessions, tasks and request states
   * are bound to nobody. Everything looks fine from outside, so the log says it, once.
   */
  private tellUserWithoutAuth(): void {
    this.userWithoutAuthTold = true;
    new Logger('McpModule').warn(
      "Requests to the MCP endpoint arrive authenticated by the app's guard (request.user is set), but McpModule has no `auth` option, so it treats every caller as anonymous: sessions, tasks and request states are bound to nobody, and scopes are not checked. Give McpModule `auth: { resource, authorizationServers }` (it then reads the principal from request.user), or `auth.principalFrom` for another shape.",
    );
  }

  /** The Origin/Host policy and bearer authentication every route passes; false once refused. */
  private admit(
    req: IncomingMessage,
    res: ServerResponse,
    sink: NodeResponseSink,
    appRequest: object,
  ): Admission | Promise<Admission> {
    const verdict = this.options.originPolicy.check(req);
    if (!verdict.ok) {
      sink.json(403, failure(null, ErrorCode.InvalidRequest, `Forbidden: ${verdict.reason}`));
      return { ok: false };
    }
    // Browser clients can read these only when exposed.
    if (req.headers.origin !== undefined)
      res.setHeader(
        'Access-Control-Expose-Headers',
        'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version, DPoP-Nonce',
      );
    // Without auth there is nothing to await: most calls then answer synchronously.
    if (!this.options.auth) {
      if (!this.userWithoutAuthTold && (appRequest as { user?: unknown }).user != null) this.tellUserWithoutAuth();
      return ADMITTED;
    }
    return this.options.auth
      .authenticate(req, res, appRequest)
      .then((outcome) => (outcome.ok ? { ok: true, principal: outcome.principal } : { ok: false }));
  }

  /** Maps a body-parser failure (raised before the controller runs) to the JSON-RPC error it is. */
  handleParserError(
    error: { type?: string; status?: number; body?: unknown; limit?: number; message?: string },
    res: ServerResponse,
    req?: IncomingMessage,
  ): boolean {
    const outcome = parserErrorOutcome(error, req?.headers['content-encoding'], this.options.maxBodyBytes);
    if (!outcome) return false;
    new NodeResponseSink(res).json(outcome.status, failure(null, outcome.code, outcome.message));
    return true;
  }

  /**
   * Graceful shutdown: refuses new sessions, calls and streams (503 + `Retry-After`), ends the
   * streams that can resume elsewhere, lets calls finish within `graceMs` and flushes the event store.
   */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    await this.engine.drain(graceMs);
  }

  /** Ends any session, whoever owns it (the admin view). */
  closeSession(sessionId: string): Promise<boolean> {
    return this.engine.closeSession(sessionId);
  }

  /** Streams this instance holds for a session (the admin view). */
  openStreams(sessionId: string): number {
    return this.engine.openStreams(sessionId);
  }

  /** Ends every open stream; called on application shutdown. */
  close(): void {
    // A client that reconnects its stream meanwhile is refused, so nothing holds the server open.
    this.draining = true;
    this.engine.close();
    this.legacySse?.close();
  }

  /** Sends a server-initiated message on a legacy session's GET stream (see McpEngine). */
  sendToSession(sessionId: string, message: JsonRpcMessage): boolean {
    return this.engine.sendToSession(sessionId, message);
  }

  /** Delivers a change to the legacy sessions of this process that have a GET stream. */
  async deliverChange(event: McpChangeEvent): Promise<void> {
    this.engine.deliverChange(event);
    this.legacySse?.deliverChange(event);
  }

  private facts(req: IncomingMessage, appRequest: object, principal: McpPrincipal | undefined): McpTransportFacts {
    const accept = header(req, 'accept');
    return new NodeTransportFacts(
      req,
      appRequest,
      principal,
      accept === undefined || accept.includes('text/event-stream') || accept.includes('*/*'),
    );
  }

  /**
   * A POST body as the engine takes it. Streamable HTTP bodies are JSON; a form or text body
   * (which a browser may send cross-site without a preflight) is never read as a message.
   */
  private post(req: IncomingMessage): McpBodyOutcome | Promise<McpBodyOutcome> {
    if (!isJsonContentType(header(req, 'content-type'))) {
      return BodyRefusals.notJsonContentType(header(req, 'content-type'));
    }
    return this.readBody(req);
  }

  private readBody(req: IncomingMessage): McpBodyOutcome | Promise<McpBodyOutcome> {
    const preParsed = (req as IncomingMessage & { body?: unknown }).body;
    const limit = this.options.maxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return BodyRefusals.overMaxBodyBytes(limit);
    // A JSON body parser turns an empty body into {}; it is not JSON, so it is a parse error.
    if (declared === 0) return BodyRefusals.empty();
    if (preParsed !== undefined && !Buffer.isBuffer(preParsed) && typeof preParsed !== 'string') {
      return { ok: true, value: preParsed };
    }
    if (preParsed === undefined) return this.streamBody(req);
    const text = Buffer.isBuffer(preParsed) ? preParsed.toString('utf8') : (preParsed as string);
    if (Buffer.byteLength(text) > limit) return BodyRefusals.overMaxBodyBytes(limit);
    return parseBody(text);
  }

  /** Reads a body no framework parsed, up to maxBodyBytes. */
  private async streamBody(req: IncomingMessage): Promise<McpBodyOutcome> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > this.options.maxBodyBytes) return BodyRefusals.overMaxBodyBytes(this.options.maxBodyBytes);
      chunks.push(chunk as Buffer);
    }
    return parseBody(Buffer.concat(chunks).toString('utf8'));
  }
}

function parseBody(text: string): McpBodyOutcome {
  if (text.trim() === '') return BodyRefusals.empty();
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return BodyRefusals.notJson();
  }
}

/** `application/json`, with or without parameters such as `charset`. */
function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && value.split(';')[0].trim().toLowerCase() === 'application/json';
}
