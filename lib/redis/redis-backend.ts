import { randomBytes } from 'node:crypto';
import {
  describeError,
  loadIoredis,
  redisAddress,
  RedisHealth,
  RedisKeys,
  RedisScripts,
  type McpRedisClient,
  type McpRedisOptions,
  type RedisLogger,
} from './redis-client.js';
import { HEARTBEAT } from './redis-scripts.js';
import { RedisEventStore } from './redis-event.store.js';
import { RedisNotificationBus } from './redis-notification.bus.js';
import { RedisRelay } from './redis-relay.js';
import { RedisReplayGuard } from './redis-replay.guard.js';
import { RedisSessionStore } from './redis-session.store.js';

/** Injection token of the module's Redis backend (`null` without the `redis` option). */
// A registry symbol, like the tokens in mcp.constants.ts: both builds of the package must agree.
export const MCP_REDIS = Symbol.for('nestjs-model-context:MCP_REDIS');

/**
 * The secret that signs request states, and keys what must agree across instances (cursors,
 * session-id labels): shared through Redis when the app gave none and `redis` is on.
 */
export function requestStateSecret(
  options: { requestState: { secret: Buffer; shared?: boolean } },
  redis: McpRedisBackend | null,
): Buffer {
  return (options.requestState.shared && redis?.stateSecret) || options.requestState.secret;
}

export interface RedisBackendSettings {
  /** The server name: the default key prefix is `mcp:<name>:`. */
  name: string;
  idleTtlMs: number;
  maxSessions: number;
  /** Fetch (or create) the requestState secret shared by every instance. */
  sharedStateSecret: boolean;
  logger?: RedisLogger;
  /** How long the bootstrap waits for Redis. @default 5000 */
  connectTimeoutMs?: number;
  /** `limits.eventStoreBytesPerStream`. @default 1048576 */
  eventStoreBytesPerStream?: number;
  /** `limits.eventStoreBytesPerSession`. @default 4194304 */
  eventStoreBytesPerSession?: number;
  /** `limits.eventStoreBytesTotal`. @default 67108864 */
  eventStoreBytesTotal?: number;
  /**
   * The channels (after the key prefix) of the packs' stores that {@link McpRedisBackend.attach}
   * routes to (the packs' `redisChannels`): subscribed with the bus and the relay when the backend
   * connects, so a store attached later has missed nothing and the connection's bounds and errors
   * cover them. @default none
   */
  channels?: readonly string[];
}

const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TTL_MS = 15_000;

/** What a pack's store in Redis is built from (see {@link McpRedisBackend.attach}). */
export interface RedisStoreParts {
  /** The command connection, its outages bounded and named for this store. */
  client: McpRedisClient;
  keys: RedisKeys;
  shardedPubSub: boolean;
  logger: RedisLogger;
}

/** A pack's store that hears one pub/sub channel of the backend (its changes, its signals). */
export interface RedisChannelStore {
  readonly channel: string;
  dispatch(message: string): void;
}

/**
 * Everything the module keeps in Redis, on one command connection plus one pub/sub connection:
 * sessions, SSE events, the notification bus, requestState nonces and the relay. One instance per
 * McpModule; Nest calls `onApplicationShutdown`.
 *
 * @publicApi
 */
export class McpRedisBackend {
  readonly instanceId = randomBytes(9).toString('base64url');
  readonly sessions: RedisSessionStore;
  readonly events: RedisEventStore;
  readonly bus: RedisNotificationBus;
  readonly replayGuard: RedisReplayGuard;
  readonly relay: RedisRelay;
  /** The shared requestState secret, when `sharedStateSecret` was asked for. */
  stateSecret?: Buffer;
  /** The command connection's outages: bounds commands, names failures, logs transitions. */
  readonly health: RedisHealth;
  private heartbeat?: NodeJS.Timeout;
  private closed = false;
  private readonly scripts: RedisScripts;
  private readonly indexTtlMs: number;
  /** The channels packs' stores hear, beside the bus and the relay. */
  private readonly channels = new Map<string, (message: string) => void>();
  private readonly sharded: boolean;
  private readonly packChannels: readonly string[];

  private constructor(
    readonly client: McpRedisClient,
    private readonly subscriber: McpRedisClient,
    private readonly ownsClient: boolean,
    readonly keys: RedisKeys,
    options: McpRedisOptions,
    settings: RedisBackendSettings,
  ) {
    const maxEventsPerStream = options.maxEventsPerStream ?? 1000;
    const shardedPubSub = shardedPubSubOf(options);
    const streamTtlMs = options.streamTtlMs ?? 5 * 60_000;
    this.health = new RedisHealth(client, {
      where: redisAddress(options.url, options.connection, options.client),
      commandTimeoutMs: options.commandTimeoutMs ?? 2_000,
      retryAfterS: options.retryAfterS ?? 2,
      logger: settings.logger,
    });
    const logger = this.health.logger;
    const health = this.health;
    this.scripts = new RedisScripts(client);
    // The indexes live as long as a session can, and at least until the next heartbeat.
    this.indexTtlMs = Math.max(settings.idleTtlMs, HEARTBEAT_TTL_MS);
    this.sessions = new RedisSessionStore(health.view('the session store'), keys, {
      idleTtlMs: settings.idleTtlMs,
      maxSessions: settings.maxSessions,
      shardedPubSub,
    });
    this.events = new RedisEventStore(health.view('the SSE event store'), keys, {
      maxEventsPerStream,
      maxBytesPerStream: settings.eventStoreBytesPerStream,
      maxBytesPerSession: settings.eventStoreBytesPerSession,
      maxBytesTotal: settings.eventStoreBytesTotal,
      ttlMs: streamTtlMs,
      instanceId: this.instanceId,
      logger,
      shardedPubSub,
    });
    this.bus = new RedisNotificationBus(health.view('the notification bus'), keys, {
      maxEventsPerStream,
      streamTtlMs,
      logger,
      shardedPubSub,
    });
    this.replayGuard = new RedisReplayGuard(health.view('the requestState nonce store'), keys);
    this.relay = new RedisRelay(health.view('the cross-instance relay'), keys, {
      instanceId: this.instanceId,
      maxEventsPerStream,
      streamTtlMs,
      idleTtlMs: settings.idleTtlMs,
      logger,
      shardedPubSub,
    });
    this.sharded = shardedPubSub;
    this.packChannels = (settings.channels ?? []).map((name) => `${keys.prefix}${name}`);
  }

  /**
   * Keeps a pack's store in this Redis (tasks): builds it on the command connection, named `what`
   * in outage messages, and routes the messages of its channel (one of the settings' `channels`) to it.
   */
  attach<T extends RedisChannelStore>(what: string, build: (parts: RedisStoreParts) => T): T {
    const store = build({
      client: this.health.view(what),
      keys: this.keys,
      shardedPubSub: this.sharded,
      logger: this.health.logger,
    });
    if (!this.packChannels.includes(store.channel))
      throw new Error(
        `${what}: its channel "${store.channel}" is none the Redis backend subscribes to. Name it in its pack's \`redisChannels\`.`,
      );
    this.channels.set(store.channel, (message) => store.dispatch(message));
    return store;
  }

  /** Connects (or adopts `options.client`), checks Redis answers, and subscribes. */
  static async connect(options: McpRedisOptions, settings: RedisBackendSettings): Promise<McpRedisBackend> {
    const keys = new RedisKeys(options.keyPrefix ?? `mcp:${settings.name}:`);
    let client: McpRedisClient;
    if (options.client) {
      client = options.client;
    } else if (options.cluster) {
      const Cluster = await loadIoredisCluster();
      client = new Cluster(options.cluster.nodes, {
        redisOptions: { maxRetriesPerRequest: 3 },
        shardedSubscribers: shardedPubSubOf(options),
        ...options.cluster.options,
      });
    } else {
      const Redis = await loadIoredis();
      const connection = { maxRetriesPerRequest: 3, ...options.connection };
      client = options.url !== undefined ? new Redis(options.url, connection) : new Redis(connection);
    }
    const subscriber = client.duplicate();
    const backend = new McpRedisBackend(client, subscriber, options.client === undefined, keys, options, settings);
    const where =
      options.url !== undefined
        ? redactUrl(options.url)
        : options.client
          ? 'the given client'
          : options.cluster
            ? `the cluster ${options.cluster.nodes.map((node) => (typeof node === 'string' ? redactUrl(node) : `${node.host}:${node.port}`)).join(', ')}`
            : 'the configured connection';
    backend.reportErrors(settings.logger, where);
    const sharded = shardedPubSubOf(options);
    subscriber.on(sharded ? 'smessage' : 'message', (channel: string, message: string) => {
      if (channel === keys.relayChannel) backend.relay.dispatch(message);
      else if (channel === keys.busChannel) backend.bus.dispatch(message);
      else backend.channels.get(channel)?.(message);
    });
    // ioredis subscribes again after a reconnect; pokes sent meanwhile were lost, so re-read.
    subscriber.on('ready', () => backend.relay.catchUp());
    if (sharded) subscriber.on('subscribersReady', () => backend.relay.catchUp());
    try {
      await withTimeout(
        Promise.all([
          client.call('PING'),
          // Both channels carry the prefix's hash tag: one slot, so one sharded subscription.
          sharded
            ? shardedSubscribe(subscriber, keys.busChannel, keys.relayChannel, ...backend.packChannels)
            : subscriber.subscribe(keys.busChannel, keys.relayChannel, ...backend.packChannels),
        ]),
        settings.connectTimeoutMs ?? 5_000,
      );
      if (settings.sharedStateSecret) backend.stateSecret = await backend.sharedSecret();
      await backend.beat();
    } catch (error) {
      await backend.close();
      throw new Error(
        `McpModule: could not use Redis at ${where} (${describeError(error)}). Start Redis or fix the "redis" option (url, connection or client).`,
      );
    }
    backend.heartbeat = setInterval(() => void backend.beat().catch(() => undefined), HEARTBEAT_MS);
    backend.heartbeat.unref();
    return backend;
  }

  /** Round-trip time of a PING, in milliseconds; rejects when Redis does not answer in time. */
  async ping(timeoutMs = 2_000): Promise<number> {
    const started = performance.now();
    await withTimeout(this.client.call('PING'), timeoutMs);
    return Math.round((performance.now() - started) * 100) / 100;
  }

  /** The state of the command and pub/sub connections (ioredis: `ready` when usable). */
  get status(): { client: string; subscriber: string } {
    return { client: this.client.status, subscriber: this.subscriber.status };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.health.close();
    clearInterval(this.heartbeat);
    this.sessions.close();
    this.relay.close();
    this.bus.close();
    const quit = async (connection: McpRedisClient): Promise<void> => {
      try {
        await withTimeout(connection.quit(), 1_000);
      } catch {
        connection.disconnect();
      }
    };
    await Promise.all([
      // Bounded: a hung Redis must not hold the shutdown.
      withTimeout(this.client.call('DEL', this.keys.instance(this.instanceId)), 1_000)
        .catch(() => undefined)
        .then(() => (this.ownsClient ? quit(this.client) : undefined)),
      quit(this.subscriber),
    ]);
  }

  private async beat(): Promise<void> {
    const keys = [this.keys.instance(this.instanceId), this.keys.sessionIndex, this.keys.getStreams];
    await this.scripts.run(HEARTBEAT, keys, [HEARTBEAT_TTL_MS, this.indexTtlMs]);
  }

  /**
   * One secret for every instance of the endpoint, so that a requestState minted by one verifies
   * on all. The first instance creates it; it is a single key and is kept without expiry.
   */
  private async sharedSecret(): Promise<Buffer> {
    await this.client.call('SET', this.keys.stateSecret, randomBytes(32).toString('base64url'), 'NX');
    const secret = (await this.client.call('GET', this.keys.stateSecret)) as string | null;
    if (!secret) throw new Error('the shared requestState secret could not be read back');
    return Buffer.from(secret, 'base64url');
  }

  /** ioredis reports connection trouble as 'error' events; without a listener it prints them raw. */
  private reportErrors(logger: RedisLogger | undefined, where: string): void {
    let last = 0;
    const report = (error: unknown): void => {
      // Once connected, RedisHealth logs each outage once, when it starts and when it ends.
      if (this.closed || this.health.connected || Date.now() - last < 10_000) return;
      last = Date.now();
      logger?.warn(`Redis at ${where}: ${describeError(error)} (ioredis keeps reconnecting)`);
    };
    if (this.ownsClient) this.client.on('error', report);
    this.subscriber.on('error', report);
  }
}

/** Sharded pub/sub is the default on a Cluster the module connects to itself. */
function shardedPubSubOf(options: McpRedisOptions): boolean {
  return options.shardedPubSub ?? options.cluster !== undefined;
}

function shardedSubscribe(subscriber: McpRedisClient, ...channels: string[]): Promise<unknown> {
  if (typeof subscriber.ssubscribe !== 'function') {
    return Promise.reject(
      new Error(
        '"redis.shardedPubSub" needs a client with ssubscribe (ioredis 5.4 or later); upgrade ioredis or set shardedPubSub: false',
      ),
    );
  }
  return subscriber.ssubscribe(...channels);
}

/** `ioredis`'s Cluster class, loaded like the Redis class: only when a cluster is configured. */
async function loadIoredisCluster(): Promise<
  new (nodes: unknown[], options?: Record<string, unknown>) => McpRedisClient
> {
  await loadIoredis();
  const loaded = (await import('ioredis' as string)) as Record<string, unknown>;
  const ctor = loaded.Cluster as
    (new (nodes: unknown[], options?: Record<string, unknown>) => McpRedisClient) | undefined;
  if (typeof ctor !== 'function')
    throw new Error(
      'McpModule: the installed "ioredis" package exports no Cluster class. Install ioredis 5 ("npm install ioredis@5").',
    );
  return ctor;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Keeps the password of a Redis URL out of logs and error messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured URL';
  }
}
