import { Logger } from '@nestjs/common';
import type { McpTaskJob, McpTaskQueue } from './task-jobs.js';
import { loadIoredis, type McpRedisClient } from '../redis/redis-client.js';
import { RedisLeases } from '../redis/redis-leases.js';

/** How long a job held back by its caller's running share waits before it is tried again. */
const DEFERRAL_MS = 250;

/**
 * Options of durable tasks on BullMQ (`tasks.bullmq`). Jobs are at least once: a job whose
 * instance died (no lock renewal for `lockDurationMs`) is found by another instance's stalled
 * check and runs again there, with `McpContext.taskAttempt` one higher.
 *
 * @publicApi
 */
export interface McpBullmqTasksOptions {
  /** The Redis BullMQ uses: a `redis://` URL. */
  url: string;
  /** The queue's name. @default 'mcp-tasks' */
  queueName?: string;
  /** BullMQ's key prefix. @default 'bull' */
  prefix?: string;
  /** Jobs one instance runs at once. @default 10 */
  concurrency?: number;
  /** How long a job's lock lasts without renewal. @default 30_000 */
  lockDurationMs?: number;
  /** How often each worker looks for jobs whose lock expired. @default 30_000 */
  stalledIntervalMs?: number;
  /** How many times a job may stall (its instance die) before the task fails. @default 1 */
  maxStalledCount?: number;
  /**
   * Jobs one caller (a principal, else an anonymous client address) may run at once, counted
   * across every instance of the queue. A job of a caller at its share goes back to the queue
   * (delayed 250 ms) and the worker slot takes another caller's job, so one caller's backlog
   * cannot hold every slot. A slot of an instance that died is freed after `lockDurationMs`.
   * @default half of `concurrency`, at least 1 (5)
   */
  maxRunningPerCaller?: number;
}

type BullmqModule = {
  Queue: new (
    name: string,
    options: Record<string, unknown>,
  ) => {
    add(name: string, data: unknown, options?: Record<string, unknown>): Promise<unknown>;
    close(): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): unknown;
  };
  Worker: new (
    name: string,
    processor: (job: BullmqJob, token?: string) => Promise<void>,
    options: Record<string, unknown>,
  ) => {
    close(force?: boolean): Promise<void>;
    waitUntilReady(): Promise<unknown>;
    on(event: string, listener: (...args: unknown[]) => void): unknown;
  };
  DelayedError: new (message?: string) => Error;
};

interface BullmqJob {
  data: McpTaskJob;
  /** Times the job was found stalled (its instance died): its run is this plus one. */
  stalledCounter?: number;
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/** BullMQ, loaded at first use: an optional peer. */
async function loadBullmq(): Promise<BullmqModule> {
  try {
    return (await import('bullmq' as string)) as BullmqModule;
  } catch {
    throw new Error(
      'McpModule option "tasks.bullmq" needs the "bullmq" package (the queue @nestjs/bullmq runs on): npm install bullmq @nestjs/bullmq',
    );
  }
}

function connectionOf(url: string): Record<string, unknown> {
  const parsed = new URL(url);
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : undefined;
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    ...(parsed.username && { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password && { password: decodeURIComponent(parsed.password) }),
    ...(db !== undefined && Number.isSafeInteger(db) && { db }),
    ...(parsed.protocol === 'rediss:' && { tls: {} }),
    // BullMQ's workers block on Redis: commands must wait for a reconnect instead of failing.
    maxRetriesPerRequest: null,
  };
}

/** Task jobs on a BullMQ queue; one worker per instance. */
export class BullmqTaskQueue implements McpTaskQueue {
  private queue?: InstanceType<BullmqModule['Queue']>;
  private worker?: InstanceType<BullmqModule['Worker']>;
  /** Counts each caller's running jobs across instances (`maxRunningPerCaller`). */
  private leasesClient?: McpRedisClient;
  private readonly logger = new Logger('McpTasks');
  /** BullMQ reports its connection's failures as events: logged, never left to end the process. */
  private readonly onError = (error: unknown): void =>
    this.logger.error(
      `The BullMQ task queue "${this.options.queueName ?? 'mcp-tasks'}" failed: ${error instanceof Error ? error.message : String(error)}`,
    );

  constructor(private readonly options: McpBullmqTasksOptions) {}

  private async bullmq(): Promise<BullmqModule> {
    return loadBullmq();
  }

  private common(): Record<string, unknown> {
    return { connection: connectionOf(this.options.url), prefix: this.options.prefix ?? 'bull' };
  }

  async enqueue(job: McpTaskJob): Promise<void> {
    if (!this.queue) {
      const { Queue } = await this.bullmq();
      if (!this.queue) {
        this.queue = new Queue(this.options.queueName ?? 'mcp-tasks', this.common());
        this.queue.on('error', this.onError);
      }
    }
    // The task id is the job id: a retried enqueue cannot run one task twice.
    await this.queue.add(job.toolName, job, { jobId: job.taskId, removeOnComplete: true, removeOnFail: 1000 });
  }

  async start(run: (job: McpTaskJob, attempt: number) => Promise<void>): Promise<void> {
    const { Worker, DelayedError } = await this.bullmq();
    const concurrency = this.options.concurrency ?? 10;
    const share = this.options.maxRunningPerCaller ?? Math.max(1, Math.floor(concurrency / 2));
    const Redis = await loadIoredis();
    // Its commands fail rather than wait out an outage: a job whose share cannot be counted waits in the queue.
    this.leasesClient = new Redis({ ...connectionOf(this.options.url), maxRetriesPerRequest: 1 });
    this.leasesClient.on('error', this.onError);
    const queueName = this.options.queueName ?? 'mcp-tasks';
    const leases = new RedisLeases(
      this.leasesClient,
      `${this.options.prefix ?? 'bull'}:${queueName}:running:`,
      this.options.lockDurationMs ?? 30_000,
      this.onError,
    );
    // BullMQ (without Pro's groups) hands jobs out in order: a caller's job past its running share
    // goes back to the queue, delayed, so the slot takes the next job, of another caller.
    // Deferrals are not runs: the attempt is counted from BullMQ's stalls, not its starts.
    const processor = async (job: BullmqJob, token?: string): Promise<void> => {
      // A share that cannot be counted (Redis away) is not granted: the job waits, it is not lost.
      const held = await leases
        .acquire(`caller:${job.data.caller ?? 'local'}`, share)
        .catch((error: unknown) => void this.onError(error));
      if (!held?.ok) {
        await job.moveToDelayed(Date.now() + DEFERRAL_MS, token);
        throw new DelayedError();
      }
      try {
        await run(job.data, 1 + (job.stalledCounter ?? 0));
      } finally {
        await held.lease.release();
      }
    };
    this.worker = new Worker(queueName, processor, {
      ...this.common(),
      concurrency,
      lockDuration: this.options.lockDurationMs ?? 30_000,
      stalledInterval: this.options.stalledIntervalMs ?? 30_000,
      maxStalledCount: this.options.maxStalledCount ?? 1,
    });
    this.worker.on('error', this.onError);
    await this.worker.waitUntilReady();
  }

  async close(): Promise<void> {
    // Forced: a running job is left to stall and run again on another instance.
    await Promise.all([this.worker?.close(true), this.queue?.close()]);
    this.leasesClient?.disconnect();
  }
}
