/**
 * Durable tasks on BullMQ: the instance running a task is killed with SIGKILL, and another
 * instance's worker finds the stalled job and runs it again (attempt 2); the task's status and
 * result are read from that instance. Real processes, real Redis; the test waits on the tool's
 * own start lines and on a blocking tasks/result, never on a timer.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { TASKS_EXTENSION } from 'nestjs-model-context/tasks';
import { connectSdkClient, META_KEYS, modernRpc } from '../utils/clients.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../utils/redis.js';
import { FixtureInstance } from '../utils/fixture-process.js';
import { endProcess, guard } from '../utils/wait.js';

const APP = fileURLToPath(new URL('../fixtures/tasks-durable.app.js', import.meta.url));
const skip = !(await redisAvailable()) && 'Redis is not running';
const AUTH = { authorization: 'Bearer alice-token' };

/** An app of the durable-tasks fixture, which also prints `{"started":…,"attempt":N}` when the tool starts. */
class Instance extends FixtureInstance {
  private readonly starts: Array<(attempt: number) => void> = [];
  readonly started: number[] = [];

  constructor(name: string, env: Record<string, string>) {
    super(name, env, 'ignore', APP);
  }

  protected override onMessage(message: { started?: string; attempt?: number }): void {
    if (message.started === undefined) return;
    this.started.push(message.attempt!);
    this.starts.splice(0).forEach((notify) => notify(message.attempt!));
  }

  /** Resolves with the attempt number the next time the tool starts here. */
  nextStart(): Promise<number> {
    return guard(
      new Promise<number>((resolve) => this.starts.push(resolve)),
      `the tool to start on ${this.name}`,
      60_000,
    );
  }
}

describe('durable tasks on BullMQ: kill -9 of the running instance', { skip }, () => {
  const prefix = `mcp-durable-${randomUUID()}`;
  const env = { REDIS_URL, MCP_KEY_PREFIX: `${prefix}:`, QUEUE_NAME: `q-${randomUUID()}` };
  const a = new Instance('A', env);
  const b = new Instance('B', env);

  after(async () => {
    await a.kill();
    await endProcess(b.child, 'SIGTERM', 10_000);
    await clearRedisPrefix(prefix);
  });

  it('the task still completes: B runs the stalled job again, and B serves its status and result', async () => {
    await a.start();
    const startedOnA = a.nextStart();
    const meta = { [META_KEYS.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } } };
    const created = (
      await modernRpc(a.url, 'tools/call', { name: 'durable_job', arguments: {}, _meta: meta }, { headers: AUTH })
    ).json as { result: { resultType: string; taskId: string } };
    assert.equal(created.result.resultType, 'task');
    const taskId = created.result.taskId;
    assert.equal(await startedOnA, 1);

    await b.start();
    const startedOnB = b.nextStart();
    await a.kill();
    assert.equal(await startedOnB, 2, 'B ran the job again, as its second attempt');

    const client = await connectSdkClient(b.url, { headers: AUTH });
    try {
      const result = await guard(
        client.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
        'tasks/result on B',
        60_000,
      );
      assert.deepEqual(result.content, [{ type: 'text', text: 'done by B on attempt 2' }]);
    } finally {
      await client.close();
    }
    const status = (
      await modernRpc(b.url, 'tasks/get', { taskId, _meta: meta }, { headers: { ...AUTH, 'Mcp-Name': taskId } })
    ).json as { result: Record<string, unknown> };
    assert.equal(status.result.status, 'completed');
    assert.deepEqual(status.result.result, { content: [{ type: 'text', text: 'done by B on attempt 2' }] });
    assert.deepEqual(a.started, [1]);
    assert.deepEqual(b.started, [2]);
  });
});
