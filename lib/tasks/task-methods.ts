import type { McpContext } from '../protocol/context.js';
import { isObject, truncate } from '../protocol/dispatcher.js';
import { McpError } from '../protocol/errors.js';
import { decodeHeaderValue } from '../protocol/header-value.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { McpFeatureHost } from '../protocol/feature-host.js';
import { isTerminal, type McpTaskRecord, type McpTaskStore } from './task-store.js';
import { BEARER, RELATED_TASK, ownerOf, wireTask } from './task-records.js';
import { TASKS_EXTENSION } from './task-mode.js';
import { declareMethods } from '../protocol/methods.js';
import type { ProtocolEra } from '../protocol/versions.js';

type Result = JsonObject;

const LIST_PAGE_SIZE = 50;

/** The task methods, declared by the tasks pack into the method table. */
export const TaskMethods = declareMethods({
  tasksGet: { name: 'tasks/get', eras: ['legacy', 'modern'] },
  tasksUpdate: { name: 'tasks/update', eras: ['modern'] },
  tasksCancel: { name: 'tasks/cancel', eras: ['legacy', 'modern'] },
  tasksResult: { name: 'tasks/result', eras: ['legacy'] },
  tasksList: { name: 'tasks/list', eras: ['legacy'] },
});

/**
 * The task requests of both eras, on the store (wherever the task runs): every one checked
 * against the task's owner, a mismatch answering as an unknown id.
 */
class TaskRequests {
  constructor(private readonly store: McpTaskStore) {}

  /** The caller's task, or the error an unknown id gets (the same for another caller's task). */
  async find(params: JsonObject, ctx: McpContext): Promise<McpTaskRecord> {
    const taskId = params.taskId;
    if (typeof taskId !== 'string' || taskId.length === 0) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `${ctx.method} needs "params.taskId", the id the server returned when it created the task.`,
      );
    }
    const record = await this.store.get(taskId);
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
      throw new McpError(
        ErrorCode.InvalidParams,
        'tasks/update needs "params.inputResponses", an object of answers keyed like the task\'s inputRequests.',
      );
    }
    const outstanding = record.inputRequests ?? {};
    const answers: JsonObject = {};
    for (const [key, answer] of Object.entries(params.inputResponses))
      if (Object.hasOwn(outstanding, key)) answers[key] = answer;
    if (Object.keys(answers).length === 0 || isTerminal(record.status)) return;
    await this.store.update(record.taskId, (r) => {
      const remaining = { ...r.inputRequests };
      for (const key of Object.keys(answers)) delete remaining[key];
      const open = Object.keys(remaining).length > 0;
      return {
        ...r,
        status: open ? 'input_required' : 'working',
        inputRequests: open ? remaining : undefined,
        lastUpdatedAt: Date.now(),
      };
    });
    await this.store.signal(record.taskId, { kind: 'input', responses: answers });
  }

  /** `tasks/cancel`: the task turns `cancelled` unless it already ended; the instance running it stops it. */
  async cancel(params: JsonObject, ctx: McpContext): Promise<McpTaskRecord> {
    const record = await this.find(params, ctx);
    if (isTerminal(record.status)) return record;
    const cancelled = await this.store.update(record.taskId, (r) => ({
      ...r,
      status: 'cancelled',
      statusMessage: "The task was cancelled at the client's request.",
      inputRequests: undefined,
      lastUpdatedAt: Date.now(),
    }));
    await this.store.signal(record.taskId, { kind: 'cancel' });
    return cancelled ?? record;
  }

  /** Resolves with the task once it is terminal (2025-11-25 `tasks/result` blocks until then). */
  async settled(record: McpTaskRecord, signal: AbortSignal): Promise<McpTaskRecord> {
    if (isTerminal(record.status)) return record;
    const store = this.store;
    if (!store.onChange)
      throw new McpError(
        ErrorCode.InternalError,
        'The configured task store cannot report task changes, which tasks/result needs.',
      );
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
      store.get(record.taskId).then(
        (current) => current && isTerminal(current.status) && done(() => resolve(current)),
        (error: unknown) => done(() => reject(error)),
      );
    });
  }

  /** One page of the caller's tasks; a caller with neither principal nor session has none to list (its ids are its only keys). */
  async list(params: JsonObject, ctx: McpContext): Promise<{ tasks: McpTaskRecord[]; nextCursor?: string }> {
    if (params.cursor !== undefined && typeof params.cursor !== 'string')
      throw new McpError(
        ErrorCode.InvalidParams,
        'tasks/list "params.cursor" must be the string a previous page returned as nextCursor.',
      );
    const owner = ownerOf(ctx);
    if (owner === BEARER) return { tasks: [] };
    return this.store.list(owner, params.cursor, LIST_PAGE_SIZE);
  }
}

/**
 * Registers `tasks/get`, `tasks/update` and `tasks/cancel` on the 2026-07-28 era, each refused with
 * -32021 unless the request declares the extension, and their `Mcp-Name` header rule (it must
 * equal `params.taskId`).
 */
export function installModernTasks(host: McpFeatureHost, store: McpTaskStore): void {
  const runner = new TaskRequests(store);
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
  const modern = { eras: MODERN, headers: taskNameHeaderProblem };
  host.define(TaskMethods.tasksGet, {
    ...modern,
    handler: gated(async (params, ctx) => wireTask(await runner.find(params, ctx), true)),
  });
  host.define(TaskMethods.tasksUpdate, {
    ...modern,
    handler: gated(async (params, ctx) => (await runner.update(params, ctx), {})),
  });
  host.define(TaskMethods.tasksCancel, {
    ...modern,
    handler: gated(async (params, ctx) => (await runner.cancel(params, ctx), {})),
  });
}

/**
 * Registers the experimental tasks of 2025-11-25 on the legacy era: `tasks/get`, `tasks/result`
 * (blocks until the task ends, then answers what `tools/call` would have), `tasks/list` (the
 * caller's tasks, paged) and `tasks/cancel` (a terminal task cannot be cancelled: -32602).
 */
export function installLegacyTasks(host: McpFeatureHost, store: McpTaskStore): void {
  const runner = new TaskRequests(store);
  host.define(TaskMethods.tasksGet, {
    eras: LEGACY,
    handler: async (params, ctx) => wireTask(await runner.find(params, ctx), false, 'legacy'),
  });
  host.define(TaskMethods.tasksResult, {
    handler: async (params, ctx) => {
      const record = await runner.settled(await runner.find(params, ctx), ctx.signal);
      if (record.status === 'failed') {
        const error = record.error ?? {};
        throw new McpError(
          typeof error.code === 'number' ? error.code : ErrorCode.InternalError,
          String(error.message ?? 'The task failed.'),
          error.data,
        );
      }
      if (record.status === 'cancelled')
        throw new McpError(ErrorCode.InvalidParams, `Task "${record.taskId}" was cancelled, so it has no result.`);
      const result = record.result ?? { content: [] };
      return {
        ...result,
        _meta: { ...(isObject(result._meta) ? result._meta : {}), [RELATED_TASK]: { taskId: record.taskId } },
      };
    },
  });
  host.define(TaskMethods.tasksList, {
    handler: async (params, ctx) => {
      const page = await runner.list(params, ctx);
      const result: JsonObject = { tasks: page.tasks.map((task) => wireTask(task, false, 'legacy')) };
      if (page.nextCursor !== undefined) result.nextCursor = page.nextCursor;
      return result;
    },
  });
  host.define(TaskMethods.tasksCancel, {
    eras: LEGACY,
    handler: async (params, ctx) => {
      const record = await runner.find(params, ctx);
      if (isTerminal(record.status)) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `Task "${record.taskId}" already ended (${record.status}), so it cannot be cancelled.`,
        );
      }
      return wireTask(await runner.cancel(params, ctx), false, 'legacy');
    },
  });
}

const MODERN: readonly ProtocolEra[] = ['modern'];
const LEGACY: readonly ProtocolEra[] = ['legacy'];

function taskNameHeaderProblem(
  params: JsonObject,
  getHeader: (name: string) => string | undefined,
): string | undefined {
  const raw = getHeader('mcp-name');
  if (raw === undefined)
    return 'Header mismatch: the Mcp-Name header is required on task requests and must equal params.taskId.';
  const decoded = decodeHeaderValue(raw);
  if (!decoded.ok)
    return 'Header mismatch: the Mcp-Name header has invalid characters or a malformed =?base64?…?= value.';
  if (typeof params.taskId !== 'string' || decoded.value !== params.taskId.trim()) {
    return `Header mismatch: Mcp-Name header "${truncate(decoded.value)}" does not match params.taskId.`;
  }
  return undefined;
}
