/**
 * sample/08-tasks as a client uses it on 2026-07-28: the report runs as a task, its steps show as
 * the status message, the approval question makes it input_required until tasks/update answers,
 * the result is inlined once completed, and a cancel ends a waiting report.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type McpTaskRecord, type McpTaskStore, TASKS_EXTENSION } from 'nestjs-model-context/tasks';
import { startApp, type RunningApp } from '../utils/app.js';
import { META_KEYS, modernRpc } from '../utils/clients.js';
import { Watched } from '../utils/wait.js';

type Rpc = { result?: Record<string, unknown>; error?: { code: number; message: string } };
const META = { [META_KEYS.clientCapabilities]: { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } } };

describe('sample/08-tasks: the report generator', () => {
  let server: RunningApp;
  let store: McpTaskStore;

  const call = async (method: string, params: Record<string, unknown>): Promise<Rpc> => {
    const headers = method.startsWith('tasks/') ? { 'Mcp-Name': String(params.taskId) } : {};
    return (await modernRpc(server.url, method, { ...params, _meta: META }, { headers })).json as Rpc;
  };
  // Every change of every task, recorded from before the first call: a watch started after a call
  // returns still sees the changes that happened in between, however slow the machine.
  const changes: McpTaskRecord[] = [];
  const changed = new Watched();
  let stopRecording: (() => void) | undefined;
  /** Every change of one task so far, once `until` accepts one of them. */
  const watch = async (taskId: string, until: (record: McpTaskRecord) => boolean): Promise<McpTaskRecord[]> => {
    const ofTask = () => changes.filter((record) => record.taskId === taskId);
    await changed.until(() => ofTask().some(until), `task ${taskId} to change`);
    return ofTask();
  };

  before(async () => {
    process.env.REPORT_STEP_MS = '200';
    const sample = await import('../../sample/08-tasks/app.module.js');
    store = sample.REPORT_TASKS;
    stopRecording = store.onChange!((record) => (changes.push(record), changed.notify()));
    server = await startApp(sample.AppModule);
  });
  after(() => (stopRecording?.(), server?.close()));

  it('reports progress, asks for approval inside the task, and completes with the published report', async () => {
    const created = await call('tools/call', { name: 'generate_report', arguments: { quarter: 'Q3' } });
    assert.equal(created.result?.resultType, 'task');
    const taskId = created.result?.taskId as string;
    const changes = await watch(taskId, (r) => r.status === 'input_required');
    const messages = changes.map((r) => r.statusMessage).filter(Boolean);
    assert.ok(messages.includes('Rendering charts for Q3'), messages.join(' | '));
    const waiting = await call('tasks/get', { taskId });
    assert.equal(waiting.result?.status, 'input_required');
    const requests = waiting.result?.inputRequests as Record<string, { method: string; params: { message: string } }>;
    const [key] = Object.keys(requests);
    assert.equal(requests[key].method, 'elicitation/create');
    assert.match(requests[key].params.message, /Publish it to the board\?/);
    const done = watch(taskId, (r) => r.status === 'completed');
    assert.equal(
      (
        await call('tasks/update', {
          taskId,
          inputResponses: { [key]: { action: 'accept', content: { approve: true } } },
        })
      ).result?.resultType,
      'complete',
    );
    await done;
    const final = await call('tasks/get', { taskId });
    assert.deepEqual(final.result?.result, {
      content: [{ type: 'text', text: 'The Q3 report was published (revenue up 12%).' }],
    });
  });

  it('a cancel ends a report waiting for approval', async () => {
    const taskId = (await call('tools/call', { name: 'generate_report', arguments: { quarter: 'Q4' } })).result
      ?.taskId as string;
    await watch(taskId, (r) => r.status === 'input_required');
    assert.equal((await call('tasks/cancel', { taskId })).result?.resultType, 'complete');
    const cancelled = await call('tasks/get', { taskId });
    assert.equal(cancelled.result?.status, 'cancelled');
    assert.equal(cancelled.result?.inputRequests, undefined);
  });
});
