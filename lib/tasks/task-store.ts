import { McpError } from '../protocol/errors.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';

/** The states of a task; the last three are terminal. @publicApi */
export type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export function isTerminal(status: McpTaskStatus): boolean {
  return TERMINAL.has(status);
}

/**
 * One task as a store holds it. `owner` binds it to whoever created it (the principal, else the
 * anonymous legacy session, else `"bearer"`: whoever holds the id): every task request is checked
 * against it, and a mismatch answers as an unknown id. `caller` is whom it counts against.
 *
 * @publicApi
 */
export interface McpTaskRecord {
  taskId: string;
  owner: string;
  /**
   * Whom the task counts against for `tasks.maxTasksPerPrincipal`: the principal, else the
   * client's address (IPv6 by /64), so that one anonymous caller cannot fill another's quota by
   * renewing sessions. Defaults to `owner`.
   */
  caller?: string;
  status: McpTaskStatus;
  statusMessage?: string;
  /** Epoch milliseconds. */
  createdAt: number;
  lastUpdatedAt: number;
  /** Time to live from creation; the store keeps the task at least this long. */
  ttlMs: number;
  pollIntervalMs: number;
  /** The tool that runs, and the request it ran for (kept so another instance can run it again). */
  toolName: string;
  /** Terminal `completed`: the CallToolResult. */
  result?: JsonObject;
  /** Terminal `failed`: the JSON-RPC error `{ code, message, data? }`. */
  error?: JsonObject;
  /** `input_required`: the outstanding requests, by key. */
  inputRequests?: Record<string, JsonObject>;
}

/** What a running task is told from another request (possibly on another instance). */
export type McpTaskSignal = { kind: 'cancel' } | { kind: 'input'; responses: JsonObject };

/**
 * Where tasks live. The default keeps them in process; the Redis store shares them between
 * instances. `signal` reaches the instance that runs the task, wherever that is.
 *
 * @publicApi
 */
export interface McpTaskStore {
  /**
   * Stores a new task; rejects with an McpError when a bound is reached (`perCaller` tasks of its
   * `caller`, `total` in all; expired tasks do not count). Resolves once `get` finds it.
   */
  create(record: McpTaskRecord, limits: McpTaskLimits): Promise<void>;
  get(taskId: string): Promise<McpTaskRecord | undefined>;
  /**
   * Removes a task that was never handed to a client (its call answered without it, or its job
   * could not be queued), so that it stops counting against the limits.
   */
  delete(record: McpTaskRecord): Promise<void>;
  /**
   * Applies `change` to the stored task and stores the outcome, unless the task is terminal (a
   * terminal task never changes again). Resolves to the task after the change, or undefined.
   */
  update(
    taskId: string,
    change: (record: McpTaskRecord) => McpTaskRecord | undefined,
  ): Promise<McpTaskRecord | undefined>;
  /** Tasks of one owner, newest first, from `cursor` (an opaque position this store returned). */
  list(
    owner: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ tasks: McpTaskRecord[]; nextCursor?: string }>;
  /** Delivers a signal to the instance running the task (in process: the listeners below). */
  signal(taskId: string, signal: McpTaskSignal): Promise<void>;
  /** Listens to signals for tasks this instance runs. Returns the function that stops listening. */
  onSignal(listener: (taskId: string, signal: McpTaskSignal) => void | Promise<void>): () => void;
  /** Listens to every change of a task (status notifications). */
  onChange?(listener: (record: McpTaskRecord) => void): () => void;
  close?(): Promise<void>;
}

/** The bounds a store checks when it creates a task. @publicApi */
export interface McpTaskLimits {
  /** Tasks one caller (`McpTaskRecord.caller`) may hold at once. */
  perCaller: number;
  /** Tasks the store holds at once. */
  total: number;
}

type SignalListener = (taskId: string, signal: McpTaskSignal) => void | Promise<void>;
type ChangeListener = (record: McpTaskRecord) => void;

/** The signal and change listeners of one store, for the stores' `onSignal` and `onChange`. */
export class TaskListeners {
  private readonly signals = new Set<SignalListener>();
  private readonly changes = new Set<ChangeListener>();

  onSignal(listener: SignalListener): () => void {
    this.signals.add(listener);
    return () => this.signals.delete(listener);
  }

  onChange(listener: ChangeListener): () => void {
    this.changes.add(listener);
    return () => this.changes.delete(listener);
  }

  async signal(taskId: string, signal: McpTaskSignal): Promise<void> {
    await Promise.all([...this.signals].map((listener) => listener(taskId, signal)));
  }

  changed(record: McpTaskRecord): void {
    for (const listener of this.changes) listener({ ...record });
  }
}

/** The error a full store answers task creation with. */
export function taskLimitError(scope: 'caller' | 'total', limit: number): McpError {
  return new McpError(
    ErrorCode.InternalError,
    scope === 'caller'
      ? `Too many tasks for this caller: it already has ${limit}, the limit (McpModule option tasks.maxTasksPerPrincipal). Wait for its tasks to finish or expire, or cancel some.`
      : `The server holds ${limit} tasks, its limit (McpModule option tasks.maxTasks). Try again later.`,
  );
}

/** Whom a task counts against. */
export function callerOf(record: McpTaskRecord): string {
  return record.caller ?? record.owner;
}

/**
 * Tasks in this process's memory: bounded per caller and in total, each dropped once its TTL
 * from creation has passed (never earlier).
 */
export class InMemoryTaskStore implements McpTaskStore {
  private readonly tasks = new Map<string, McpTaskRecord>();
  /** Task ids by owner (for tasks/list) and by caller (for the limit), in creation order. */
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly byCaller = new Map<string, Set<string>>();
  private readonly listeners = new TaskListeners();

  async create(record: McpTaskRecord, limits: McpTaskLimits): Promise<void> {
    const caller = callerOf(record);
    // Expired tasks hold their place only until a create needs it: walking every task on each
    // create would make a call's cost grow with the store.
    if ((this.byCaller.get(caller)?.size ?? 0) >= limits.perCaller || this.tasks.size >= limits.total) this.sweep();
    if ((this.byCaller.get(caller)?.size ?? 0) >= limits.perCaller) throw taskLimitError('caller', limits.perCaller);
    if (this.tasks.size >= limits.total) throw taskLimitError('total', limits.total);
    this.tasks.set(record.taskId, { ...record });
    index(this.byOwner, record.owner, record.taskId);
    index(this.byCaller, caller, record.taskId);
    this.changed(record);
  }

  async get(taskId: string): Promise<McpTaskRecord | undefined> {
    const record = this.live(taskId);
    return record && { ...record };
  }

  async delete(record: McpTaskRecord): Promise<void> {
    const stored = this.tasks.get(record.taskId);
    if (stored) this.drop(stored);
  }

  async update(
    taskId: string,
    change: (record: McpTaskRecord) => McpTaskRecord | undefined,
  ): Promise<McpTaskRecord | undefined> {
    const record = this.live(taskId);
    if (!record || isTerminal(record.status)) return record && { ...record };
    const next = change({ ...record });
    if (!next) return { ...record };
    this.tasks.set(taskId, next);
    this.changed(next);
    return { ...next };
  }

  async list(
    owner: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ tasks: McpTaskRecord[]; nextCursor?: string }> {
    // Only this caller's expired tasks need dropping before its page is cut.
    for (const id of [...(this.byOwner.get(owner) ?? [])]) this.live(id);
    const ids = [...(this.byOwner.get(owner) ?? [])].reverse();
    const start = cursor === undefined ? 0 : ids.indexOf(cursor);
    if (start < 0) throw unknownCursorError();
    const page = ids.slice(start, start + limit).map((id) => ({ ...this.tasks.get(id)! }));
    const next = ids[start + limit];
    return next === undefined ? { tasks: page } : { tasks: page, nextCursor: next };
  }

  signal(taskId: string, signal: McpTaskSignal): Promise<void> {
    return this.listeners.signal(taskId, signal);
  }

  onSignal(listener: SignalListener): () => void {
    return this.listeners.onSignal(listener);
  }

  onChange(listener: ChangeListener): () => void {
    return this.listeners.onChange(listener);
  }

  private changed(record: McpTaskRecord): void {
    this.listeners.changed(record);
  }

  private live(taskId: string): McpTaskRecord | undefined {
    const record = this.tasks.get(taskId);
    if (record && record.createdAt + record.ttlMs <= Date.now()) {
      this.drop(record);
      return undefined;
    }
    return record;
  }

  private drop(record: McpTaskRecord): void {
    this.tasks.delete(record.taskId);
    unindex(this.byOwner, record.owner, record.taskId);
    unindex(this.byCaller, callerOf(record), record.taskId);
  }

  /** Insertion order is creation order: expired tasks come first unless TTLs differ. */
  private sweep(): void {
    const now = Date.now();
    for (const record of this.tasks.values()) {
      if (record.createdAt + record.ttlMs <= now) this.drop(record);
    }
  }
}

/** The error a tasks/list cursor that names no position of the caller's list gets. */
export function unknownCursorError(): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    'The tasks/list cursor is unknown: its task ended and expired, or it is not from this server. List again without a cursor.',
  );
}

function index(map: Map<string, Set<string>>, key: string, taskId: string): void {
  const ids = map.get(key);
  if (ids) ids.add(taskId);
  else map.set(key, new Set([taskId]));
}

function unindex(map: Map<string, Set<string>>, key: string, taskId: string): void {
  const ids = map.get(key);
  ids?.delete(taskId);
  if (ids && ids.size === 0) map.delete(key);
}
