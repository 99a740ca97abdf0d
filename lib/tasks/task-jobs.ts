import { McpMethods } from '../protocol/methods.js';
import { McpContext, type RequestEnvelope } from '../protocol/context.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import { isModernVersionString } from '../protocol/versions.js';

// Durable tasks: what a queued job carries, the queue, and the context a job runs in.

/**
 * What a durable queue job carries: enough for any instance to run the tool again. The creating
 * instance validated the arguments and met the tool's guards before it queued the job.
 */
export interface McpTaskJob {
  taskId: string;
  toolName: string;
  arguments: JsonObject;
  protocolVersion: string;
  capabilities: JsonObject;
  principal?: string;
  /** Whom the task counts against (its principal, else its client's address): its running share on the queue is this caller's. */
  caller?: string;
  /** The creating request's client address: an anonymous caller is the same caller on the instance that runs the job. */
  clientAddress?: string;
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

/** Runs a tool by name for a task job, the way tools/call runs it; throws the unknown-tool error for a name the job's caller cannot reach. */
export type { McpToolExecutor as McpTaskExecutor } from '../protocol/tool-calls.js';

/** A context for a durable job: the creating request's version, capabilities and principal, no stream. */
export function jobContext(job: McpTaskJob): McpContext {
  const envelope: RequestEnvelope = {
    era: isModernVersionString(job.protocolVersion) ? 'modern' : 'legacy',
    protocolVersion: job.protocolVersion,
    capabilities: job.capabilities,
    principal: job.principal,
    auth: job.auth,
    ...(job.clientAddress !== undefined && { clientAddress: () => job.clientAddress }),
  };
  const ctx = new McpContext(`task-${job.taskId}`, McpMethods.toolsCall.name, envelope, {}, () => undefined);
  // The creating instance counted the call's rate limits before it queued the job.
  ctx.policiesAdmitted = true;
  return ctx;
}
