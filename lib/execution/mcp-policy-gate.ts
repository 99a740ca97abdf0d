import {
  Inject,
  Injectable,
  Logger,
  type ExecutionContext,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ExternalContextCreator, ModuleRef } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { Observable } from 'rxjs';
import { randomUUID } from 'node:crypto';
import { McpStoreUnavailableError, ToolError } from '../protocol/errors.js';
import { addressOwner } from '../protocol/principal.js';
import { MCP_LIMITS } from '../common/mcp.constants.js';
import type { ResolvedMcpLimits } from '../engine/limits.js';
import { MCP_REDIS, type McpRedisBackend } from '../redis/redis-backend.js';
import { McpRedisThrottlerStorage, type McpThrottlerStorage } from '../redis/redis-throttler.storage.js';
import { InMemoryLeases, RedisLeases, type McpLeaseBackend } from '../redis/redis-leases.js';
import type { McpCall } from '../protocol/mcp-call.js';
import type { McpInvoker } from './mcp-handler.factory.js';
import { globalEnhancersOf } from './mcp-empty-pipeline.js';
import { MCP_CONTEXT_TYPE } from './mcp-execution-context.js';
import { CONCURRENCY_METADATA } from './mcp-policies.js';

// @nestjs/throttler's metadata keys and options token (strings, stable across its 5 and 6 lines):
// read without loading the package, which is an optional peer.
const LIMIT = 'THROTTLER:LIMIT';
const TTL = 'THROTTLER:TTL';
const BLOCK = 'THROTTLER:BLOCK_DURATION';
const TRACKER = 'THROTTLER:TRACKER';
const KEY_GENERATOR = 'THROTTLER:KEY_GENERATOR';
const SKIP = 'THROTTLER:SKIP';
const THROTTLER_OPTIONS = 'THROTTLER:MODULE_OPTIONS';
const PATCHED = Symbol.for('nestjs-model-context:throttler-guard-patched');

type Resolvable<T> = T | ((context: ExecutionContext) => T | Promise<T>);
type GetTracker = (req: Record<string, any>, context: ExecutionContext) => string | Promise<string>;
type GenerateKey = (context: ExecutionContext, tracker: string, throttlerName: string) => string;

interface ThrottlerEntry {
  name?: string;
  limit?: Resolvable<number>;
  ttl?: Resolvable<number>;
  blockDuration?: Resolvable<number>;
  skipIf?: (context: ExecutionContext) => boolean;
  getTracker?: GetTracker;
  generateKey?: GenerateKey;
}

interface ThrottlerModuleConfig {
  throttlers: ThrottlerEntry[];
  common: Pick<ThrottlerEntry, 'skipIf' | 'getTracker' | 'generateKey'>;
  storage?: McpThrottlerStorage;
}

/** What is limited on one capability, and where it shows in messages. */
export interface McpPolicyTarget {
  /** Stable id of the capability in this McpModule: `tool:<name>`, `prompt:<name>`, `resource:<uri>`, `template:<uriTemplate>`. */
  key: string;
  /** For messages: `tool "create_task"`. */
  label: string;
  /** The class and method whose decorators hold the policies (a runtime handler's carrier). */
  owner: Function;
  method: Function;
}

interface Plan {
  concurrency?: number;
  throttled: boolean;
  /** The capability's throttlers with their metadata, read once on its first limited call. */
  rules?: Promise<ThrottleRule[]>;
}

/** One throttler as it applies to one capability: decorator metadata over the module's options. */
interface ThrottleRule {
  name: string;
  limit: Resolvable<number> | undefined;
  ttl: Resolvable<number> | undefined;
  blockDuration: Resolvable<number> | undefined;
  skipIf?: (context: ExecutionContext) => boolean;
  getTracker?: GetTracker;
  generateKey?: GenerateKey;
}

/**
 * Loads `@nestjs/throttler` only when a policy needs it: it is an optional peer dependency.
 * @internal `specifier` is for the test of a missing package.
 */
export async function loadThrottler(why: string, specifier = '@nestjs/throttler'): Promise<Record<string, any>> {
  try {
    const loaded = (await import(specifier)) as Record<string, any>;
    return loaded.ThrottlerStorage ? loaded : ((loaded.default as Record<string, any>) ?? loaded);
  } catch (error) {
    throw new Error(
      `McpModule: ${why} needs the "@nestjs/throttler" package, which could not be loaded (${(error as Error).message}). ` +
        `Install it with "npm install @nestjs/throttler@6", or remove the rate limit.`,
    );
  }
}

/**
 * Runs the per-capability policies (`@McpConcurrency`, `@Throttle`, `@McpRateLimit`) on the
 * invoker of each capability. The state is keyed by the capability (its registered name), never
 * by a handler function, so request-scoped and transient providers and runtime-registered
 * handlers are counted like singletons; with the `redis` option it lives in Redis and holds
 * across instances.
 */
@Injectable()
export class McpPolicyGate implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('McpModule');
  private readonly leases: McpLeaseBackend;
  private throttler?: Promise<{ config?: ThrottlerModuleConfig; storage: McpThrottlerStorage }>;
  private globalGuard = false;
  /** Set when a registered capability carries a rate limit: the bootstrap then checks the package is there. */
  private limitedLabel?: string;
  private ownedStorage?: McpThrottlerStorage;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly externalContextCreator: ExternalContextCreator,
    @Inject(MCP_LIMITS) limits: ResolvedMcpLimits,
    @Inject(MCP_REDIS) private readonly redis: McpRedisBackend | null,
  ) {
    // Renewals fail together while Redis is away: one warning per 10 s, not one per lease.
    let lastReport = 0;
    const report = (error: unknown): void => {
      if (Date.now() - lastReport < 10_000) return;
      lastReport = Date.now();
      this.logger.warn(
        `Concurrency leases in Redis: ${error instanceof Error ? error.message : String(error)} (a lease not renewed frees its slot after limits.concurrencyLeaseMs)`,
      );
    };
    this.leases = redis
      ? new RedisLeases(redis.client, redis.keys.prefix, limits.concurrencyLeaseMs, report)
      : new InMemoryLeases();
  }

  /**
   * A global `ThrottlerGuard` (APP_GUARD) would see MCP calls as HTTP requests without a
   * response (and fail setting headers), and count them by address under one key per method: it
   * passes MCP calls on, and this gate throttles them per capability and caller instead.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.throttlerOptions() === undefined) {
      // A missing package fails the start, not the first call of the limited tool.
      if (this.limitedLabel !== undefined)
        await loadThrottler(`The rate limit of ${this.limitedLabel} (@Throttle or @McpRateLimit)`);
      return;
    }
    const { ThrottlerGuard } = await loadThrottler('ThrottlerModule');
    const config = globalEnhancersOf(this.externalContextCreator);
    for (const guard of config?.getGlobalGuards() ?? []) {
      if (!(guard instanceof ThrottlerGuard) || (guard as Record<symbol, unknown>)[PATCHED]) continue;
      const original = (guard as { canActivate(context: ExecutionContext): Promise<boolean> }).canActivate;
      Object.defineProperty(guard, 'canActivate', {
        value: function (this: unknown, context: ExecutionContext) {
          return context.getType<string>() === MCP_CONTEXT_TYPE ? Promise.resolve(true) : original.call(this, context);
        },
        configurable: true,
        writable: true,
      });
      (guard as Record<symbol, unknown>)[PATCHED] = true;
    }
    this.globalGuard = (config?.getGlobalGuards() ?? []).some((guard) => guard instanceof ThrottlerGuard);
  }

  /** Stops the sweep timer of an in-memory throttler storage the gate created itself. */
  async onApplicationShutdown(): Promise<void> {
    const owned = this.ownedStorage as { onApplicationShutdown?(): void } | undefined;
    owned?.onApplicationShutdown?.();
  }

  /** The invoker with the target's policies in front; the invoker itself when it has none. */
  gate(target: McpPolicyTarget, invoke: McpInvoker): McpInvoker {
    if (this.limitedLabel === undefined && hasThrottleMetadata(target)) this.limitedLabel = target.label;
    let plan: Plan | undefined;
    const gated: McpInvoker = (call) => {
      plan ??= this.plan(target);
      // A task call admitted earlier had its rate limits counted then: a run counts them no more.
      const current = call.context.policiesAdmitted && plan.throttled ? { ...plan, throttled: false } : plan;
      if (current.concurrency === undefined && !current.throttled) return invoke(call);
      // A call cancelled while it waits for admission still gives its slot back; a call that
      // ends gives it back before its result goes out, so the caller's next call finds it free
      // on any instance.
      return new Observable<unknown>((subscriber) => {
        let closed = false;
        let release: (() => Promise<void>) | undefined;
        let inner: { unsubscribe(): void } | undefined;
        const settle = (then: () => void): void => {
          const giveBack = release;
          release = undefined;
          if (!giveBack) return then();
          giveBack().then(then, then);
        };
        this.admit(target, current, call).then(
          (granted) => {
            if (closed) return void granted?.();
            release = granted;
            inner = invoke(call).subscribe({
              next: (value) => subscriber.next(value),
              error: (error: unknown) => settle(() => subscriber.error(error)),
              complete: () => settle(() => subscriber.complete()),
            });
          },
          (error: unknown) => subscriber.error(error),
        );
        return () => {
          closed = true;
          inner?.unsubscribe();
          void release?.();
          release = undefined;
        };
      });
    };
    // Task calls are decided before their task exists, so that a refused call creates and queues
    // nothing, and counted by the creating request's caller (its principal or address).
    gated.admit = async (call) => {
      plan ??= this.plan(target);
      if (plan.throttled && !call.context.policiesAdmitted)
        await this.throttle(target, await (plan.rules ??= this.rulesOf(target)), call);
      call.context.policiesAdmitted = true;
    };
    return gated;
  }

  private plan(target: McpPolicyTarget): Plan {
    const concurrency = (Reflect.getMetadata(CONCURRENCY_METADATA, target.method) ??
      Reflect.getMetadata(CONCURRENCY_METADATA, target.owner)) as number | undefined;
    return { concurrency, throttled: hasThrottleMetadata(target) || this.globalGuard };
  }

  /** Counts the call against its rate limits, then takes a concurrency slot; refuses with a tool error. */
  private async admit(target: McpPolicyTarget, plan: Plan, call: McpCall): Promise<(() => Promise<void>) | undefined> {
    if (plan.throttled) await this.throttle(target, await (plan.rules ??= this.rulesOf(target)), call);
    if (plan.concurrency === undefined) return undefined;
    const outcome = await this.leases.acquire(target.key, plan.concurrency);
    if (!outcome.ok) {
      throw new ToolError(
        `${capitalize(target.label)} is busy: ${outcome.active} call(s) are running and the limit is ${plan.concurrency} (@McpConcurrency). Try again when one has finished.`,
        { error: 'concurrency_limit', limit: plan.concurrency, active: outcome.active },
      );
    }
    return () => outcome.lease.release();
  }

  /** Which throttlers limit the capability, and with what: metadata read once, not per call. */
  private async rulesOf(target: McpPolicyTarget): Promise<ThrottleRule[]> {
    const { config } = await (this.throttler ??= this.loadThrottling(target));
    const configured = config?.throttlers ?? [];
    const names = new Set(configured.map((t) => t.name ?? 'default'));
    for (const where of [target.method, target.owner]) {
      for (const key of Reflect.getMetadataKeys(where)) {
        if (typeof key === 'string' && key.startsWith(LIMIT) && Reflect.getMetadata(key, where) !== undefined)
          names.add(key.slice(LIMIT.length));
      }
    }
    const read = <T>(key: string, name: string): T | undefined =>
      (Reflect.getMetadata(key + name, target.method) ?? Reflect.getMetadata(key + name, target.owner)) as
        T | undefined;
    const rules: ThrottleRule[] = [];
    for (const name of names) {
      if (read<boolean>(SKIP, name)) continue;
      const throttler = configured.find((t) => (t.name ?? 'default') === name) ?? {};
      const ttl = read<Resolvable<number>>(TTL, name) ?? throttler.ttl;
      rules.push({
        name,
        limit: read<Resolvable<number>>(LIMIT, name) ?? throttler.limit,
        ttl,
        blockDuration: read<Resolvable<number>>(BLOCK, name) ?? throttler.blockDuration,
        skipIf: throttler.skipIf ?? config?.common.skipIf,
        getTracker: read<GetTracker>(TRACKER, name) ?? throttler.getTracker ?? config?.common.getTracker,
        generateKey: read<GenerateKey>(KEY_GENERATOR, name) ?? throttler.generateKey ?? config?.common.generateKey,
      });
    }
    return rules;
  }

  private async throttle(target: McpPolicyTarget, rules: readonly ThrottleRule[], call: McpCall): Promise<void> {
    const { storage } = await this.throttler!;
    const context = new ExecutionContextHost(
      [call.context.request, undefined, call],
      target.owner as never,
      target.method as never,
    );
    context.setType(MCP_CONTEXT_TYPE);
    for (const { name, skipIf, getTracker, generateKey, ...values } of rules) {
      if (skipIf?.(context)) continue;
      const limit = await this.number(context, values.limit, 'limit', name, target);
      const ttl = await this.number(context, values.ttl, 'ttl', name, target);
      const blockDuration =
        values.blockDuration === undefined
          ? ttl
          : await this.number(context, values.blockDuration, 'blockDuration', name, target);
      const tracker = getTracker
        ? await getTracker((call.context.request ?? {}) as Record<string, any>, context)
        : defaultTracker(call);
      const key = generateKey ? generateKey(context, tracker, name) : `${target.key}:${name}:${tracker}`;
      const record = await this.increment(storage, key, ttl, limit, blockDuration, name, target);
      if (record.isBlocked) {
        const wait = Math.max(1, record.timeToBlockExpire);
        throw new ToolError(
          `Rate limit for ${target.label} reached: ${limit} call(s) per ${describeMs(ttl)}${name === 'default' ? '' : ` (throttler "${name}")`}. Try again in ${wait} s.`,
          { error: 'rate_limited', limit, ttlMs: ttl, throttler: name, retryAfterSeconds: wait },
        );
      }
    }
  }

  /**
   * A storage that fails (Redis down or stalled) refuses the call: an unchecked limit would let
   * every caller through exactly while the limit's store is unreachable. The cause goes to the
   * log under a reference, not to the caller.
   */
  private async increment(
    storage: McpThrottlerStorage,
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    name: string,
    target: McpPolicyTarget,
  ) {
    try {
      return await storage.increment(key, ttl, limit, blockDuration, name);
    } catch (error) {
      const ref = randomUUID();
      const err = error instanceof Error ? error : new Error(String(error));
      this.logger.error(
        `The rate limit of ${target.label} could not be checked (ref ${ref}): its throttler storage failed: ${err.message}`,
        err.stack,
      );
      const retryAfterSeconds = error instanceof McpStoreUnavailableError ? error.retryAfterS : 1;
      throw new ToolError(
        `Rate limit for ${target.label} could not be checked: its store is unavailable (reference ${ref}), so the call did not run. Try again in ${retryAfterSeconds} s.`,
        { error: 'rate_limit_unavailable', throttler: name, retryAfterSeconds },
      );
    }
  }

  private async number(
    context: ExecutionContext,
    value: Resolvable<number> | undefined,
    option: string,
    name: string,
    target: McpPolicyTarget,
  ): Promise<number> {
    const resolved = typeof value === 'function' ? await value(context) : value;
    if (typeof resolved !== 'number' || !Number.isFinite(resolved) || resolved < 0) {
      throw new Error(
        `McpModule: ${target.label} is rate limited by throttler "${name}", whose "${option}" is ${JSON.stringify(resolved)}. ` +
          `Give it a number in @Throttle({ ${name}: { limit, ttl } }) or in ThrottlerModule.forRoot().`,
      );
    }
    return resolved;
  }

  /**
   * The app's ThrottlerModule configuration and storage. With the `redis` option and no storage
   * of the app's, limits live in Redis (a limit that holds on one instance only would be a limit
   * per instance in scale-out); without a ThrottlerModule, the throttler's in-memory storage.
   */
  private async loadThrottling(
    target: McpPolicyTarget,
  ): Promise<{ config?: ThrottlerModuleConfig; storage: McpThrottlerStorage }> {
    const throttler = await loadThrottler(`The rate limit of ${target.label} (@Throttle or @McpRateLimit)`);
    const raw = this.throttlerOptions();
    let config: ThrottlerModuleConfig | undefined;
    if (raw !== undefined) {
      const options = raw as
        | ThrottlerEntry[]
        | (ThrottlerModuleConfig['common'] & { throttlers: ThrottlerEntry[]; storage?: McpThrottlerStorage });
      config = Array.isArray(options)
        ? { throttlers: options, common: {} }
        : {
            throttlers: options.throttlers ?? [],
            common: { skipIf: options.skipIf, getTracker: options.getTracker, generateKey: options.generateKey },
            storage: options.storage,
          };
    }
    let storage: McpThrottlerStorage | undefined = config?.storage;
    if (!storage && this.redis)
      storage = new McpRedisThrottlerStorage(this.redis.client, `${this.redis.keys.prefix}throttle:`);
    if (!storage && config)
      storage = this.moduleRef.get(throttler.ThrottlerStorage, { strict: false }) as McpThrottlerStorage;
    storage ??= this.ownedStorage = new throttler.ThrottlerStorageService() as McpThrottlerStorage;
    return { config, storage };
  }

  private throttlerOptions(): unknown {
    try {
      return this.moduleRef.get(THROTTLER_OPTIONS, { strict: false });
    } catch {
      return undefined;
    }
  }
}

function hasThrottleMetadata(target: McpPolicyTarget): boolean {
  return [target.method, target.owner].some((where) =>
    Reflect.getMetadataKeys(where).some(
      (key) => typeof key === 'string' && (key.startsWith(LIMIT) || key.startsWith(TTL)),
    ),
  );
}

/**
 * Who a rate limit counts: the principal, else the client address (as the app's trusted-proxy
 * setting gives it, an IPv6 client by its /64). Never a session id: an anonymous caller mints as
 * many sessions as it likes, and the 2026-07-28 era has none, so either would give it a fresh
 * bucket per session or per era. Without either (stdio, in process) the one local client.
 */
function defaultTracker(call: McpCall): string {
  const { principal, clientAddress } = call.context;
  if (principal !== undefined) return `principal:${principal}`;
  if (clientAddress !== undefined) return `address:${addressOwner(clientAddress)}`;
  return 'local';
}

function describeMs(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  if (ms % 1_000 === 0) return ms === 1_000 ? 'second' : `${ms / 1_000} s`;
  return `${ms} ms`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
