import { createHash } from 'node:crypto';
import { McpStoreUnavailableError } from '../protocol/errors.js';

/**
 * The part of an `ioredis` client this module uses. Structural, so that the package's typings do
 * not depend on `ioredis` being installed, and so that a compatible client can be passed in.
 *
 * @publicApi
 */
export interface McpRedisClient {
  call(command: string, ...args: Array<string | number | Buffer>): Promise<unknown>;
  duplicate(): McpRedisClient;
  subscribe(...channels: string[]): Promise<unknown>;
  /** Sharded pub/sub (ioredis 5.4+), used with `shardedPubSub`. */
  ssubscribe?(...channels: string[]): Promise<unknown>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
  readonly status: string;
}

/**
 * Redis for running several instances as one server: sessions, the SSE event store, the
 * notification bus, single-use request states and cross-instance routing.
 *
 * @publicApi
 */
export interface McpRedisOptions {
  /** A `redis://` or `rediss://` URL. The module opens (and closes) two connections. */
  url?: string;
  /**
   * Extra `ioredis` constructor options, merged with `url`. For Sentinel: `{ sentinels: [{ host,
   * port }], name: 'mymaster' }` (ioredis follows failovers).
   */
  connection?: Record<string, unknown>;
  /**
   * A Redis Cluster (or a managed Redis in cluster mode): its seed nodes and extra `ioredis`
   * `Cluster` options. Every key carries the prefix's hash tag, so one deployment lives in one slot.
   */
  cluster?: { nodes: Array<string | { host: string; port: number }>; options?: Record<string, unknown> };
  /**
   * Sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis 7): in a Cluster a message then stays on the shard
   * of the deployment's slot instead of being broadcast to every node. A `client` that is an
   * ioredis `Cluster` needs `shardedSubscribers: true` for it.
   * @default true with `cluster`, false otherwise
   */
  shardedPubSub?: boolean;
  /**
   * An existing `ioredis` client (`new Redis(...)` or `new Cluster(...)`). The module duplicates it for pub/sub and never closes it;
   * closing it is up to you, after the application has shut down.
   */
  client?: McpRedisClient;
  /**
   * Prefix of every key and channel. Instances that serve one endpoint must share it. Without a
   * hash tag (`{...}`) it is wrapped in one, so the keys are `{mcp:<name>:}…`.
   * @default `mcp:<name>:`
   */
  keyPrefix?: string;
  /** Events kept per SSE stream for `Last-Event-ID` resumption (approximate cap). @default 1000 */
  maxEventsPerStream?: number;
  /** How long an SSE stream stays replayable after its last event. @default 300000 (5 minutes) */
  streamTtlMs?: number;
  /**
   * Longest wait for one Redis command. Past it (Redis hung, or a connection that is not yet known
   * to be lost) the request that needed it answers 503. While the connection is down, commands
   * fail at once rather than queue. @default 2000
   */
  commandTimeoutMs?: number;
  /** `Retry-After` (seconds) of the 503 answered while Redis is unreachable. @default 2 */
  retryAfterS?: number;
}

/** Loads `ioredis` only when Redis is configured: it is an optional peer dependency. */
export async function loadIoredis(): Promise<new (...args: unknown[]) => McpRedisClient> {
  const specifier = 'ioredis';
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(
      `McpModule: the "redis" option needs the "ioredis" package, which could not be loaded (${(error as Error).message}). Install it with "npm install ioredis@5", or remove the "redis" option to keep state in memory.`,
    );
  }
  const ctor = (loaded.Redis ?? loaded.default) as (new (...args: unknown[]) => McpRedisClient) | undefined;
  if (typeof ctor !== 'function') {
    throw new Error(
      'McpModule: the installed "ioredis" package exports no Redis client class. Install ioredis 5 ("npm install ioredis@5").',
    );
  }
  return ctor;
}

/**
 * Runs Lua scripts by SHA, loading a script on its first use and again after a Redis restart
 * (NOSCRIPT), so each call sends the digest rather than the source.
 */
export class RedisScripts {
  private readonly digests = new Map<string, { sha: string; source: string }>();

  /** `sharded`: the scripts publish with SPUBLISH (sharded pub/sub, Redis 7) instead of PUBLISH. */
  constructor(
    private readonly client: McpRedisClient,
    private readonly sharded = false,
  ) {}

  async run(script: string, keys: string[], args: Array<string | number>): Promise<unknown> {
    let loaded = this.digests.get(script);
    if (loaded === undefined) {
      const source = this.sharded ? script.replaceAll("redis.call('PUBLISH',", "redis.call('SPUBLISH',") : script;
      loaded = { sha: createHash('sha1').update(source).digest('hex'), source };
      this.digests.set(script, loaded);
    }
    try {
      return await this.client.call('EVALSHA', loaded.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      return this.client.call('EVAL', loaded.source, keys.length, ...keys, ...args);
    }
  }
}

/**
 * Key and channel names, all under one prefix that carries a Redis Cluster hash tag: a prefix
 * without one is wrapped in braces (`mcp:app:` → `{mcp:app:}`), so that every key of a
 * deployment is in one slot and each Lua script can touch all the keys it needs.
 */
export class RedisKeys {
  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = /\{[^}]+\}/.test(prefix) ? prefix : `{${prefix}}`;
  }

  session(id: string): string {
    return `${this.prefix}session:${id}`;
  }
  /** When a session was last used, in µs of Redis's clock. */
  sessionUsed(id: string): string {
    return `${this.prefix}used:${id}`;
  }
  /** All sessions, by owner tag (lexicographic ZSET). */
  get sessionIndex(): string {
    return `${this.prefix}sessions`;
  }
  /** Set while the session index is full of live sessions. */
  get sessionsFull(): string {
    return `${this.prefix}sessionsfull`;
  }
  /** Session id → the id of its current GET stream. */
  get getStreams(): string {
    return `${this.prefix}getstreams`;
  }
  stream(streamId: string): string {
    return `${this.prefix}stream:${streamId}`;
  }
  streamMeta(streamId: string): string {
    return `${this.prefix}stream:${streamId}:meta`;
  }
  /** The POST streams of a session. */
  sessionStreams(sessionId: string): string {
    return `${this.prefix}sessionstreams:${sessionId}`;
  }
  sessionEvents(sessionId: string): string {
    return `${this.prefix}sessionevents:${sessionId}`;
  }
  sessionBytes(sessionId: string): string {
    return `${this.prefix}sessionbytes:${sessionId}`;
  }
  /** Keys of the byte accounting of the event store, in STREAM_APPEND's KEYS order. */
  get eventAccounting(): string[] {
    return ['eventstreams', 'eventbytes', 'eventsession', 'eventtotal'].map((name) => this.prefix + name);
  }
  get eventClock(): string {
    return `${this.prefix}eventclock`;
  }
  get eventTotal(): string {
    return `${this.prefix}eventtotal`;
  }
  nonce(nonce: string): string {
    return `${this.prefix}nonce:${nonce}`;
  }
  instance(id: string): string {
    return `${this.prefix}instance:${id}`;
  }
  get stateSecret(): string {
    return `${this.prefix}state-secret`;
  }
  /** Change events for every instance's listeners. */
  get busChannel(): string {
    return `${this.prefix}bus`;
  }
  /** Stream pokes and client answers between instances. */
  get relayChannel(): string {
    return `${this.prefix}relay`;
  }
}

/** What the Redis pieces log through; the module passes a Nest logger. */
export interface RedisLogger {
  error(message: string, trace?: string): void;
  warn(message: string): void;
  /** Informational lines (Redis reachable again); `warn` when absent. */
  log?(message: string): void;
}

/** Reply errors that mean "this Redis cannot serve now", not "this command is wrong". */
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY)\b/;
/** ioredis' own errors and socket errors: the connection, not the command, failed. */
const CONNECTION_FAILURE =
  /Connection is closed|Stream isn't writeable|max retries per request|Command timed out|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|socket/i;

export interface RedisHealthOptions {
  /** Where Redis is, for messages (`host:port`, never a password). */
  where: string;
  commandTimeoutMs: number;
  retryAfterS: number;
  logger?: RedisLogger;
}

/**
 * Watches one command connection and bounds every command sent through its views: a command
 * waits at most `commandTimeoutMs`, fails at once while the connection is known to be down (so no
 * request queues behind an outage), and fails as {@link McpStoreUnavailableError} when the
 * connection rather than the command failed. Outages are logged once when they start and once
 * when they end; the per-operation warnings of the stores are folded into those two lines, so an
 * outage under load does not flood the log.
 */
export class RedisHealth {
  private down = false;
  private wasReady = false;
  private since = 0;
  private refused = 0;
  private suppressed = 0;
  private lastCause = 'the connection closed';
  private closed = false;
  /** A logger for the stores: quiet while an outage already said what is wrong. */
  readonly logger: RedisLogger;

  constructor(
    private readonly client: McpRedisClient,
    private readonly options: RedisHealthOptions,
  ) {
    const sink = options.logger;
    this.logger = {
      error: (message, trace) => (this.down ? void this.suppressed++ : sink?.error(message, trace)),
      warn: (message) => (this.down ? void this.suppressed++ : sink?.warn(message)),
    };
    this.wasReady = client.status === 'ready';
    client.on('ready', () => {
      this.wasReady = true;
      this.markUp();
    });
    client.on('error', (error: unknown) => {
      this.lastCause = describeError(error);
    });
    // 'close' is the moment the connection is lost; 'error' may come before, after, or never.
    client.on('close', () => {
      if (this.wasReady) this.markDown(this.lastCause);
    });
  }

  /** True once the connection answered: before that, bootstrap reports failures itself. */
  get connected(): boolean {
    return this.wasReady;
  }

  /** The backend is shutting down: the connection closing is no outage. */
  close(): void {
    this.closed = true;
  }

  /** True while the last outage has not ended. */
  get unavailable(): boolean {
    return this.down;
  }

  /** A client for one store: the same connection, its commands bounded, its failures named. */
  view(store: string): McpRedisClient {
    const client = this.client;
    return {
      call: (command, ...args) => this.call(store, command, args),
      duplicate: () => client.duplicate(),
      subscribe: (...channels) => client.subscribe(...channels),
      ...(client.ssubscribe && { ssubscribe: (...channels: string[]) => client.ssubscribe!(...channels) }),
      on: (event, listener) => client.on(event, listener),
      quit: () => client.quit(),
      disconnect: () => client.disconnect(),
      get status() {
        return client.status;
      },
    };
  }

  private async call(store: string, command: string, args: Array<string | number | Buffer>): Promise<unknown> {
    if (this.wasReady && this.client.status !== 'ready') {
      this.refused++;
      throw this.unavailableError(store, this.lastCause);
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${this.options.commandTimeoutMs} ms (redis.commandTimeoutMs)`)),
        this.options.commandTimeoutMs,
      );
    });
    const sent = this.client.call(command, ...args);
    try {
      const result = await Promise.race([sent, timeout]);
      this.wasReady = true;
      if (this.down) this.markUp();
      return result;
    } catch (error) {
      const cause = describeError(error);
      if (
        error instanceof Error &&
        !UNAVAILABLE_REPLY.test(cause) &&
        !CONNECTION_FAILURE.test(cause) &&
        !cause.startsWith('no answer within')
      ) {
        throw error;
      }
      // A command abandoned on timeout may still settle; nothing awaits it any more.
      sent.catch(() => undefined);
      this.refused++;
      this.lastCause = cause;
      this.markDown(cause);
      throw this.unavailableError(store, cause);
    } finally {
      clearTimeout(timer);
    }
  }

  private unavailableError(store: string, cause: string): McpStoreUnavailableError {
    return new McpStoreUnavailableError(
      `Service unavailable: ${store} (Redis at ${this.options.where}) is unreachable: ${cause}. Retry shortly (after ${this.options.retryAfterS} s); the server reconnects on its own.`,
      this.options.retryAfterS,
    );
  }

  private markDown(cause: string): void {
    if (this.down || this.closed) return;
    this.down = true;
    this.since = Date.now();
    this.refused = 0;
    this.suppressed = 0;
    this.options.logger?.error(
      `Redis at ${this.options.where} is unreachable (${cause}): requests that need it (legacy sessions, resumable SSE streams, cross-instance routing) answer 503 until it is back; ioredis keeps reconnecting, and this is logged again only when it is.`,
    );
  }

  private markUp(): void {
    if (!this.down || this.closed) return;
    this.down = false;
    const seconds = ((Date.now() - this.since) / 1000).toFixed(1);
    const message = `Redis at ${this.options.where} is reachable again after ${seconds} s; ${this.refused} Redis command(s) were refused meanwhile${this.suppressed ? ` and ${this.suppressed} related log line(s) held back` : ''}.`;
    const logger = this.options.logger;
    if (logger?.log) logger.log(message);
    else logger?.warn(message);
  }
}

/** `host:port` of a Redis URL or ioredis options, for messages (never the password). */
export function redisAddress(
  url: string | undefined,
  connection: Record<string, unknown> | undefined,
  client?: McpRedisClient,
): string {
  if (url !== undefined) {
    try {
      const parsed = new URL(url);
      return `${parsed.hostname || '127.0.0.1'}:${parsed.port || 6379}`;
    } catch {
      return 'the configured URL';
    }
  }
  const options = (connection ?? (client as { options?: Record<string, unknown> } | undefined)?.options) as
    { host?: unknown; port?: unknown; path?: unknown } | undefined;
  if (typeof options?.path === 'string') return options.path;
  return `${typeof options?.host === 'string' ? options.host : '127.0.0.1'}:${typeof options?.port === 'number' || typeof options?.port === 'string' ? options.port : 6379}`;
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Checks the `redis` option of McpModule; returns one phrase per problem. @internal */
export function redisOptionProblems(options: {
  redis?: McpRedisOptions;
  notificationBus?: unknown;
  sessions?: { store?: unknown; eventStore?: unknown };
}): string[] {
  const redis = options.redis;
  if (redis === undefined) return [];
  if (typeof redis !== 'object' || redis === null)
    return ['"redis" must be an object such as { url: "redis://127.0.0.1:6379" } or { client }'];
  const problems: string[] = [];
  if (redis.url !== undefined && typeof redis.url !== 'string') problems.push('"redis.url" must be a string');
  if (
    redis.client !== undefined &&
    (typeof redis.client !== 'object' ||
      typeof redis.client.call !== 'function' ||
      typeof redis.client.duplicate !== 'function')
  ) {
    problems.push('"redis.client" must be an ioredis client (new Redis(...))');
  }
  if (
    redis.client !== undefined &&
    (redis.url !== undefined || redis.connection !== undefined || redis.cluster !== undefined)
  ) {
    problems.push('"redis" takes either a client or url/connection/cluster, not both');
  }
  if (redis.cluster !== undefined) {
    if (
      typeof redis.cluster !== 'object' ||
      redis.cluster === null ||
      !Array.isArray(redis.cluster.nodes) ||
      redis.cluster.nodes.length === 0
    ) {
      problems.push('"redis.cluster" must be { nodes: ["redis://host:port", ...] } with at least one seed node');
    }
    if (redis.url !== undefined)
      problems.push('"redis" takes either a url or a cluster, not both (put the nodes in "redis.cluster.nodes")');
  }
  if (
    redis.keyPrefix !== undefined &&
    (typeof redis.keyPrefix !== 'string' || redis.keyPrefix.length === 0 || /\s/.test(redis.keyPrefix))
  ) {
    problems.push('"redis.keyPrefix" must be a non-empty string without spaces');
  }
  if (redis.shardedPubSub !== undefined && typeof redis.shardedPubSub !== 'boolean')
    problems.push('"redis.shardedPubSub" must be true or false');
  for (const key of ['maxEventsPerStream', 'streamTtlMs', 'commandTimeoutMs', 'retryAfterS'] as const) {
    const value = redis[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0))
      problems.push(`"redis.${key}" must be a positive integer`);
  }
  const clashes = [
    options.sessions?.store !== undefined && 'sessions.store',
    options.sessions?.eventStore !== undefined && 'sessions.eventStore',
    options.notificationBus !== undefined && 'notificationBus',
  ].filter((x): x is string => typeof x === 'string');
  if (clashes.length) {
    problems.push(
      `"redis" provides ${clashes.join(', ')} itself; remove ${clashes.length > 1 ? 'them' : 'it'} or remove "redis"`,
    );
  }
  return problems;
}
