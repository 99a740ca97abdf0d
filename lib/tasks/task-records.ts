import type { McpContext } from '../protocol/context.js';
import { isObject } from '../protocol/dispatcher.js';
import { McpError } from '../protocol/errors.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import { addressOwner } from '../protocol/principal.js';
import type { McpTaskRecord } from './task-store.js';

// Who a task belongs to and counts against, and how a task looks on the wire.

type Result = JsonObject;

export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** The owner of a task whose creator had neither a principal nor a session: its id is the only key, and no list shows it. */
export const BEARER = 'bearer';

/**
 * Whom a task belongs to, and who alone may read, answer, cancel or list it: the authenticated
 * principal, else the anonymous legacy session, else (a stateless caller) whoever holds its id,
 * which no list ever shows.
 */
export function ownerOf(ctx: McpContext): string {
  if (ctx.principal !== undefined) return `principal:${ctx.principal}`;
  if (ctx.era === 'legacy' && ctx.sessionId !== undefined) return `session:${ctx.sessionId}`;
  return BEARER;
}

/**
 * Whom a task counts against: the principal, else the client's address (as the app's trust proxy
 * setting gives it; IPv6 by /64), whatever session or era an anonymous caller uses.
 */
export function callerOf(ctx: McpContext): string {
  return ctx.principal !== undefined ? `principal:${ctx.principal}` : `address:${addressOwner(ctx.clientAddress)}`;
}

/** The answer of a call whose task exists: the CreateTaskResult of its era. */
export function createdResult(record: McpTaskRecord, mode: 'modern' | 'legacy'): Result {
  return mode === 'modern'
    ? { resultType: 'task', ...wireTask(record, false) }
    : { task: wireTask(record, false, 'legacy') };
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
export function failedTask(record: McpTaskRecord, error: unknown): McpTaskRecord {
  const rpc: JsonObject =
    error instanceof McpError
      ? {
          code: error.code,
          message: error.message,
          ...(error.data === undefined ? {} : { data: error.data as JsonObject }),
        }
      : {
          code: ErrorCode.InternalError,
          message: 'The task failed with an internal error. The server log has the details.',
        };
  return { ...record, status: 'failed', statusMessage: rpc.message as string, error: rpc, inputRequests: undefined };
}

/**
 * The task completed with a handler's result, or failed (naming the option) when the result's
 * JSON is over `maxBytes`, so that a task holds a bounded result.
 */
export function completedTask(record: McpTaskRecord, result: Result, maxBytes: number): McpTaskRecord {
  const kept = stripTaskMeta(result);
  const bytes = Buffer.byteLength(JSON.stringify(kept));
  if (bytes <= maxBytes) return { ...record, status: 'completed', result: kept, inputRequests: undefined };
  const message = `Tool "${record.toolName}" returned a task result of ${bytes} bytes, more than the ${maxBytes} a task keeps (McpModule option tasks.maxResultBytes). Return less (a resource link to the full output), or raise the option.`;
  return failedTask(record, new McpError(ErrorCode.InternalError, message));
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The inlined result carries no task metadata: the task id is on the task itself. */
export function stripTaskMeta(result: Result): Result {
  if (!isObject(result._meta) || !(RELATED_TASK in result._meta)) return result;
  const { [RELATED_TASK]: _related, ...meta } = result._meta;
  return { ...result, _meta: meta };
}

/** What a question inside a task answers when the task store could not record it (the cause is in the log, not the task). */
export function questionLost(record: McpTaskRecord, method: string): McpError {
  return new McpError(
    ErrorCode.InternalError,
    `Task "${record.taskId}" of tool "${record.toolName}" failed: its question to the client (${method}) could not be recorded, because the task store was unavailable. Call the tool again.`,
  );
}
