import { randomBytes } from 'node:crypto';
import type { McpRunAdmission } from '../protocol/tool-calls.js';
import { lastOf } from '../protocol/last-value.js';
import { Observable, type Subscriber } from 'rxjs';
import type { ToolRuntime } from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import { McpCancelledError, isObject } from '../protocol/dispatcher.js';
import { McpError, ToolError } from '../protocol/errors.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { McpFeatureOptions } from '../protocol/feature-host.js';
import { isTerminal, type McpTaskRecord, type McpTaskSignal, type McpTaskStore } from './task-store.js';
import { callerOf, completedTask, createdResult, failedTask, messageOf, ownerOf } from './task-records.js';
import { jobContext, type McpTaskExecutor, type McpTaskJob, type McpTaskQueue } from './task-jobs.js';
import { TaskExecution } from './task-execution.js';
import { taskMode } from './task-mode.js';

type Result = JsonObject;

/** The task settings a runner works with, after defaults. */
export interface McpTaskSettings {
  store: McpTaskStore;
  /** The TTL a task gets (2025-11-25 clients may ask for less, never for more than maxTtlMs). */
  ttlMs: number;
  maxTtlMs: number;
  pollIntervalMs: number;
  maxTasksPerPrincipal: number;
  maxTasks: number;
  /** The largest result (JSON bytes) a task keeps; a larger one fails the task. */
  maxResultBytes: number;
  /** Runs tasks as jobs of a durable queue (BullMQ) instead of in the process that created them. */
  queue?: McpTaskQueue;
}

/**
 * Runs task tools as tasks. A call is decided first (arguments,
 * guards, then the store's limits, which reserve its place); only then does its handler run, in
 * this process or as a queued job. The task is reached from any request, on any instance sharing
 * the store, through the store's signals, and is cancelled here when its TTL passes.
 */
export class McpTaskRunner {
  private readonly running = new Map<string, TaskExecution>();
  private readonly stopListening: () => void;

  /** Where the tasks live, for the task requests. */
  get store(): McpTaskStore {
    return this.settings.store;
  }

  constructor(
    private readonly settings: McpTaskSettings,
    private readonly options: Pick<McpFeatureOptions, 'logger'>,
  ) {
    this.stopListening = settings.store.onSignal((taskId, signal) => this.onSignal(taskId, signal));
  }

  /** Whether this call runs as a task (see {@link taskMode}). */
  readonly mode = taskMode;

  /**
   * Runs a tool call as a task, deciding first: `admit` validates and authorizes, the store's
   * limits reserve the task, and only then does the handler run (or its job get queued). A
   * refusal at any step answers the call and runs nothing. 2026-07-28: the handler runs inside
   * the request, where questions marked `beforeTask` still end it with `input_required`; the
   * task id is handed out once the handler waits on anything else (or asks another question),
   * and a handler done before that answers with its result (its reservation is released).
   * 2025-11-25: the task id is handed out first. An invalid or refused call answers with its tool
   * error: on 2026-07-28 in the request, on 2025-11-25 as a task already completed.
   */
  run(
    tool: ToolRuntime,
    mode: 'modern' | 'legacy',
    params: JsonObject,
    ctx: McpContext,
    admit: () => Promise<McpTaskAdmission>,
  ): Observable<Result> {
    return new Observable<Result>((subscriber) => {
      let closed = false;
      let exec: TaskExecution | undefined;
      const start = async (): Promise<void> => {
        const admission = await admit();
        if (closed) return;
        // A policy's refusal creates nothing: a task record per refused call would let a throttled
        // caller fill the store (2025-11-25 allows a plain result for a task-augmented call).
        if ('refuse' in admission) return (subscriber.next(admission.refuse), subscriber.complete());
        if ('answer' in admission && mode === 'modern')
          return (subscriber.next(admission.answer), subscriber.complete());
        const record = await this.create(tool, mode, params, ctx, 'answer' in admission ? admission.answer : undefined);
        // The client left while the store answered: the reservation goes with it.
        if (closed) return void (await this.release(record));
        if ('run' in admission && !this.settings.queue) {
          exec = this.execute(record, tool, mode, ctx, admission.run, subscriber);
          return;
        }
        if ('run' in admission) await this.enqueue(record, params, ctx);
        subscriber.next(createdResult(record, mode));
        subscriber.complete();
      };
      start().catch((error: unknown) => subscriber.error(error));
      return () => {
        closed = true;
        // Before the task id is out, the request's end (a disconnect) is the call's end.
        if (exec && !exec.revealed) this.abandon(exec);
      };
    });
  }

  /** Runs the handler of a reserved task in this process. */
  private execute(
    record: McpTaskRecord,
    tool: ToolRuntime,
    mode: 'modern' | 'legacy',
    ctx: McpContext,
    run: () => Observable<Result>,
    subscriber: Subscriber<Result>,
  ): TaskExecution {
    let timer: NodeJS.Immediate | undefined;
    const exec = this.track(record, ctx, false, () => {
      if (timer) clearImmediate(timer);
      if (exec.revealed) return;
      exec.revealed = true;
      subscriber.next(createdResult(record, mode));
      subscriber.complete();
    });
    // The task's body is bounded by the task limits, not by its request's in-flight slot, which the
    // request gives back once it has answered.
    ctx.holdWork = undefined;
    ctx.runHooks = {
      get created() {
        return exec.revealed;
      },
      input: (key, method, request) => {
        if (mode === 'legacy') {
          return Promise.reject(
            new ToolError(
              `This tool asks the client for input ("${method}") inside a task, which this server supports on protocol 2026-07-28 only. Call it without the "task" parameter.`,
            ),
          );
        }
        exec.reveal();
        return exec.awaitInput(key, method, request);
      },
      status: (message) => exec.status(message),
    };
    if (mode === 'legacy') exec.reveal();
    // Before the task id is out, an early end answers in the request: a question asked before
    // the task (MRTR), or an optional tool done within the request's own turn.
    const early = (): boolean => {
      if (timer) clearImmediate(timer);
      return !exec.revealed;
    };
    exec.subscription = lastOf(run(), {
      error: (error: unknown) => {
        if (early() && (ctx.inputRequired || tool.taskSupport === 'optional'))
          return (this.abandon(exec), subscriber.error(error));
        exec.reveal();
        this.settle(exec, (r) => failedTask(r, error));
      },
      value: (last) => {
        if (early() && tool.taskSupport === 'optional')
          return (this.abandon(exec), subscriber.next(last ?? {}), subscriber.complete());
        exec.reveal();
        this.settle(exec, (r) => this.completedTask(r, last));
      },
    });
    // The request's own turn: what the handler does at once belongs to the request.
    if (!exec.ended && !exec.revealed) timer = setImmediate(() => exec.reveal());
    return exec;
  }

  /** Registers a task this instance runs: reachable by its signals, cancelled when its TTL passes. */
  private track(record: McpTaskRecord, ctx: McpContext, revealed: boolean, reveal: () => void): TaskExecution {
    const exec = new TaskExecution(record, ctx, this.settings.store, this.options.logger, revealed, reveal);
    this.running.set(record.taskId, exec);
    // An expired task is gone from the store, so nothing counts it any more: its work stops with it.
    exec.expiry = setTimeout(
      () => this.stop(exec, 'expired'),
      Math.max(0, record.createdAt + record.ttlMs - Date.now()),
    );
    exec.expiry.unref();
    return exec;
  }

  /** The call ended without handing out its task: stop the handler and release its place. */
  private abandon(exec: TaskExecution): void {
    exec.subscription?.unsubscribe();
    this.end(exec);
    void this.release(exec.record);
  }

  /** Stops a running task (cancelled, expired, or its instance shutting down). */
  private stop(exec: TaskExecution, why: 'cancelled' | 'expired' | 'shutdown'): void {
    if (exec.ended) return;
    if (why === 'expired')
      this.options.logger.warn(
        `Task "${exec.record.taskId}" of tool "${exec.record.toolName}" expired (ttl ${exec.record.ttlMs} ms) while its handler ran: the handler is cancelled.`,
      );
    exec.reveal();
    exec.ctx.abortCall(new McpCancelledError());
    exec.subscription?.unsubscribe();
    if (why !== 'shutdown') this.end(exec);
  }

  private end(exec: TaskExecution): void {
    if (exec.ended) return;
    exec.ended = true;
    clearTimeout(exec.expiry);
    if (this.running.get(exec.record.taskId) === exec) this.running.delete(exec.record.taskId);
    exec.onEnd?.();
  }

  /** Writes the task's terminal state, then forgets it. */
  private settle(exec: TaskExecution, change: (record: McpTaskRecord) => McpTaskRecord): void {
    if (exec.ended) return;
    void exec.change(change).then(() => this.end(exec));
  }

  /** Deletes a reservation no client will use; a failure is logged and the task expires with its TTL. */
  private release(record: McpTaskRecord): Promise<void> {
    return this.settings.store.delete(record).catch((error: unknown) => {
      this.options.logger.error(
        `Task "${record.taskId}" was not handed out, and could not be removed from the task store: ${messageOf(error)}. It counts against the task limits until it expires (ttl ${record.ttlMs} ms).`,
      );
    });
  }

  /** Durable tasks: queue the job; a job that cannot be queued releases its task, and the call fails. */
  private async enqueue(record: McpTaskRecord, params: JsonObject, ctx: McpContext): Promise<void> {
    const auth = ctx.auth;
    try {
      await this.settings.queue!.enqueue({
        taskId: record.taskId,
        toolName: record.toolName,
        arguments: isObject(params.arguments) ? params.arguments : {},
        protocolVersion: ctx.protocolVersion,
        capabilities: ctx.clientCapabilities,
        caller: record.caller,
        ...(ctx.principal !== undefined && { principal: ctx.principal }),
        ...(ctx.clientAddress !== undefined && { clientAddress: ctx.clientAddress }),
        ...(auth && { auth }),
      });
    } catch (error) {
      await this.release(record);
      throw error;
    }
  }

  /**
   * Runs one durable job: the tool again, in a context rebuilt from the job (the creator's
   * version, capabilities, principal and scopes; its questions go to the task; no request to
   * stream to). Resolves once the task ended here.
   */
  async runJob(
    job: McpTaskJob,
    attempt: number,
    context: (job: McpTaskJob) => McpContext,
    execute: McpTaskExecutor,
  ): Promise<void> {
    const record = await this.settings.store.get(job.taskId);
    if (!record || isTerminal(record.status)) return;
    const ctx = context(job);
    const exec = this.track(record, ctx, true, () => undefined);
    ctx.runHooks = {
      created: true,
      attempt,
      input: (key, method, request) => exec.awaitInput(key, method, request),
      status: (message) => exec.status(message),
    };
    // The job ends when its task ended here and the app's handler has returned: a cancel makes
    // the task terminal at once, but a handler ignoring the abort runs on, and the worker slot and
    // the caller's running share (tasks.bullmq.maxRunningPerCaller) stay taken until it returns.
    let outstanding = 1;
    let allEnded!: () => void;
    const ended = new Promise<void>((resolve) => (allEnded = resolve));
    const workEnded = (): void => {
      if (--outstanding === 0) allEnded();
    };
    ctx.holdWork = (work) => {
      outstanding++;
      work.then(workEnded, workEnded);
    };
    let taskEnded = false;
    exec.onEnd = () => {
      if (taskEnded) return;
      taskEnded = true;
      workEnded();
    };
    let source: Observable<Result>;
    try {
      source = execute(job.toolName, job.arguments, ctx);
    } catch (error) {
      this.settle(exec, (r) => failedTask(r, error));
      return ended;
    }
    exec.subscription = lastOf(source, {
      error: (error: unknown) => this.settle(exec, (r) => failedTask(r, error)),
      value: (last) => this.settle(exec, (r) => this.completedTask(r, last)),
    });
    return ended;
  }

  private async create(
    tool: ToolRuntime,
    mode: 'modern' | 'legacy',
    params: JsonObject,
    ctx: McpContext,
    answer: Result | undefined,
  ): Promise<McpTaskRecord> {
    const { settings } = this;
    const now = Date.now();
    let ttlMs = settings.ttlMs;
    // 2025-11-25 clients may ask for a TTL; they get it within the server's bounds.
    const asked = isObject(params.task) ? params.task.ttl : undefined;
    if (mode === 'legacy' && typeof asked === 'number' && Number.isSafeInteger(asked) && asked > 0)
      ttlMs = Math.min(asked, settings.maxTtlMs);
    let record: McpTaskRecord = {
      taskId: randomBytes(18).toString('base64url'),
      owner: ownerOf(ctx),
      caller: callerOf(ctx),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs: settings.pollIntervalMs,
      toolName: tool.name,
    };
    if (answer) record = this.completedTask(record, answer);
    await settings.store.create(record, { perCaller: settings.maxTasksPerPrincipal, total: settings.maxTasks });
    return record;
  }

  /** The task completed with the handler's result, or failed when the result is over `maxResultBytes`. */
  private completedTask(record: McpTaskRecord, last: Result | undefined): McpTaskRecord {
    const done = completedTask(record, last ?? { content: [] }, this.settings.maxResultBytes);
    if (done.status === 'failed') this.options.logger.warn(done.statusMessage!);
    return done;
  }

  private async onSignal(taskId: string, signal: McpTaskSignal): Promise<void> {
    const exec = this.running.get(taskId);
    if (!exec) return;
    if (signal.kind === 'cancel') return this.stop(exec, 'cancelled');
    for (const [key, answer] of Object.entries(signal.responses)) exec.pending.get(key)?.resolve(answer);
  }

  private executor?: McpTaskExecutor;

  /** How durable jobs run their tool (the tools feature binds it). */
  bindExecutor(executor: McpTaskExecutor): void {
    this.executor = executor;
  }

  /** Starts this instance's worker of the durable queue, when one is configured. */
  async startQueue(): Promise<void> {
    const { queue } = this.settings;
    const executor = this.executor;
    if (!queue || !executor) return;
    await queue.start((job, attempt) => this.runJob(job, attempt, jobContext, executor));
  }

  /**
   * Stops listening to the store and stops the tasks this instance runs. Without a durable queue
   * nobody will run them again, so they are marked `failed`; with one, their jobs run elsewhere.
   */
  async shutdown(): Promise<void> {
    this.stopListening();
    const running = [...this.running.values()];
    this.running.clear();
    const lost = new McpError(
      ErrorCode.InternalError,
      'The server instance running this task shut down before the task finished. Call the tool again.',
    );
    await Promise.all(
      running.map(async (exec) => {
        this.stop(exec, 'shutdown');
        // With a queue the job stays unfinished, and runs again on another instance.
        if (!this.settings.queue) await exec.change((r) => failedTask(r, lost)).then(() => this.end(exec));
      }),
    );
    await this.settings.queue?.close();
  }
}

/** A task call, decided before its task exists (see McpRunAdmission). */
export type McpTaskAdmission = McpRunAdmission;
