/**
 * Tasks on two instances sharing one Redis: a task created on A is read, answered, completed and
 * cancelled through B (the cancel reaches the tool running on A through pub/sub), each instance
 * bound by the same principal rules, with the TTL kept on the Redis key.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TASKS_EXTENSION } from 'nestjs-model-context/tasks';
import { TaskGates, TASK_TOKENS, TasksTestModule } from '../fixtures/tasks.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectSdkClient, META_KEYS, modernRpc } from '../utils/clients.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../utils/redis.js';
import { guard } from '../utils/wait.js';

type Rpc = { result?: Record<string, unknown>; error?: { code: number; message: string } };

const skip = !(await redisAvailable()) && 'Redis is not running';

describe('tasks on two instances sharing one Redis', { skip }, () => {
  const keyPrefix = `mcp-tasks-test-${randomUUID()}:`;
  let a: RunningApp;
  let b: RunningApp;
  let gatesA: TaskGates;

  const call = async (
    app: RunningApp,
    method: string,
    params: Record<string, unknown>,
    token: string = TASK_TOKENS.alice,
  ): Promise<Rpc> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (method.startsWith('tasks/')) headers['Mcp-Name'] = String(params.taskId);
    const meta = { [META_KEYS.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } } };
    return (await modernRpc(app.url, method, { ...params, _meta: meta }, { headers })).json as Rpc;
  };

  before(async () => {
    const module = () =>
      TasksTestModule.register({ auth: true, redis: { url: REDIS_URL, keyPrefix }, tasks: { pollIntervalMs: 20 } });
    a = await startApp(module());
    b = await startApp(module());
    gatesA = a.app.get(TaskGates);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await clearRedisPrefix(keyPrefix);
  });

  it('a task created on A is read on B, completes on A, and B reads its result', async () => {
    const created = await call(a, 'tools/call', { name: 'gated_report', arguments: { label: 'r-1' } });
    assert.equal(created.result?.resultType, 'task');
    const taskId = created.result?.taskId as string;
    const seenOnB = await call(b, 'tasks/get', { taskId });
    assert.equal(seenOnB.result?.taskId, taskId);
    assert.ok(['working', 'completed'].includes(seenOnB.result?.status as string));
    await guard(gatesA.hasStarted('r-1'), 'the tool to start on A');
    // B's 2025-11-25 tasks/result blocks until the task A runs ends, woken by the change event.
    const legacy = await connectSdkClient(b.url, { headers: { authorization: `Bearer ${TASK_TOKENS.alice}` } });
    try {
      const pending = legacy.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      gatesA.open('r-1');
      const result = await guard(pending, 'tasks/result on B');
      assert.deepEqual(result.content, [{ type: 'text', text: 'Report r-1 is ready.' }]);
    } finally {
      await legacy.close();
    }
    const done = await call(b, 'tasks/get', { taskId });
    assert.equal(done.result?.status, 'completed');
    assert.deepEqual(done.result?.result, { content: [{ type: 'text', text: 'Report r-1 is ready.' }] });
    // Another principal on either instance finds nothing.
    assert.equal((await call(b, 'tasks/get', { taskId }, TASK_TOKENS.bob)).error?.code, -32602);
  });

  it('a task created on A is cancelled through B, and the tool running on A stops', async () => {
    const created = await call(a, 'tools/call', { name: 'required_task', arguments: { label: 'r-cancel' } });
    const taskId = created.result?.taskId as string;
    await guard(gatesA.hasStarted('r-cancel'), 'the tool to start on A');
    const ack = await call(b, 'tasks/cancel', { taskId });
    assert.equal(ack.result?.resultType, 'complete');
    await guard(gatesA.wasAborted('r-cancel'), 'the cancel to reach A');
    assert.equal((await call(a, 'tasks/get', { taskId })).result?.status, 'cancelled');
    assert.equal((await call(b, 'tasks/get', { taskId })).result?.status, 'cancelled');
  });

  it('a 2025-11-25 task created on A is listed and cancelled on B, with its TTL on the Redis key', async () => {
    const onA = await connectSdkClient(a.url, { headers: { authorization: `Bearer ${TASK_TOKENS.bob}` } });
    const onB = await connectSdkClient(b.url, { headers: { authorization: `Bearer ${TASK_TOKENS.bob}` } });
    try {
      const sent = Date.now();
      const created = await onA.client.request(
        {
          method: 'tools/call',
          params: { name: 'required_task', arguments: { label: 'r-legacy' }, task: { ttl: 90_000 } },
        },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      assert.equal(created.task.ttl, 90_000);
      const { Redis } = await import('ioredis');
      const redis = new Redis(REDIS_URL);
      try {
        const pttl = await redis.pttl(`{${keyPrefix}}task:${taskId}`);
        // The key expires with the task: never later than its TTL, and never sooner than the TTL
        // less the time since the request was sent (however long the machine took).
        assert.ok(pttl <= 90_000 && pttl >= 90_000 - (Date.now() - sent) - 5, `PTTL ${pttl}`);
      } finally {
        redis.disconnect();
      }
      // Sessions differ, the principal is the same: B lists and cancels Bob's task.
      assert.ok((await onB.client.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === taskId));
      await guard(gatesA.hasStarted('r-legacy'), 'the tool to start on A');
      assert.equal((await onB.client.experimental.tasks.cancelTask(taskId)).status, 'cancelled');
      await guard(gatesA.wasAborted('r-legacy'), 'the cancel to reach A');
    } finally {
      await onA.close();
      await onB.close();
    }
  });
});
