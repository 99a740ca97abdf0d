/**
 * The experimental tasks of 2025-11-25, driven by the official SDK v1 (1.32.2) client's
 * experimental tasks API on a stateful session: create, poll, result, list, cancel, and the
 * principal binding of every task request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CallToolResultSchema, CreateTaskResultSchema, type McpError } from '@modelcontextprotocol/sdk/types.js';
import { TaskGates, TASK_TOKENS, TasksTestModule } from '../fixtures/tasks.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectSdkClient, type CurrentSdkConnection } from '../utils/clients.js';
import { guard } from '../utils/wait.js';

describe('tasks on 2025-11-25 (SDK v1 experimental tasks API)', () => {
  let server: RunningApp;
  let gates: TaskGates;
  let alice: CurrentSdkConnection;
  let bob: CurrentSdkConnection;

  before(async () => {
    server = await startApp(TasksTestModule.register({ auth: true, tasks: { pollIntervalMs: 20 } }));
    gates = server.app.get(TaskGates);
    alice = await connectSdkClient(server.url, { headers: { authorization: `Bearer ${TASK_TOKENS.alice}` } });
    bob = await connectSdkClient(server.url, { headers: { authorization: `Bearer ${TASK_TOKENS.bob}` } });
  });
  after(async () => {
    await alice?.close();
    await bob?.close();
    await server?.close();
  });

  it("advertises the tasks capability and each tool's execution.taskSupport", async () => {
    assert.deepEqual(alice.client.getServerCapabilities()?.tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await alice.client.listTools();
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    assert.deepEqual(support, { gated_report: 'optional', required_task: 'required', plain_tool: undefined });
  });

  it('creates a task, polls it while it works, and gets its result once it completes', async () => {
    const stream = alice.client.experimental.tasks.callToolStream(
      { name: 'gated_report', arguments: { label: 'legacy-1' } },
      CallToolResultSchema,
      { task: { ttl: 120_000 } },
    );
    const seen: string[] = [];
    let taskId: string | undefined;
    let result: unknown;
    for await (const message of stream) {
      seen.push(message.type === 'taskStatus' ? `status:${message.task.status}` : message.type);
      if (message.type === 'taskCreated') {
        taskId = message.task.taskId;
        assert.equal(message.task.ttl, 120_000);
        assert.match(message.task.createdAt, /^\d{4}-\d{2}-\d{2}T/);
      }
      if (message.type === 'taskStatus' && message.task.status === 'working') {
        await guard(gates.hasStarted('legacy-1'), 'the tool to start');
        gates.open('legacy-1');
      }
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    assert.ok(taskId);
    assert.equal(seen[0], 'taskCreated');
    assert.ok(seen.includes('status:working'), seen.join(', '));
    assert.equal(seen.at(-1), 'result');
    assert.deepEqual((result as { content: unknown }).content, [{ type: 'text', text: 'Report legacy-1 is ready.' }]);

    const task = await alice.client.experimental.tasks.getTask(taskId);
    assert.equal(task.status, 'completed');
    const again = await alice.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.deepEqual(again.content, [{ type: 'text', text: 'Report legacy-1 is ready.' }]);
    assert.deepEqual(again._meta?.['io.modelcontextprotocol/related-task'], { taskId });

    const listed = await alice.client.experimental.tasks.listTasks();
    assert.ok(listed.tasks.some((t) => t.taskId === taskId));
  });

  it('tasks/result blocks until the task ends', async () => {
    const created = await alice.client.request(
      { method: 'tools/call', params: { name: 'required_task', arguments: { label: 'legacy-block' }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const pending = alice.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    await guard(gates.hasStarted('legacy-block'), 'the tool to start');
    gates.open('legacy-block');
    const result = await guard(pending, 'tasks/result to answer');
    assert.deepEqual(result.content, [{ type: 'text', text: 'Done legacy-block.' }]);
  });

  it('cancels a working task: the tool is stopped and the task is cancelled', async () => {
    const created = await alice.client.request(
      {
        method: 'tools/call',
        params: { name: 'required_task', arguments: { label: 'legacy-cancel' }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await guard(gates.hasStarted('legacy-cancel'), 'the tool to start');
    const cancelled = await alice.client.experimental.tasks.cancelTask(taskId);
    assert.equal(cancelled.status, 'cancelled');
    await guard(gates.wasAborted('legacy-cancel'), 'the tool to see its signal abort');
    assert.equal((await alice.client.experimental.tasks.getTask(taskId)).status, 'cancelled');
    await assert.rejects(
      alice.client.experimental.tasks.cancelTask(taskId),
      (error: McpError) => error.code === -32602 && /already ended/.test(error.message),
    );
  });

  it('a task of another principal answers exactly as an unknown task', async () => {
    const created = await alice.client.request(
      { method: 'tools/call', params: { name: 'required_task', arguments: { label: 'legacy-owned' }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const refusal = async (
      id: string,
      call: (id: string) => Promise<unknown>,
    ): Promise<{ code: number; message: string }> => {
      try {
        await call(id);
      } catch (error) {
        const e = error as McpError;
        return { code: e.code, message: e.message.replace(id, '<id>') };
      }
      throw new Error(`the call with ${id} succeeded`);
    };
    const unknownId = 'A'.repeat(taskId.length);
    const calls = [
      (id: string) => bob.client.experimental.tasks.getTask(id),
      (id: string) => bob.client.experimental.tasks.getTaskResult(id, CallToolResultSchema),
      (id: string) => bob.client.experimental.tasks.cancelTask(id),
    ];
    for (const call of calls) {
      const foreign = await refusal(taskId, call);
      assert.equal(foreign.code, -32602);
      assert.deepEqual(foreign, await refusal(unknownId, call));
    }
    assert.ok(!(await bob.client.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === taskId));
    // Bob's attempts changed nothing: Alice's task is still working, and finishes.
    assert.equal((await alice.client.experimental.tasks.getTask(taskId)).status, 'working');
    gates.open('legacy-owned');
    const result = await alice.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Done legacy-owned.' }]);
  });

  it('a required task tool called without "task" gets -32601; a plain tool ignores "task"', async () => {
    await assert.rejects(
      // Raw request: the SDK's callTool refuses a required task tool on its own, before the server could.
      alice.client.request(
        { method: 'tools/call', params: { name: 'required_task', arguments: { label: 'x' } } },
        CallToolResultSchema,
      ),
      (error: McpError) => error.code === -32601 && /runs only as a task/.test(error.message),
    );
    const plain = await alice.client.request(
      { method: 'tools/call', params: { name: 'plain_tool', arguments: {}, task: {} } },
      CallToolResultSchema,
    );
    assert.deepEqual(plain.content, [{ type: 'text', text: 'plain' }]);
  });
});
