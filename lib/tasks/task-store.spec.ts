import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type McpError } from '../protocol/errors.js';
import { InMemoryTaskStore, type McpTaskRecord } from './task-store.js';

const limits = { perCaller: 2, total: 3 };

function task(taskId: string, owner: string, overrides: Partial<McpTaskRecord> = {}): McpTaskRecord {
  const now = Date.now();
  return {
    taskId,
    owner,
    status: 'working',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: 60_000,
    pollIntervalMs: 1000,
    toolName: 't',
    ...overrides,
  };
}

describe('InMemoryTaskStore', () => {
  it('bounds tasks per owner and in total, naming the option', async () => {
    const store = new InMemoryTaskStore();
    await store.create(task('a1', 'alice'), limits);
    await store.create(task('a2', 'alice'), limits);
    await assert.rejects(store.create(task('a3', 'alice'), limits), (e: McpError) =>
      /tasks\.maxTasksPerPrincipal/.test(e.message),
    );
    await store.create(task('b1', 'bob'), limits);
    await assert.rejects(store.create(task('c1', 'carol'), limits), (e: McpError) =>
      /tasks\.maxTasks\b/.test(e.message),
    );
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

  it("lists only the owner's tasks, newest first, in pages", async () => {
    const store = new InMemoryTaskStore();
    for (const id of ['x1', 'x2', 'x3']) await store.create(task(id, 'alice'), { perCaller: 10, total: 10 });
    await store.create(task('y1', 'bob'), { perCaller: 10, total: 10 });
    const first = await store.list('alice', undefined, 2);
    assert.deepEqual(
      first.tasks.map((t) => t.taskId),
      ['x3', 'x2'],
    );
    const second = await store.list('alice', first.nextCursor, 2);
    assert.deepEqual(
      second.tasks.map((t) => t.taskId),
      ['x1'],
    );
    assert.equal(second.nextCursor, undefined);
  });

  it('counts tasks against their caller, apart from their owner: two sessions of one address share its bound', async () => {
    const store = new InMemoryTaskStore();
    await store.create(task('s1', 'session:a', { caller: 'address:10.0.0.1' }), limits);
    await store.create(task('s2', 'session:b', { caller: 'address:10.0.0.1' }), limits);
    await assert.rejects(store.create(task('s3', 'session:c', { caller: 'address:10.0.0.1' }), limits), (e: McpError) =>
      /already has 2/.test(e.message),
    );
    await store.create(task('o1', 'session:d', { caller: 'address:10.0.0.2' }), limits);
    assert.deepEqual(
      (await store.list('session:a', undefined, 10)).tasks.map((t) => t.taskId),
      ['s1'],
    );
  });

  it('delete drops a task and frees its place, for its caller and in total', async () => {
    const store = new InMemoryTaskStore();
    const first = task('d1', 'alice');
    await store.create(first, limits);
    await store.create(task('d2', 'alice'), limits);
    await store.delete(first);
    assert.equal(await store.get('d1'), undefined);
    await store.create(task('d3', 'alice'), limits);
    assert.deepEqual(
      (await store.list('alice', undefined, 10)).tasks.map((t) => t.taskId),
      ['d3', 'd2'],
    );
  });
});
