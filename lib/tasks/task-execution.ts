import type { Subscription } from 'rxjs';
import type { McpContext } from '../protocol/context.js';
import type { McpFeatureOptions } from '../protocol/feature-host.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { McpTaskRecord, McpTaskStore } from './task-store.js';
import { messageOf, questionLost } from './task-records.js';

/**
 * A task this instance runs, and its writes to the store: each change after the one before, a
 * chatty handler's status messages coalesced, and the handler's questions waiting for `tasks/update`.
 */
export class TaskExecution {
  subscription?: Subscription;
  /** Questions waiting for `tasks/update`, by key. */
  readonly pending = new Map<string, { resolve(answer: unknown): void; reject(error: unknown): void }>();
  /** Store updates of this task, one after the other; never rejects. */
  private queue: Promise<unknown> = Promise.resolve();
  /** A store write failed and was logged; the next one that succeeds clears it. */
  private storeFailing?: boolean;
  /** The latest status message, and whether a write of it is queued (writes coalesce). */
  private statusMessage?: string;
  private statusQueued?: boolean;
  expiry?: NodeJS.Timeout;
  ended = false;
  /** Called once the task ended here (a durable job then completes). */
  onEnd?: () => void;

  constructor(
    readonly record: McpTaskRecord,
    readonly ctx: McpContext,
    private readonly store: McpTaskStore,
    private readonly logger: McpFeatureOptions['logger'],
    /** The client has the task id (2026-07-28 hands it out once the handler waits). */
    public revealed: boolean,
    /** Hands the task id to the client now (a no-op once done). */
    readonly reveal: () => void,
  ) {}

  /**
   * Applies a change to the stored task, after the task's earlier changes. Never rejects: a store
   * failure is logged (once until a write succeeds again), resolves to undefined, and is handed to
   * `onFailure` (a question that cannot be recorded fails instead of waiting forever).
   */
  change(
    change: (record: McpTaskRecord) => McpTaskRecord | undefined,
    onFailure?: (error: unknown) => void,
  ): Promise<McpTaskRecord | undefined> {
    const { taskId, toolName } = this.record;
    const next = this.queue
      .then(() =>
        this.store.update(taskId, (record) => {
          const changed = change(record);
          return changed && { ...changed, lastUpdatedAt: Date.now() };
        }),
      )
      .then(
        (record) => ((this.storeFailing = false), record),
        (error: unknown) => {
          if (!this.storeFailing) {
            this.storeFailing = true;
            this.logger.error(
              `Task "${taskId}" of tool "${toolName}" could not be updated in the task store: ${messageOf(error)}. Further failures of this task are not logged until an update succeeds.`,
            );
          }
          onFailure?.(error);
          return undefined;
        },
      );
    this.queue = next;
    return next;
  }

  /** Progress and log messages become the status message; writes coalesce, so a chatty handler costs at most one queued write. */
  status(message: string): void {
    this.statusMessage = message;
    if (this.ended || this.statusQueued) return;
    this.statusQueued = true;
    let read = false;
    void this.change((r) => {
      read = true;
      this.statusQueued = false;
      return { ...r, statusMessage: this.statusMessage };
    }).then(() => {
      if (!read) this.statusQueued = false;
    });
  }

  /** Records the handler's question on the task, and waits for its answer (or the call's abort). */
  awaitInput(key: string, method: string, params: JsonObject): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      const signal = this.ctx.signal;
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => {
        this.pending.delete(key);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = (outcome: () => void): void => {
        this.pending.delete(key);
        signal.removeEventListener('abort', onAbort);
        outcome();
      };
      this.pending.set(key, {
        resolve: (answer) => settle(() => resolve(answer)),
        reject: (error) => settle(() => reject(error)),
      });
      // The store's failure is logged by change(); the handler gets the module's own error, which
      // fails the task as it propagates, rather than an exception Nest would log as a crash again.
      void this.change(
        (r) => ({ ...r, status: 'input_required', inputRequests: { ...r.inputRequests, [key]: { method, params } } }),
        () => settle(() => reject(questionLost(this.record, method))),
      );
    });
  }
}
