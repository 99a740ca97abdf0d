import { randomBytes } from 'node:crypto';
import { Observable, type Subscription } from 'rxjs';
import type { ToolRuntime } from '../catalog.js';
import { McpContext, type RequestEnvelope } from '../context.js';
import { isModernVersionString } from '../versions.js';
import { McpCancelledError, isObject, truncate } from '../dispatcher.js';
import { McpError, ToolError } from '../errors.js';
import { decodeHeaderValue } from '../header-value.js';
import { ErrorCode } from '../json-rpc.js';
import type { JsonObject } from '../mcp-types.js';
import type { McpFeatureHost, McpFeatureOptions } from '../feature-host.js';
import { isTerminal, type McpTaskRecord, type McpTaskSignal, type McpTaskStore } from './task-store.js';

type Result = JsonObject;

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const LIST_PAGE_SIZE = 50;

/** The `tasks` capability of 2025-11-25 (initialize only: 2026-07-28 has the extension instead). */
export const LEGACY_TASKS_CAPABILITY: JsonObject = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** The extension id of tasks on 2026-07-28 (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The task settings a runner works with, after defaults. */
export interface McpTaskSettings {
  store: McpTaskStore;
  /** The TTL a task gets (2025-11-25 clients may ask for less, never for more than maxTtlMs). */
  ttlMs: number;
  maxTtlMs: number;
  pollIntervalMs: number;
  maxTasksPerPrincipal: number;
  maxTasks: number;
  /** Runs tasks as jobs of a durable queue (BullMQ) instead of in the process that created them. */
  queue?: McpTaskQueue;
}

/** What a durable queue job carries: enough for any instance to run the tool again. */
export interface McpTaskJob {
  taskId: string;
  toolName: string;
  arguments: JsonObject;
  protocolVersion: string;
  capabilities: JsonObject;
  principal?: string;
  auth?: { id: string; scopes?: string[]; claims?: Record<string, unknown> };
}

/**
 * A durable queue of task jobs (at least once: a job whose instance died runs again elsewhere).
 * `start` registers the function that runs one job; it resolves when the task has ended.
 */
export interface McpTaskQueue {
  enqueue(job: McpTaskJob): Promise<void>;
  start(run: (job: McpTaskJob, attempt: number) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** Runs a tool by name for a task job, the way tools/call runs it. */
export type McpTaskExecutor = (toolName: string, rawArgs: JsonObject, ctx: McpContext) => Observable<Result> | undefined;

/** What the runner keeps of a task this instance runs. */
interface Execution {
  taskId?: string;
  ctx: McpContext;
  subscription?: Subscription;
  /** Questions waiting for `tasks/update`, by key. */
  pending: Map<string, { resolve(answer: unknown): void; reject(error: unknown): void }>;
  /** Store updates of this task, one after the other. */
  queue: Promise<unknown>;
  /** Called once the task ended here (a durable job then completes). */
  ended?: () => void;
}

/** How a `tools/call` runs: in the request, or as a task of one era. */
export type TaskMode = 'sync' | 'modern' | 'legacy';

/**
 * Runs task tools as tasks and serves the task methods. A task is created in the store before its
 * id is returned, runs in this process (its context's questions and status messages go to the
 * task), and is reached from any request, on any instance sharing the store, through the store's
 * signals.
 */
export class McpTaskRunner {
  private readonly running = new Map<string, Execution>();
  private readonly stopListening: () => void;

  constructor(
    private readonly settings: McpTaskSettings,
    private readonly options: Pick<McpFeatureOptions, 'logger'>,
  ) {
    this.stopListening = settings.store.onSignal((taskId, signal) => this.onSignal(taskId, signal));
  }

  /**
   * Whether this call runs as a task. 2026-07-28: when the tool supports tasks and the request
   * declares the extension (a `required` tool without it is refused with -32021). 2025-11-25:
   * when the tool supports tasks and the request carries `task`.
   */
  mode(tool: ToolRuntime, params: JsonObject, ctx: McpContext): TaskMode {
    if (!tool.taskSupport) return 'sync';
    if (ctx.era === 'modern') {
      if (ctx.clientExtension(TASKS_EXTENSION)) return 'modern';
      if (tool.taskSupport === 'required') {
        throw new McpError(
          ErrorCode.MissingRequiredClientCapability,
          `Tool "${tool.name}" runs only as a task, and this request did not declare the "${TASKS_EXTENSION}" extension in _meta["io.modelcontextprotocol/clientCapabilities"].extensions. Use a client that supports tasks.`,
          { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
        );
      }
      return 'sync';
    }
    if (isObject(params.task)) return 'legacy';
    if (tool.taskSupport === 'required') {
      throw new McpError(
        ErrorCode.MethodNotFound,
        `Tool "${tool.name}" runs only as a task: call it with the "task" parameter of tools/call (its execution.taskSupport is "required").`,
      );
    }
    return 'sync';
  }

  /**
   * Runs `execute` (the tool call) for a task. 2026-07-28: the handler starts inside the request,
   * where questions marked `beforeTask` still end the request with `input_required`; the task is
   * created once the handler waits on anything else (or asks another question), and the request
   * answers with the CreateTaskResult. A handler done before that answers with its result.
   * 2025-11-25: the task is created first.
   */
  run(tool: ToolRuntime, mode: 'modern' | 'legacy', params: JsonObject, ctx: McpContext, execute: () => Observable<Result>): Observable<Result> {
    if (this.settings.queue) return this.enqueue(tool, mode, params, ctx);
    return new Observable<Result>((subscriber) => {
      const exec: Execution = { ctx, pending: new Map(), queue: Promise.resolve() };
      let creating: Promise<McpTaskRecord> | undefined;
      let created = false;
      let seedMessage: string | undefined;
      const create = (): Promise<McpTaskRecord> =>
        (creating ??= this.create(tool, mode, params, ctx, seedMessage).then(
          (record) => {
            created = true;
            exec.taskId = record.taskId;
            this.running.set(record.taskId, exec);
            subscriber.next(mode === 'modern' ? { resultType: 'task', ...wireTask(record, false) } : { task: wireTask(record, false, 'legacy') });
            subscriber.complete();
            return record;
          },
          (error: unknown) => {
            exec.subscription?.unsubscribe();
            subscriber.error(error);
            throw error;
          },
        ));
      ctx.taskHooks = {
        get created() {
          return created;
        },
        input: (key, method, request) =>
          mode === 'legacy'
            ? Promise.reject(new ToolError(`This tool asks the client for input ("${method}") inside a task, which this server supports on protocol 2026-07-28 only. Call it without the "task" parameter.`))
            : create().then(() => this.awaitInput(exec, key, method, request)),
        status: (message) => {
          if (!creating) seedMessage = message;
          else void create().then(() => this.change(exec, (r) => ({ ...r, statusMessage: message })));
        },
      };
      const finish = (change: (record: McpTaskRecord) => McpTaskRecord): void => {
        void create()
          .then(() => this.change(exec, change))
          .finally(() => this.forget(exec))
          .catch(() => undefined);
      };
      let last: Result | undefined;
      // The request's own turn: what the handler does at once belongs to the request.
      const timer = mode === 'modern' ? setImmediate(() => void create().catch(() => undefined)) : undefined;
      if (mode === 'legacy') void create().catch(() => undefined);
      exec.subscription = execute().subscribe({
        next: (value) => (last = value),
        error: (error: unknown) => {
          if (timer) clearImmediate(timer);
          // A question asked before the task (MRTR) ends the request; an optional tool done at once answers in it.
          if (!creating && (ctx.inputRequired || tool.taskSupport === 'optional')) return subscriber.error(error);
          finish((r) => failedTask(r, error));
        },
        complete: () => {
          if (timer) clearImmediate(timer);
          if (!creating && tool.taskSupport === 'optional') {
            subscriber.next(last ?? {});
            return subscriber.complete();
          }
          finish((r) => ({ ...r, status: 'completed', result: stripTaskMeta(last ?? { content: [] }), inputRequests: undefined }));
        },
      });
      return () => {
        // Before the task exists, the request's end (a disconnect) is the call's end.
        if (creating) return;
        if (timer) clearImmediate(timer);
        exec.subscription?.unsubscribe();
      };
    });
  }

  /** Durable tasks: stored, queued, and answered at once; a worker of any instance runs them. */
  private enqueue(tool: ToolRuntime, mode: 'modern' | 'legacy', params: JsonObject, ctx: McpContext): Observable<Result> {
    return new Observable<Result>((subscriber) => {
      void (async () => {
        const record = await this.create(tool, mode, params, ctx, undefined);
        const auth = ctx.auth;
        await this.settings.queue!.enqueue({
          taskId: record.taskId,
          toolName: tool.name,
          arguments: isObject(params.arguments) ? params.arguments : {},
          protocolVersion: ctx.protocolVersion,
          capabilities: ctx.clientCapabilities,
          ...(ctx.principal !== undefined && { principal: ctx.principal }),
          ...(auth && { auth }),
        });
        return record;
      })().then(
        (record) => {
          subscriber.next(mode === 'modern' ? { resultType: 'task', ...wireTask(record, false) } : { task: wireTask(record, false, 'legacy') });
          subscriber.complete();
        },
        (error: unknown) => subscriber.error(error),
      );
    });
  }

  /**
   * Runs one durable job: the tool again, in a context rebuilt from the job (its questions go to
   * the task; it has no request to stream to). Resolves once the task ended here.
   */
  async runJob(job: McpTaskJob, attempt: number, context: (job: McpTaskJob) => McpContext, execute: McpTaskExecutor): Promise<void> {
    const record = await this.settings.store.get(job.taskId);
    if (!record || isTerminal(record.status)) return;
    const ctx = context(job);
    const exec: Execution = { taskId: job.taskId, ctx, pending: new Map(), queue: Promise.resolve() };
    ctx.taskHooks = {
      created: true,
      attempt,
      input: (key, method, request) => this.awaitInput(exec, key, method, request),
      status: (message) => void this.change(exec, (r) => ({ ...r, statusMessage: message })),
    };
    const source = execute(job.toolName, job.arguments, ctx);
    if (!source) {
      await this.change(exec, (r) => failedTask(r, new McpError(ErrorCode.InvalidParams, `Tool "${job.toolName}" is not served by this instance, so its task cannot run here.`)));
      return;
    }
    this.running.set(job.taskId, exec);
    await new Promise<void>((resolve) => {
      exec.ended = resolve;
      let last: Result | undefined;
      const end = (change: (r: McpTaskRecord) => McpTaskRecord): void => {
        void this.change(exec, change).finally(() => (this.forget(exec), resolve()));
      };
      exec.subscription = source.subscribe({
        next: (value) => (last = value),
        error: (error: unknown) => end((r) => failedTask(r, error)),
        complete: () => end((r) => ({ ...r, status: 'completed', result: stripTaskMeta(last ?? { content: [] }), inputRequests: undefined })),
      });
    });
  }

  private async create(tool: ToolRuntime, mode: 'modern' | 'legacy', params: JsonObject, ctx: McpContext, statusMessage: string | undefined): Promise<McpTaskRecord> {
    const { settings } = this;
    const now = Date.now();
    let ttlMs = settings.ttlMs;
    // 2025-11-25 clients may ask for a TTL; they get it within the server's bounds.
    const asked = isObject(params.task) ? params.task.ttl : undefined;
    if (mode === 'legacy' && typeof asked === 'number' && Number.isSafeInteger(asked) && asked > 0) ttlMs = Math.min(asked, settings.maxTtlMs);
    const record: McpTaskRecord = {
      taskId: randomBytes(18).toString('base64url'),
      owner: ownerOf(ctx),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs: settings.pollIntervalMs,
      toolName: tool.name,
    };
    if (statusMessage !== undefined) record.statusMessage = statusMessage;
    await settings.store.create(record, { perOwner: settings.maxTasksPerPrincipal, total: settings.maxTasks });
    return record;
  }

  private change(exec: Execution, change: (record: McpTaskRecord) => McpTaskRecord | undefined): Promise<McpTaskRecord | undefined> {
    const taskId = exec.taskId!;
    const next = exec.queue.then(() =>
      this.settings.store.update(taskId, (record) => {
        const changed = change(record);
        return changed && { ...changed, lastUpdatedAt: Date.now() };
      }),
    );
    exec.queue = next.catch((error: unknown) => {
      this.options.logger.error(`Task "${taskId}" could not be updated in the task store: ${error instanceof Error ? error.message : String(error)}`);
    });
    return next;
  }

  private awaitInput(exec: Execution, key: string, method: string, params: JsonObject): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      const signal = exec.ctx.signal;
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => {
        exec.pending.delete(key);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      exec.pending.set(key, {
        resolve: (answer) => (signal.removeEventListener('abort', onAbort), resolve(answer)),
        reject: (error) => (signal.removeEventListener('abort', onAbort), reject(error)),
      });
      void this.change(exec, (r) => ({ ...r, status: 'input_required', inputRequests: { ...r.inputRequests, [key]: { method, params } } }));
    });
  }

  private async onSignal(taskId: string, signal: McpTaskSignal): Promise<void> {
    const exec = this.running.get(taskId);
    if (!exec) return;
    if (signal.kind === 'cancel') {
      exec.ctx.abortCall(new McpCancelledError());
      exec.subscription?.unsubscribe();
      this.forget(exec);
      return;
    }
    for (const [key, answer] of Object.entries(signal.responses)) {
      const waiting = exec.pending.get(key);
      if (!waiting) continue;
      exec.pending.delete(key);
      waiting.resolve(answer);
    }
  }

  private forget(exec: Execution): void {
    if (exec.taskId) this.running.delete(exec.taskId);
    exec.ended?.();
  }

  /** The caller's task, or the error an unknown id gets (the same for another principal's task). */
  async find(params: JsonObject, ctx: McpContext): Promise<McpTaskRecord> {
    const taskId = params.taskId;
    if (typeof taskId !== 'string' || taskId.length === 0) {
      throw new McpError(ErrorCode.InvalidParams, `${ctx.method} needs "params.taskId", the id the server returned when it created the task.`);
    }
    const record = await this.settings.store.get(taskId);
    if (!record || record.owner !== ownerOf(ctx)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Failed to retrieve task: task "${truncate(taskId)}" not found. It may have expired (tasks are kept for their ttlMs), or it was created by another caller.`,
      );
    }
    return record;
  }

  /** `tasks/update`: answers the outstanding questions it names; others are ignored. */
  async update(params: JsonObject, ctx: McpContext): Promise<void> {
    const record = await this.find(params, ctx);
    if (!isObject(params.inputResponses)) {
      throw new McpError(ErrorCode.InvalidParams, 'tasks/update needs "params.inputResponses", an object of answers keyed like the task\'s inputRequests.');
    }
    const outstanding = record.inputRequests ?? {};
    const answers: JsonObject = {};
    for (const [key, answer] of Object.entries(params.inputResponses)) if (Object.hasOwn(outstanding, key)) answers[key] = answer;
    if (Object.keys(answers).length === 0 || isTerminal(record.status)) return;
    await this.settings.store.update(record.taskId, (r) => {
      const remaining = { ...r.inputRequests };
      for (const key of Object.keys(answers)) delete remaining[key];
      const open = Object.keys(remaining).length > 0;
      return { ...r, status: open ? 'input_required' : 'working', inputRequests: open ? remaining : undefined, lastUpdatedAt: Date.now() };
    });
    await this.settings.store.signal(record.taskId, { kind: 'input', responses: answers });
  }

  /** `tasks/cancel`: the task turns `cancelled` unless it already ended; the instance running it stops it. */
  async cancel(params: JsonObject, ctx: McpContext): Promise<McpTaskRecord> {
    const record = await this.find(params, ctx);
    if (isTerminal(record.status)) return record;
    const cancelled = await this.settings.store.update(record.taskId, (r) => ({
      ...r,
      status: 'cancelled',
      statusMessage: 'The task was cancelled at the client\'s request.',
      inputRequests: undefined,
      lastUpdatedAt: Date.now(),
    }));
    await this.settings.store.signal(record.taskId, { kind: 'cancel' });
    return cancelled ?? record;
  }

  /** Resolves with the task once it is terminal (2025-11-25 `tasks/result` blocks until then). */
  async settled(record: McpTaskRecord, signal: AbortSignal): Promise<McpTaskRecord> {
    if (isTerminal(record.status)) return record;
    const store = this.settings.store;
    if (!store.onChange) throw new McpError(ErrorCode.InternalError, 'The configured task store cannot report task changes, which tasks/result needs.');
    return new Promise<McpTaskRecord>((resolve, reject) => {
      const done = (outcome: () => void): void => {
        stop();
        signal.removeEventListener('abort', onAbort);
        outcome();
      };
      const onAbort = (): void => done(() => reject(signal.reason));
      const stop = store.onChange!((changed) => {
        if (changed.taskId === record.taskId && isTerminal(changed.status)) done(() => resolve(changed));
      });
      signal.addEventListener('abort', onAbort, { once: true });
      // A change between the read and the subscription would be missed: read once more.
      void store.get(record.taskId).then((current) => {
        if (current && isTerminal(current.status)) done(() => resolve(current));
      });
    });
  }

  /** One page of the caller's tasks. */
  list(params: JsonObject, ctx: McpContext): Promise<{ tasks: McpTaskRecord[]; nextCursor?: string }> {
    if (params.cursor !== undefined && typeof params.cursor !== 'string') throw new McpError(ErrorCode.InvalidParams, 'tasks/list "params.cursor" must be the string a previous page returned as nextCursor.');
    return this.settings.store.list(ownerOf(ctx), params.cursor, LIST_PAGE_SIZE);
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
    const lost = new McpError(ErrorCode.InternalError, 'The server instance running this task shut down before the task finished. Call the tool again.');
    await Promise.all(
      running.map(async (exec) => {
        exec.subscription?.unsubscribe();
        exec.ctx.abortCall(new McpCancelledError());
        if (!this.settings.queue) await this.change(exec, (r) => failedTask(r, lost)).catch(() => undefined);
      }),
    );
    await this.settings.queue?.close();
  }
}

/**
 * Registers `tasks/get`, `tasks/update` and `tasks/cancel` on the 2026-07-28 era, each refused with
 * -32021 unless the request declares the extension, and their `Mcp-Name` header rule (it must
 * equal `params.taskId`).
 */
export function installModernTasks(host: McpFeatureHost, runner: McpTaskRunner): void {
  const gated =
    (handler: (params: JsonObject, ctx: McpContext) => Promise<Result>) =>
    (params: JsonObject, ctx: McpContext): Promise<Result> => {
      if (!ctx.clientExtension(TASKS_EXTENSION)) {
        throw new McpError(
          ErrorCode.MissingRequiredClientCapability,
          `${ctx.method} belongs to the "${TASKS_EXTENSION}" extension, which this request did not declare in _meta["io.modelcontextprotocol/clientCapabilities"].extensions.`,
          { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
        );
      }
      return handler(params, ctx);
    };
  host.setMethod('tasks/get', ['modern'], gated(async (params, ctx) => wireTask(await runner.find(params, ctx), true)));
  host.setMethod('tasks/update', ['modern'], gated(async (params, ctx) => (await runner.update(params, ctx), {})));
  host.setMethod('tasks/cancel', ['modern'], gated(async (params, ctx) => (await runner.cancel(params, ctx), {})));
  for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) host.setHeaderCheck(method, taskNameHeaderProblem);
}

/**
 * Registers the experimental tasks of 2025-11-25 on the legacy era: `tasks/get`, `tasks/result`
 * (blocks until the task ends, then answers what `tools/call` would have), `tasks/list` (the
 * caller's tasks, paged) and `tasks/cancel` (a terminal task cannot be cancelled: -32602).
 */
export function installLegacyTasks(host: McpFeatureHost, runner: McpTaskRunner): void {
  host.setMethod('tasks/get', ['legacy'], async (params, ctx) => wireTask(await runner.find(params, ctx), false, 'legacy'));
  host.setMethod('tasks/result', ['legacy'], async (params, ctx) => {
    const record = await runner.settled(await runner.find(params, ctx), ctx.signal);
    if (record.status === 'failed') {
      const error = record.error ?? {};
      throw new McpError(typeof error.code === 'number' ? error.code : ErrorCode.InternalError, String(error.message ?? 'The task failed.'), error.data);
    }
    if (record.status === 'cancelled') throw new McpError(ErrorCode.InvalidParams, `Task "${record.taskId}" was cancelled, so it has no result.`);
    const result = record.result ?? { content: [] };
    return { ...result, _meta: { ...(isObject(result._meta) ? result._meta : {}), [RELATED_TASK]: { taskId: record.taskId } } };
  });
  host.setMethod('tasks/list', ['legacy'], async (params, ctx) => {
    const page = await runner.list(params, ctx);
    const result: JsonObject = { tasks: page.tasks.map((task) => wireTask(task, false, 'legacy')) };
    if (page.nextCursor !== undefined) result.nextCursor = page.nextCursor;
    return result;
  });
  host.setMethod('tasks/cancel', ['legacy'], async (params, ctx) => {
    const record = await runner.find(params, ctx);
    if (isTerminal(record.status)) {
      throw new McpError(ErrorCode.InvalidParams, `Task "${record.taskId}" already ended (${record.status}), so it cannot be cancelled.`);
    }
    return wireTask(await runner.cancel(params, ctx), false, 'legacy');
  });
}

function taskNameHeaderProblem(params: JsonObject, getHeader: (name: string) => string | undefined): string | undefined {
  const raw = getHeader('mcp-name');
  if (raw === undefined) return 'Header mismatch: the Mcp-Name header is required on task requests and must equal params.taskId.';
  const decoded = decodeHeaderValue(raw);
  if (!decoded.ok) return 'Header mismatch: the Mcp-Name header has invalid characters or a malformed =?base64?…?= value.';
  if (typeof params.taskId !== 'string' || decoded.value !== params.taskId.trim()) {
    return `Header mismatch: Mcp-Name header "${truncate(decoded.value)}" does not match params.taskId.`;
  }
  return undefined;
}

/** A context for a durable job: the creating request's version, capabilities and principal, no stream. */
function jobContext(job: McpTaskJob): McpContext {
  const envelope: RequestEnvelope = {
    era: isModernVersionString(job.protocolVersion) ? 'modern' : 'legacy',
    protocolVersion: job.protocolVersion,
    capabilities: job.capabilities,
    principal: job.principal,
    auth: job.auth,
  };
  return new McpContext(`task-${job.taskId}`, 'tools/call', envelope, {}, () => undefined);
}

/** Whom a task belongs to: the authenticated principal, else the legacy session, else anyone holding its id. */
export function ownerOf(ctx: McpContext): string {
  if (ctx.principal !== undefined) return `principal:${ctx.principal}`;
  if (ctx.era === 'legacy' && ctx.sessionId !== undefined) return `session:${ctx.sessionId}`;
  return 'anonymous';
}

/**
 * A task on the wire. 2026-07-28: `ttlMs`, `pollIntervalMs` and, when `detailed` (tasks/get), the
 * result, error or input requests inlined. 2025-11-25: `ttl` and `pollInterval`, nothing inlined.
 */
export function wireTask(record: McpTaskRecord, detailed: boolean, era: 'modern' | 'legacy' = 'modern'): JsonObject {
  const task: JsonObject = {
    taskId: record.taskId,
    status: record.status,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
  };
  if (era === 'modern') {
    task.ttlMs = record.ttlMs;
    task.pollIntervalMs = record.pollIntervalMs;
  } else {
    task.ttl = record.ttlMs;
    task.pollInterval = record.pollIntervalMs;
  }
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage;
  if (!detailed) return task;
  if (record.status === 'completed' && record.result) task.result = record.result;
  if (record.status === 'failed' && record.error) task.error = record.error;
  if (record.status === 'input_required' && record.inputRequests) task.inputRequests = record.inputRequests;
  return task;
}

/** Only protocol errors fail a task; a tool's own error is a completed task with `isError`. */
function failedTask(record: McpTaskRecord, error: unknown): McpTaskRecord {
  const rpc: JsonObject =
    error instanceof McpError
      ? { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data as JsonObject }) }
      : { code: ErrorCode.InternalError, message: 'The task failed with an internal error. The server log has the details.' };
  return { ...record, status: 'failed', statusMessage: rpc.message as string, error: rpc, inputRequests: undefined };
}

/** The inlined result carries no task metadata: the task id is on the task itself. */
function stripTaskMeta(result: Result): Result {
  if (!isObject(result._meta) || !(RELATED_TASK in result._meta)) return result;
  const { [RELATED_TASK]: _related, ...meta } = result._meta;
  return { ...result, _meta: meta };
}
