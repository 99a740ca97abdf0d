/**
 * Tasks on 2026-07-28 (io.modelcontextprotocol/tasks) beyond what the conformance scenarios
 * check: the binding of every task request to the principal that created the task, the gate on
 * the request's extension declaration, the Mcp-Name rule, progress as the status message, and
 * cancellation reaching the tool.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TASKS_EXTENSION, InMemoryTaskStore, type McpTaskRecord } from 'nestjs-model-context/tasks';
import { TaskGates, TASK_TOKENS, TasksTestModule } from '../fixtures/tasks.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { META_KEYS, modernRpc, type RpcResult } from '../utils/clients.js';
import { guard } from '../utils/wait.js';

type Rpc = { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

const WITH_TASKS = { [META_KEYS.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } } };

describe('tasks on 2026-07-28: principals, gating and headers', () => {
  let server: RunningApp;
  let gates: TaskGates;
  const store = new InMemoryTaskStore();

  /** Resolves with the task once the store records a change that `test` accepts. */
  const change = (taskId: string, test: (record: McpTaskRecord) => boolean): Promise<McpTaskRecord> =>
    guard(
      new Promise<McpTaskRecord>((resolve) => {
        const stop = store.onChange((record) => record.taskId === taskId && test(record) && (stop(), resolve(record)));
        void store.get(taskId).then((record) => record && test(record) && (stop(), resolve(record)));
      }),
      `task ${taskId} to change`,
    );

  const call = async (
    method: string,
    params: Record<string, unknown>,
    options: { token?: string; extension?: boolean; name?: string | null } = {},
  ): Promise<{ http: RpcResult; body: Rpc }> => {
    const headers: Record<string, string | undefined> = {
      authorization: `Bearer ${options.token ?? TASK_TOKENS.alice}`,
    };
    if (method.startsWith('tasks/'))
      headers['Mcp-Name'] = options.name === null ? undefined : (options.name ?? String(params.taskId));
    const http = await modernRpc(
      server.url,
      method,
      { ...params, _meta: options.extension === false ? {} : WITH_TASKS },
      { headers },
    );
    return { http, body: http.json as Rpc };
  };

  before(async () => {
    server = await startApp(TasksTestModule.register({ auth: true, tasks: { store } }));
    gates = server.app.get(TaskGates);
  });
  after(() => server?.close());

  it('advertises the extension on server/discover and not the 2025-11-25 tasks capability', async () => {
    const { body } = await call('server/discover', {});
    const capabilities = body.result?.capabilities as Record<string, Record<string, unknown>>;
    assert.deepEqual(capabilities.extensions[TASKS_EXTENSION], {});
    assert.equal(capabilities.tasks, undefined);
  });

  it('without the extension: task methods answer -32021, optional task tools run in the request, required ones answer -32021', async () => {
    const get = await call('tasks/get', { taskId: 'whatever' }, { extension: false });
    assert.equal(get.http.status, 400);
    assert.equal(get.body.error?.code, -32021);
    assert.deepEqual(get.body.error?.data, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    const required = await call(
      'tools/call',
      { name: 'required_task', arguments: { label: 'm-req' } },
      { extension: false },
    );
    assert.equal(required.body.error?.code, -32021);
    gates.open('m-sync');
    const sync = await call(
      'tools/call',
      { name: 'gated_report', arguments: { label: 'm-sync' } },
      { extension: false },
    );
    assert.equal(sync.body.result?.resultType, 'complete');
    assert.deepEqual(sync.body.result?.content, [{ type: 'text', text: 'Report m-sync is ready.' }]);
  });

  it('a task reports progress as its status message and inlines its result once completed', async () => {
    const created = await call('tools/call', { name: 'gated_report', arguments: { label: 'm-1' } });
    assert.equal(created.body.result?.resultType, 'task');
    const taskId = created.body.result?.taskId as string;
    assert.match(taskId, /^[A-Za-z0-9_-]{24}$/);
    await guard(gates.hasStarted('m-1'), 'the tool to start');
    await change(taskId, (r) => r.statusMessage === 'Started m-1');
    const working = await call('tasks/get', { taskId });
    assert.equal(working.body.result?.status, 'working');
    assert.equal(working.body.result?.statusMessage, 'Started m-1');
    assert.equal(working.body.result?.result, undefined);
    gates.open('m-1');
    await change(taskId, (r) => r.status === 'completed');
    const done = await call('tasks/get', { taskId });
    assert.deepEqual(done.body.result?.result, { content: [{ type: 'text', text: 'Report m-1 is ready.' }] });
  });

  it('a task of another principal answers exactly as an unknown one, and is left untouched', async () => {
    const created = await call('tools/call', { name: 'required_task', arguments: { label: 'm-owned' } });
    const taskId = created.body.result?.taskId as string;
    const unknownId = 'B'.repeat(taskId.length);
    for (const [method, extra] of [
      ['tasks/get', {}],
      ['tasks/cancel', {}],
      ['tasks/update', { inputResponses: {} }],
    ] as const) {
      const foreign = await call(method, { taskId, ...extra }, { token: TASK_TOKENS.bob });
      const unknown = await call(method, { taskId: unknownId, ...extra }, { token: TASK_TOKENS.bob });
      assert.equal(foreign.body.error?.code, -32602, method);
      assert.equal(foreign.http.status, unknown.http.status);
      assert.deepEqual(
        { ...foreign.body.error, message: foreign.body.error?.message.replace(taskId, '<id>') },
        { ...unknown.body.error, message: unknown.body.error?.message.replace(unknownId, '<id>') },
      );
    }
    assert.equal((await call('tasks/get', { taskId })).body.result?.status, 'working');
    const cancel = await call('tasks/cancel', { taskId });
    assert.deepEqual(Object.keys(cancel.body.result ?? {}).sort(), ['_meta', 'resultType']);
    await guard(gates.wasAborted('m-owned'), 'the tool to see its signal abort');
    assert.equal((await call('tasks/get', { taskId })).body.result?.status, 'cancelled');
  });

  it('task requests need an Mcp-Name header equal to params.taskId', async () => {
    const missing = await call('tasks/get', { taskId: 'abc' }, { name: null });
    assert.equal(missing.http.status, 400);
    assert.equal(missing.body.error?.code, -32020);
    const wrong = await call('tasks/get', { taskId: 'abc' }, { name: 'abd' });
    assert.equal(wrong.body.error?.code, -32020);
  });
});
