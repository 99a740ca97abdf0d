import { requestState, type RequestEnvelope } from '../protocol/context.js';
import { addressOwner } from '../protocol/principal.js';
import { McpError } from '../protocol/errors.js';
import type { ServerRequestBroker } from '../protocol/interaction.js';
import { ErrorCode, failure, success, type JsonRpcId, type JsonRpcRequest } from '../protocol/json-rpc.js';
import type { JsonObject, LogLevel } from '../protocol/mcp-types.js';
import { isObject, type McpDispatcher } from '../protocol/dispatcher.js';
import {
  newSessionId,
  patchSession,
  type McpSession,
  type McpSessionField,
  type McpSessionStore,
} from '../protocol/session-store.js';
import type { ResolvedMcpLimits } from './limits.js';
import {
  DEFAULT_LEGACY_VERSION,
  LATEST_LEGACY_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSIONS,
  isModernVersionString,
  isSupportedLegacyVersion,
} from '../protocol/versions.js';
import type { McpRefusal, McpTransportFacts } from './sink.js';
import type { StreamHub } from './streams.js';
import { checkState, connectionOf, type SessionHooks } from './session-hooks.js';

/**
 * How an engine keeps legacy sessions: `stateful` in the session store, named by `Mcp-Session-Id`;
 * `stateless` not at all; `process` as one session for the whole connection (stdio, in process),
 * which `initialize` (re)starts and every later message belongs to.
 */
export type McpSessionMode = 'stateful' | 'stateless' | 'process';

export interface LegacySessionsOptions {
  mode: McpSessionMode;
  limits: ResolvedMcpLimits;
  /** `sessions.maxSessions`, named in the refusal when the store is full. */
  maxSessions: number;
  defaultLogLevel?: LogLevel;
  /** `sessions.onSession` and the state bound. */
  hooks?: SessionHooks;
}

/** Seconds a client refused for `sessions.maxSessions` is asked to wait before retrying. */
const SESSIONS_FULL_RETRY_AFTER_S = 30;
/** Client capabilities the protocol defines; a session keeps these and drops the rest. */
const KEPT_CAPABILITIES = ['roots', 'sampling', 'elicitation', 'experimental', 'tasks', 'extensions'] as const;
/** `clientInfo` (Implementation) fields a session keeps. */
const KEPT_CLIENT_INFO = ['name', 'version', 'title', 'description', 'websiteUrl', 'icons'] as const;

/** A JSON answer: an error to refuse with, or `initialize`'s result. */
export type JsonAnswer = {
  status: number;
  headers?: Record<string, string>;
  body: McpRefusal['body'] | ReturnType<typeof success>;
};

const refuse = (status: number, id: JsonRpcId | null, code: number, message: string): McpRefusal => ({
  status,
  body: failure(id, code, message),
});

/**
 * Legacy sessions (2025-03-26 … 2025-11-25): `initialize` with its bounded params and per-owner
 * caps, the resolution of every later message to its session and principal, and the version rule.
 */
export class LegacySessions {
  /** In `process` mode, the connection's session once `initialize` ran. */
  private current?: string;

  constructor(
    private readonly server: McpDispatcher,
    private readonly store: McpSessionStore,
    private readonly broker: ServerRequestBroker,
    private readonly streams: StreamHub,
    private readonly options: LegacySessionsOptions,
  ) {}

  /** In `process` mode, the connection's session id once `initialize` ran. */
  get connectionSession(): string | undefined {
    return this.current;
  }

  /** In `process` mode, ends the connection's session (the connection closed); returns it as it was. */
  endConnection(): McpSession | undefined {
    if (this.current === undefined) return undefined;
    // A `process`-mode store (ConnectionSessionStore) answers synchronously.
    const ended = this.store.get(this.current) as McpSession | undefined;
    void this.store.delete(this.current);
    this.current = undefined;
    return ended;
  }

  /**
   * The session a message names, for every request and client answer. A session belongs to the
   * principal that opened it; to anyone else it does not exist.
   */
  async resolve(facts: McpTransportFacts, id: JsonRpcId | null): Promise<McpSession | McpRefusal> {
    const sessionId = this.options.mode === 'process' ? this.current : facts.header('mcp-session-id');
    if (sessionId === undefined) {
      return refuse(
        400,
        id,
        ErrorCode.InvalidRequest,
        'Bad Request: the Mcp-Session-Id header is required. Call initialize first and send the session id it returns on every request.',
      );
    }
    const session = await this.store.get(sessionId);
    if (!session || (session.principal ?? null) !== (facts.principal?.id ?? null)) {
      return refuse(
        404,
        id,
        ErrorCode.InvalidRequest,
        'Session not found: it expired or was deleted. Start a new session with initialize.',
      );
    }
    return session;
  }

  /** The envelope of a non-initialize legacy message, or the refusal to answer. */
  async envelope(
    facts: McpTransportFacts,
    id: JsonRpcId | null,
    method?: string,
  ): Promise<RequestEnvelope | McpRefusal> {
    let session: McpSession | undefined;
    if (this.options.mode === 'process' && this.current === undefined) {
      if (method !== 'ping') {
        return refuse(
          400,
          id,
          ErrorCode.InvalidRequest,
          `Invalid Request: ${method === undefined ? 'a batch' : `"${method}"`} before initialize. Send initialize first (protocol 2025-11-25 and older), or put params._meta["io.modelcontextprotocol/protocolVersion"] on every request (2026-07-28).`,
        );
      }
    } else if (this.options.mode !== 'stateless') {
      const resolved = await this.resolve(facts, id);
      if ('status' in resolved) return resolved;
      session = resolved;
    }
    let version =
      session?.protocolVersion ?? (this.options.mode === 'process' ? LATEST_LEGACY_VERSION : DEFAULT_LEGACY_VERSION);
    const headerVersion = facts.header('mcp-protocol-version');
    if (headerVersion !== undefined) {
      if (!isSupportedLegacyVersion(headerVersion)) {
        return refuse(
          400,
          id,
          ErrorCode.InvalidRequest,
          isModernVersionString(headerVersion)
            ? `Bad Request: MCP-Protocol-Version "${headerVersion}" is a stateless revision, which ${session ? `this session (negotiated at ${session.protocolVersion})` : 'a legacy request'} does not speak. Send ${headerVersion} requests with the version in params._meta and no Mcp-Session-Id, or send ${session ? 'the negotiated version' : `one of ${LEGACY_PROTOCOL_VERSIONS.join(', ')}`} here.`
            : `Bad Request: unsupported MCP-Protocol-Version "${headerVersion}". Supported: ${[...LEGACY_PROTOCOL_VERSIONS, ...MODERN_PROTOCOL_VERSIONS].join(', ')}.`,
        );
      }
      // On a session, features follow the version negotiated at initialize, never a per-request
      // claim: a downgrade to 2025-03-26 would re-enable batches and make every era rule depend on
      // what the client says per request.
      if (session && headerVersion !== session.protocolVersion) {
        return refuse(
          400,
          id,
          ErrorCode.InvalidRequest,
          `Bad Request: the MCP-Protocol-Version header "${headerVersion}" does not match the version this session negotiated ("${session.protocolVersion}"). Send the negotiated version on every request, or initialize a new session to use another one.`,
        );
      }
      version = headerVersion;
    }
    const envelope = this.sessionEnvelope(facts, version, session);
    // Without a session the hook seeds every request: there is nothing to keep the state in.
    const notification = id === null && method !== undefined;
    if (this.options.mode === 'stateless' && this.options.hooks?.seeds && !notification) {
      const seeded = await this.options.hooks.seed(connectionOf(facts, envelope), id);
      if ('status' in seeded) return seeded;
      envelope.state = requestState(seeded.state);
    }
    return envelope;
  }

  /** `initialize`: negotiates the version and, with sessions, opens one for the caller. */
  async initialize(facts: McpTransportFacts, message: JsonRpcRequest): Promise<JsonAnswer> {
    const params = message.params ?? {};
    const { protocolVersion, result } = this.server.initializeResult(params.protocolVersion);
    const headers: Record<string, string> = {};
    if (this.options.mode !== 'stateless') {
      const limits = this.options.limits;
      // Only what the protocol defines is kept, and bounded: every session holds it until it ends.
      const capabilities = pick(params.capabilities, KEPT_CAPABILITIES, isObject);
      const clientInfo = isObject(params.clientInfo)
        ? pick(params.clientInfo, KEPT_CLIENT_INFO, (v, field) =>
            field === 'icons' ? Array.isArray(v) : typeof v === 'string',
          )
        : undefined;
      const keptBytes = Buffer.byteLength(JSON.stringify({ capabilities, clientInfo }));
      if (keptBytes > limits.initializeParamsBytes) {
        return refuse(
          400,
          message.id,
          ErrorCode.InvalidParams,
          `Invalid params: the initialize capabilities and clientInfo are ${keptBytes} bytes, over the ${limits.initializeParamsBytes}-byte limit a session keeps (limits.initializeParamsBytes). Send smaller capabilities and clientInfo, or raise McpModule's limits.initializeParamsBytes.`,
        );
      }
      const session: McpSession = { id: newSessionId(), protocolVersion, capabilities, createdAt: Date.now() };
      if (clientInfo) session.clientInfo = clientInfo as unknown as McpSession['clientInfo'];
      const principal = facts.principal?.id;
      if (principal !== undefined) session.principal = principal;
      const hooks = this.options.hooks;
      if (hooks?.seeds) {
        const seeded = await hooks.seed(
          connectionOf(facts, {
            era: 'legacy',
            sessionId: session.id,
            protocolVersion,
            clientInfo: session.clientInfo,
            capabilities,
          }),
          message.id,
        );
        if ('status' in seeded) return seeded;
        session.state = seeded.state;
      }
      session.owner =
        principal !== undefined ? `principal:${principal}` : `address:${addressOwner(facts.clientAddress)}`;
      if (this.options.mode === 'process') {
        // The connection's session restarts; the previous one (and its stream) ends with it.
        if (this.current !== undefined) {
          const previous = this.current;
          this.options.hooks?.closed({ sessionId: previous, reason: 'deleted', session: this.endConnection() });
        }
        session.logLevel = this.options.defaultLogLevel;
        await this.store.create(session);
        this.current = session.id;
        return { status: 200, body: success(message.id, result) };
      }
      const maxPerOwner = principal !== undefined ? limits.sessionsPerPrincipal : limits.sessionsPerAddress;
      const created = await this.store.create(session, { maxPerOwner });
      if (created && !created.created) {
        const answer = refuse(
          503,
          message.id,
          ErrorCode.ServerBusy,
          `Server busy: it holds its maximum of ${this.options.maxSessions} sessions (sessions.maxSessions) and none has expired. Retry after ${SESSIONS_FULL_RETRY_AFTER_S} s, end unused sessions with DELETE, or raise McpModule's sessions.maxSessions.`,
        );
        return { ...answer, headers: { 'Retry-After': String(SESSIONS_FULL_RETRY_AFTER_S) } };
      }
      headers['Mcp-Session-Id'] = session.id;
    }
    return { status: 200, headers, body: success(message.id, result) };
  }

  /** Ends the caller's own session (DELETE): the ended session, or undefined when it names none of theirs. */
  async delete(facts: McpTransportFacts, sessionId: string): Promise<McpSession | undefined> {
    const owned = await this.store.get(sessionId);
    return owned !== undefined &&
      (owned.principal ?? null) === (facts.principal?.id ?? null) &&
      (await this.store.delete(sessionId))
      ? owned
      : undefined;
  }

  private sessionEnvelope(facts: McpTransportFacts, version: string, current: McpSession | undefined): RequestEnvelope {
    const store = this.store;
    // One field per write, and only once the store took it: a concurrent request's fields stay as
    // it stored them, and a session that ended meanwhile (or the close hook's copy of it) is untouched.
    const save = async <K extends McpSessionField>(
      session: McpSession,
      field: K,
      value: McpSession[K],
    ): Promise<boolean> => {
      const stored = (await store.update({ ...session, [field]: value }, [field])) !== false;
      if (stored) session[field] = value;
      return stored;
    };
    return {
      era: 'legacy',
      protocolVersion: version,
      capabilities: current?.capabilities ?? {},
      clientInfo: current?.clientInfo,
      session: current,
      transportRequest: facts.transportRequest,
      clientAddress: () => facts.clientAddress,
      principal: facts.principal?.id,
      auth: facts.principal,
      logLevel: current
        ? this.options.mode === 'process'
          ? current.logLevel
          : (current.logLevel ?? this.options.defaultLogLevel)
        : this.options.defaultLogLevel,
      setLogLevel: current
        ? async (level) => {
            await save(current, 'logLevel', level);
          }
        : undefined,
      broker: this.broker,
      state: current
        ? {
            persistent: true,
            read: () => current.state ?? {},
            write: async (value) => {
              const state = checkState(
                value,
                this.options.hooks?.options.stateBytes ?? this.options.limits.sessionStateBytes,
                'ctx.state() was given',
              );
              if (!(await save(current, 'state', state))) {
                throw new McpError(
                  ErrorCode.InternalError,
                  'Session state not stored: the session ended (DELETE, idle expiry, eviction or an admin close) while this call ran. Nothing was written; a new session starts from sessions.onSession again.',
                );
              }
            },
          }
        : undefined,
      subscribe: current
        ? async (uri) => {
            const subscriptions = new Set(current.subscriptions ?? []);
            if (subscriptions.has(uri)) return;
            const max = this.options.limits.subscriptionsPerSession;
            if (subscriptions.size >= max) {
              throw new McpError(
                ErrorCode.InvalidParams,
                `Too many subscriptions: this session already holds ${max} resource subscriptions, the limit (limits.subscriptionsPerSession). Call resources/unsubscribe for some first, or raise McpModule's limits.subscriptionsPerSession.`,
              );
            }
            if (await save(current, 'subscriptions', [...subscriptions, uri]))
              this.streams.subscribed(current.id, uri, true);
          }
        : undefined,
      unsubscribe: current
        ? async (uri) => {
            if (!current.subscriptions?.includes(uri)) return;
            await save(
              current,
              'subscriptions',
              current.subscriptions.filter((u) => u !== uri),
            );
            this.streams.subscribed(current.id, uri, false);
          }
        : undefined,
    };
  }
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

/**
 * The one session of a `process`-mode connection: it lives as long as the connection, so it
 * never expires and needs no caps.
 */
export class ConnectionSessionStore implements McpSessionStore {
  private session?: McpSession;

  create(session: McpSession): void {
    this.session = session;
  }
  get(id: string): McpSession | undefined {
    return this.session?.id === id ? this.session : undefined;
  }
  update(session: McpSession, changed?: readonly McpSessionField[]): boolean {
    if (this.session?.id !== session.id) return false;
    if (changed) patchSession(this.session, session, changed);
    else this.session = session;
    return true;
  }
  delete(id: string): boolean {
    if (this.session?.id !== id) return false;
    this.session = undefined;
    return true;
  }
}

export { addressOwner } from '../protocol/principal.js';
