import { Inject, Injectable, Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { MCP_REDIS, type McpRedisBackend } from '../redis/redis-backend.js';
import { packSlice, type McpFeature } from '../discovery/mcp-feature.js';
import { InMemoryTaskStore, type McpTaskStore } from './task-store.js';
import { McpTaskRunner, type McpTaskSettings } from './tasks.js';
import { LEGACY_TASKS_CAPABILITY, LEGACY_TASKS_SINCE, TASKS_EXTENSION } from './task-mode.js';
import { installLegacyTasks, installModernTasks } from './task-methods.js';
import type { McpFeatureHost } from '../protocol/feature-host.js';
import { BullmqTaskQueue, type McpBullmqTasksOptions } from './bullmq-task.queue.js';
import { RedisTaskStore, TASKS_CHANNEL } from './redis-task.store.js';
import { MCP_RUN_MODES, type McpRunModes } from '../protocol/tool-calls.js';
import type { ToolRuntime } from '../protocol/catalog.js';
import { MCP_TOOL_BUILDER, type McpToolBuilder, type ToolDefinition } from '../discovery/tool-types.js';

// The `task` option of `@Tool()`, declared by the pack that reads it. It sits in this file because
// the module options import it (their `tasks` slice): whatever program sees McpModule sees it too.
declare module '../discovery/tool-types.js' {
  interface ToolOptions {
    /**
     * Runs calls as tasks, for long work: the client gets a task id at once and polls the task
     * (`io.modelcontextprotocol/tasks` on 2026-07-28, the experimental tasks of 2025-11-25). The
     * method stays as it is; its progress and log messages become the task's status message, and a
     * question it asks (elicitation, sampling, roots) moves the task to `input_required`.
     * `optional`: a client that does not support tasks gets the result in the call itself;
     * `required`: such a client gets error -32021 (2026-07-28) or -32601 (2025-11-25).
     */
    task?: 'optional' | 'required';
  }
}

/** The DI token of the module's task runner. @internal */
export const MCP_TASK_RUNNER = Symbol.for('nestjs-model-context:MCP_TASK_RUNNER');

/** The tasks pack's options slice (`tasks`; null without it). @internal */
export const MCP_TASKS_OPTIONS = Symbol.for('nestjs-model-context:MCP_TASKS_OPTIONS');

/**
 * Options of tasks (tools declared with `@Tool({ task })`). Every bound has a safe default; see
 * SECURITY.md.
 *
 * @publicApi
 */
export interface McpTasksOptions {
  /** Where tasks live. @default Redis when the module's `redis` option is set, else process memory (bounded by the two limits below) */
  store?: McpTaskStore;
  /**
   * How long a task is kept from its creation. A task still running when it expires is cancelled
   * (its `ctx.signal` aborts): an expired task no longer counts against the limits, so its work
   * must not outlive it. @default 3_600_000 (one hour)
   */
  ttlMs?: number;
  /** The longest TTL a 2025-11-25 client may ask for with `task.ttl`; a longer one is cut to it. @default ttlMs */
  maxTtlMs?: number;
  /** How often clients are asked to poll. @default 1000 */
  pollIntervalMs?: number;
  /**
   * Tasks one caller may hold at once: an authenticated principal, or an anonymous client
   * address (IPv6 by /64, as Express's trust proxy setting gives it), whatever session or
   * protocol era it uses. @default 100
   */
  maxTasksPerPrincipal?: number;
  /** Tasks the store holds at once, for everyone. @default 10_000 */
  maxTasks?: number;
  /**
   * The largest result (bytes of its JSON) a task keeps for `tasks/get` and `tasks/result`; a
   * larger result fails the task with an error naming this option. Memory of the default store
   * is bounded by `maxTasks` times this. @default 262_144 (256 KiB)
   */
  maxResultBytes?: number;
  /**
   * Runs task tools as BullMQ jobs, so that a task whose instance dies runs again on another (at
   * least once: read `McpContext.taskAttempt`). Needs the optional `bullmq` package. Needs a shared
   * store (the module's `redis`, or `store`). Questions inside a durable task are not supported.
   */
  bullmq?: McpBullmqTasksOptions;
  /**
   * Advertise tasks even when no tool declares `task` at bootstrap (for tools added at runtime).
   * @default false
   */
  advertise?: boolean;
}

const DEFAULTS = {
  ttlMs: 3_600_000,
  maxTtlMs: undefined,
  pollIntervalMs: 1000,
  maxTasksPerPrincipal: 100,
  maxTasks: 10_000,
  maxResultBytes: 262_144,
} as const;
/** A task's TTL arms a timer that cancels it; Node fires longer timers at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** The task settings from the module options, or a boot error naming the bad option. */
export function resolveTaskSettings(options: McpTasksOptions | undefined, shared?: McpTaskStore): McpTaskSettings {
  const chosen: Partial<Record<keyof typeof DEFAULTS, number>> = {};
  for (const key of Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>) {
    const value = options?.[key] ?? DEFAULTS[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new Error(
        `McpModule option "tasks.${key}" must be a positive integer (milliseconds, a count or bytes), got ${JSON.stringify(value)}.`,
      );
    if ((key === 'ttlMs' || key === 'maxTtlMs') && value > MAX_TIMER_MS)
      throw new Error(
        `McpModule option "tasks.${key}" must be at most ${MAX_TIMER_MS} ms (about 24.8 days), got ${value}.`,
      );
    chosen[key] = value;
  }
  const settings = {
    ...(chosen as Omit<McpTaskSettings, 'store' | 'maxTtlMs'>),
    maxTtlMs: chosen.maxTtlMs ?? chosen.ttlMs!,
  };
  if (settings.ttlMs > settings.maxTtlMs)
    throw new Error(
      `McpModule option "tasks.ttlMs" (${settings.ttlMs}) must not exceed "tasks.maxTtlMs" (${settings.maxTtlMs}).`,
    );
  for (const key of ['concurrency', 'maxRunningPerCaller'] as const) {
    const value = options?.bullmq?.[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1))
      throw new Error(
        `McpModule option "tasks.bullmq.${key}" must be a positive integer (a count of jobs), got ${JSON.stringify(value)}.`,
      );
  }
  const store = options?.store ?? shared;
  if (options?.bullmq && !store) {
    throw new Error(
      'McpModule option "tasks.bullmq" needs a task store every instance shares: set the module\'s "redis" option (or "tasks.store").',
    );
  }
  return {
    ...settings,
    store: store ?? new InMemoryTaskStore(),
    ...(options?.bullmq && { queue: new BullmqTaskQueue(options.bullmq) }),
  };
}

/** The runner and its lifecycle: the providers the tasks pack brings to the module. */
const taskProviders: Provider[] = [
  packSlice(MCP_TASKS_OPTIONS, 'tasks'),
  {
    provide: MCP_TASK_RUNNER,
    useFactory: (options: McpTasksOptions | null, redis: McpRedisBackend | null) => {
      const logger = new Logger('McpTasks');
      // With the module's Redis and no store of the app's, tasks live in that Redis.
      const shared =
        redis && !options?.store
          ? redis.attach(
              'the task store',
              ({ client, keys, shardedPubSub, logger }) => new RedisTaskStore(client, keys, { shardedPubSub, logger }),
            )
          : undefined;
      return new McpTaskRunner(resolveTaskSettings(options ?? undefined, shared), {
        logger: { error: (m, t) => logger.error(m, t), warn: (m) => logger.warn(m) },
      });
    },
    inject: [MCP_TASKS_OPTIONS, MCP_REDIS],
  },
];

/**
 * What `@Tool({ task })` makes of a tool as it is built: a call may (`optional`) or must
 * (`required`) run as a task, and 2025-11-25 lists that on the tool (the 2026-07-28 extension
 * leaves it to the server).
 */
function withTaskSupport(runtime: ToolRuntime, definition: ToolDefinition, site: string): ToolRuntime {
  const task = definition.task as unknown;
  if (task === undefined) return runtime;
  if (task !== 'optional' && task !== 'required')
    throw new Error(`${site}: "task" must be 'optional' or 'required', got ${JSON.stringify(task)}.`);
  const taskSupport: 'optional' | 'required' = task;
  const legacy = Object.freeze({ ...runtime.descriptors.legacy, execution: { taskSupport } });
  return { ...runtime, descriptors: { ...runtime.descriptors, legacy }, taskSupport };
}

/**
 * The tasks pack: runs `@Tool({ task })` calls as tasks (a run mode of `tools/call`), installs the
 * task methods of both eras, advertises tasks once the tools are known (when a tool declares
 * them), and stops this instance's tasks at shutdown.
 */
@Injectable()
export class McpTasksFeature implements McpFeature, OnApplicationShutdown {
  static readonly providers = taskProviders;
  static readonly redisChannels = [TASKS_CHANNEL];
  readonly kind = 'tasks';
  private host?: McpFeatureHost;

  constructor(
    @Inject(MCP_TASK_RUNNER) private readonly runner: McpTaskRunner,
    @Inject(MCP_TASKS_OPTIONS) private readonly options: McpTasksOptions | null,
    private readonly registry: McpRegistry,
    @Inject(MCP_RUN_MODES) modes: McpRunModes,
    @Inject(MCP_TOOL_BUILDER) tools: McpToolBuilder,
  ) {
    tools.extend(withTaskSupport);
    modes.add({
      select: (tool, params, ctx) => {
        const mode = runner.mode(tool, params, ctx);
        return mode === 'sync' ? undefined : mode;
      },
      run: (tool, mode, params, ctx, admit) => runner.run(tool, mode as 'modern' | 'legacy', params, ctx, admit),
    });
    runner.bindExecutor((toolName, rawArgs, ctx) => modes.execute(toolName, rawArgs, ctx));
  }

  install(host: McpFeatureHost): void {
    this.host = host;
    installModernTasks(host, this.runner.store);
    installLegacyTasks(host, this.runner.store);
  }

  async ready(): Promise<void> {
    await this.runner.startQueue();
    if (!this.options?.advertise && !this.registry.tools().some((tool) => tool.taskSupport)) return;
    this.host!.declareExtension(TASKS_EXTENSION, {});
    this.host!.declareLegacyCapability('tasks', LEGACY_TASKS_CAPABILITY, LEGACY_TASKS_SINCE);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.shutdown();
    await this.options?.store?.close?.();
  }
}
