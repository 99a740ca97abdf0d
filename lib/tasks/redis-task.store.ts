import {
  callerOf,
  isTerminal,
  taskLimitError,
  TaskListeners,
  unknownCursorError,
  type McpTaskLimits,
  type McpTaskRecord,
  type McpTaskSignal,
  type McpTaskStore,
} from './task-store.js';
import { RedisScripts, type McpRedisClient, type RedisKeys, type RedisLogger } from '../redis/redis-client.js';

// KEYS: task, owner index (tasks/list), all-tasks index, caller index (the per-caller bound).
// ARGV: record JSON, ttlMs, expireAt, now, perCaller, total, id, channel, change message.
// Indexes score by expiry, so expired ids leave them in one range delete; the task key itself
// expires with its TTL (PX), never earlier.
const TASK_CREATE = `
for i = 2, 4 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[4]) end
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[5]) then return 1 end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return 2 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
for i = 2, 4 do
  redis.call('ZADD', KEYS[i], ARGV[3], ARGV[7])
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
end
redis.call('PUBLISH', ARGV[8], ARGV[9])
return 0
`;

// KEYS: task, owner index, all-tasks index, caller index. ARGV: id.
const TASK_DELETE = `
redis.call('DEL', KEYS[1])
for i = 2, 4 do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1
`;

// KEYS: task. ARGV: the JSON read, the JSON to write, channel, change message. Writes only when
// nobody changed the task since it was read; keeps its TTL.
const TASK_SWAP = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`;

const MAX_SWAP_TRIES = 20;

/** The pub/sub channel (after the key prefix) of task changes and signals, subscribed when the backend connects. */
export const TASKS_CHANNEL = 'tasks';

type Message = { kind: 'change'; record: McpTaskRecord } | { kind: 'signal'; taskId: string; signal: McpTaskSignal };

/**
 * Tasks in Redis, shared by every instance: one key per task with the task's TTL, indexes per
 * owner and in total for the bounds, changes as compare-and-swap scripts, and one pub/sub channel
 * for change events and signals (a cancel or an answer reaches the instance running the task).
 *
 * @publicApi
 */
export class RedisTaskStore implements McpTaskStore {
  private readonly scripts: RedisScripts;
  private readonly listeners = new TaskListeners();
  /** The channel the backend subscribes to and routes to {@link dispatch}. */
  readonly channel: string;

  constructor(
    private readonly client: McpRedisClient,
    private readonly keys: RedisKeys,
    private readonly options: { shardedPubSub?: boolean; logger?: RedisLogger } = {},
  ) {
    this.scripts = new RedisScripts(client, options.shardedPubSub);
    this.channel = `${keys.prefix}${TASKS_CHANNEL}`;
  }

  private taskKey(taskId: string): string {
    return `${this.keys.prefix}task:${taskId}`;
  }

  private ownerKey(owner: string): string {
    return `${this.keys.prefix}tasks:owner:${owner}`;
  }

  /** The keys a task is stored and indexed under, in the scripts' KEYS order. */
  private keysOf(record: McpTaskRecord): string[] {
    return [
      this.taskKey(record.taskId),
      this.ownerKey(record.owner),
      `${this.keys.prefix}tasks:all`,
      `${this.keys.prefix}tasks:caller:${callerOf(record)}`,
    ];
  }

  async create(record: McpTaskRecord, limits: McpTaskLimits): Promise<void> {
    const now = Date.now();
    const expireAt = record.createdAt + record.ttlMs;
    const reply = await this.scripts.run(TASK_CREATE, this.keysOf(record), [
      JSON.stringify(record),
      record.ttlMs,
      expireAt,
      now,
      limits.perCaller,
      limits.total,
      record.taskId,
      this.channel,
      JSON.stringify({ kind: 'change', record } satisfies Message),
    ]);
    if (reply === 1) throw taskLimitError('caller', limits.perCaller);
    if (reply === 2) throw taskLimitError('total', limits.total);
  }

  async delete(record: McpTaskRecord): Promise<void> {
    await this.scripts.run(TASK_DELETE, this.keysOf(record), [record.taskId]);
  }

  async get(taskId: string): Promise<McpTaskRecord | undefined> {
    const raw = (await this.client.call('GET', this.taskKey(taskId))) as string | null;
    return raw ? (JSON.parse(raw) as McpTaskRecord) : undefined;
  }

  async update(
    taskId: string,
    change: (record: McpTaskRecord) => McpTaskRecord | undefined,
  ): Promise<McpTaskRecord | undefined> {
    for (let attempt = 0; attempt < MAX_SWAP_TRIES; attempt++) {
      const raw = (await this.client.call('GET', this.taskKey(taskId))) as string | null;
      if (!raw) return undefined;
      const record = JSON.parse(raw) as McpTaskRecord;
      if (isTerminal(record.status)) return record;
      const next = change({ ...record });
      if (!next) return record;
      const swapped = await this.scripts.run(
        TASK_SWAP,
        [this.taskKey(taskId)],
        [raw, JSON.stringify(next), this.channel, JSON.stringify({ kind: 'change', record: next } satisfies Message)],
      );
      if (swapped === 1) return next;
    }
    throw new Error(`task "${taskId}" changed ${MAX_SWAP_TRIES} times while this instance tried to update it`);
  }

  async list(
    owner: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ tasks: McpTaskRecord[]; nextCursor?: string }> {
    const start = cursor === undefined ? 0 : /^\d{1,9}$/.test(cursor) ? Number(cursor) : -1;
    if (start < 0) throw unknownCursorError();
    const ids = (await this.client.call(
      'ZREVRANGEBYSCORE',
      this.ownerKey(owner),
      '+inf',
      Date.now(),
      'LIMIT',
      start,
      limit + 1,
    )) as string[];
    const page = ids.slice(0, limit);
    const raws = page.length
      ? ((await this.client.call('MGET', ...page.map((id) => this.taskKey(id)))) as Array<string | null>)
      : [];
    const tasks = raws.filter((raw): raw is string => raw !== null).map((raw) => JSON.parse(raw) as McpTaskRecord);
    return ids.length > limit ? { tasks, nextCursor: String(start + limit) } : { tasks };
  }

  async signal(taskId: string, signal: McpTaskSignal): Promise<void> {
    await this.client.call(
      this.options.shardedPubSub ? 'SPUBLISH' : 'PUBLISH',
      this.channel,
      JSON.stringify({ kind: 'signal', taskId, signal } satisfies Message),
    );
  }

  onSignal(listener: (taskId: string, signal: McpTaskSignal) => void | Promise<void>): () => void {
    return this.listeners.onSignal(listener);
  }

  onChange(listener: (record: McpTaskRecord) => void): () => void {
    return this.listeners.onChange(listener);
  }

  /** Routes one message of {@link channel} (called by the backend's subscriber). */
  dispatch(raw: string): void {
    let message: Message;
    try {
      message = JSON.parse(raw) as Message;
    } catch {
      this.options.logger?.warn(`Ignored a malformed message on the task channel ${this.channel}.`);
      return;
    }
    if (message.kind === 'change') this.listeners.changed(message.record);
    else if (message.kind === 'signal') {
      void this.listeners
        .signal(message.taskId, message.signal)
        .catch((error: unknown) =>
          this.options.logger?.error(
            `A task signal for "${message.taskId}" failed: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
    }
  }
}
