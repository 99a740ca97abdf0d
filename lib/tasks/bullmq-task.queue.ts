import { Logger } from '@nestjs/common';
import type { McpTaskJob, McpTaskQueue } from './task-jobs.js';

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
}

type BullmqModule = {
  Queue: new (name: string, options: Record<string, unknown>) => {
    add(name: string, data: unknown, options?: Record<string, unknown>): Promise<unknown>;
    close(): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): unknown;
  };
  Worker: new (
    name: string,
    processor: (job: { data: McpTaskJob; attemptsStarted: number }) => Promise<void>,
    options: Record<string, unknown>,
  ) => { close(force?: boolean): Promise<void>; waitUntilReady(): Promise<unknown>; on(event: string, listener: (...args: unknown[]) => void): unknown };
};

/** BullMQ, loaded at first use: an optional peer. */
async function loadBullmq(): Promise<BullmqModule> {
  try {
    return (await import('bullmq' as string)) as BullmqModule;
  } catch {
    throw new Error('McpModule option "tasks.bullmq" needs the "bullmq" package (the queue @nestjs/bullmq runs on): npm install bullmq @nestjs/bullmq');
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
  private readonly logger = new Logger('McpTasks');
  /** BullMQ reports its connection's failures as events: logged, never left to end the process. */
  private readonly onError = (error: unknown): void => this.logger.error(`The BullMQ task queue "${this.options.queueName ?? 'mcp-tasks'}" failed: ${error instanceof Error ? error.message : String(error)}`);

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
    const { Worker } = await this.bullmq();
    this.worker = new Worker(this.options.queueName ?? 'mcp-tasks', (job) => run(job.data, Math.max(1, job.attemptsStarted)), {
      ...this.common(),
      concurrency: this.options.concurrency ?? 10,
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
  }
}
