import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpError } from '../errors.js';
import { InMemoryTaskStore, type McpTaskRecord } from './task-store.js';

const limits = { perCaller: 2, total: 3 };

function task(taskId: string, owner: string, overrides: Partial<McpTaskRecord> = {}): McpTaskRecord {
  const now = Date.now();
  return { taskId, owner, status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: 60_000, pollIntervalMs: 1000, toolName: 't', ...overrides };
}

describe('InMemoryTaskStore', () => {
  it('bounds tasks per owner and in total, naming the option', async () => {
    const store = new InMemoryTaskStore();
    await store.create(task('a1', 'alice'), limits);
    await store.create(task('a2', 'alice'), limits);
    await assert.rejects(store.create(task('a3', 'alice'), limits), (e: McpError) => /tasks\.maxTasksPerPrincipal/.test(e.message));
    await store.create(task('b1', 'bob'), limits);
    await assert.rejects(store.create(task('c1', 'carol'), limits), (e: McpError) => /tasks\.maxTasks\b/.test(e.message));
  });

  it('drops a task once its TTL from creation has passed, and frees its slot', async () => {
    const store = new InMemoryTaskStore();
    await store.create(task('old', 'alice', { createdAt: Date.now() - 10_000, ttlMs: 5_000 }), limits);
    assert.equal(await store.get('old'), undefined);
    await store.create(task('n1', 'alice'), limits);
    await store.create(task('n2', 'alice'), limits);
    assert.equal((await store.get('n2'))?.owner, 'alice');
  });

  it('never changes a terminal task', async () => {
    const store = new InMemoryTaskStore();
    await store.create(task('t', 'alice'), limits);
    await store.update('t', (r) => ({ ...r, status: 'cancelled' }));
    const after = await store.update('t', (r) => ({ ...r, status: 'completed', result: { content: [] } }));
    assert.equal(after?.status, 'cancelled');
    assert.equal((await store.get('t'))?.result, undefined);
  });

  it('lists only the owner\'s tasks, newest first, in pages', async () => {
    const store = new InMemoryTaskStore();
    for (const id of ['x1', 'x2', 'x3']) await store.create(task(id, 'alice'), { perCaller: 10, total: 10 });
    await store.create(task('y1', 'bob'), { perCaller: 10, total: 10 });
    const first = await store.list('alice', undefined, 2);
    assert.deepEqual(first.tasks.map((t) => t.taskId), ['x3', 'x2']);
    const second = await store.list('alice', first.nextCursor, 2);
    assert.deepEqual(second.tasks.map((t) => t.taskId), ['x1']);
    assert.equal(second.nextCursor, undefined);
  });
});
