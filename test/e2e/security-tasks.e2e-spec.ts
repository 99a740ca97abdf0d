/**
 * Tasks under attack (issue 26: items 1, 2, 6, 8, 9 and 10, the durable-run and result-size
 * leftovers), from the attacker's side on both eras. A refused call runs nothing and ends
 * nothing; a task store that refuses or stalls fails a write, never the process; anonymous
 * callers neither see nor block each other; a task cannot outlive its TTL; what a task holds is
 * bounded and its errors leak nothing. Servers whose crash is the question run as processes of
 * their own (test/fixtures/tasks.app.ts); a stall uses a redis-server the test starts itself.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Redis } from 'ioredis';
import {
  type McpBullmqTasksOptions,
  TASKS_EXTENSION,
  InMemoryTaskStore,
  type McpTaskLimits,
  type McpTaskRecord,
} from 'nestjs-model-context/tasks';
import { TaskGates, TASK_TOKENS, TasksTestModule, type TasksFixtureOptions } from '../fixtures/tasks.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { META_KEYS, modernRpc, rpc } from '../utils/clients.js';
import { FixtureInstance } from '../utils/fixture-process.js';
import { LegacyCaller, type RpcAnswer } from '../utils/legacy-session.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../utils/redis.js';
import { RedisChild } from '../utils/redis-server.js';
import { guard, pool, Watched } from '../utils/wait.js';

const APP = fileURLToPath(new URL('../fixtures/tasks.app.js', import.meta.url));
const TASKS_META = { [META_KEYS.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } } };
const redisSkip = !(await redisAvailable()) && 'Redis is not running';
const BEARER = {
  alice: { authorization: `Bearer ${TASK_TOKENS.alice}` },
  bob: { authorization: `Bearer ${TASK_TOKENS.bob}` },
};

type Caller = (method: string, params: Record<string, unknown>) => Promise<RpcAnswer>;

/** A 2026-07-28 client that declares the tasks extension; `headers` carry its token or X-Forwarded-For. */
function modernCaller(
  url: () => string,
  headers: Record<string, string> = {},
  meta: Record<string, unknown> = TASKS_META,
): Caller {
  return async (method, params) => {
    const name = method.startsWith('tasks/') ? { 'Mcp-Name': String(params.taskId) } : {};
    return (await modernRpc(url(), method, { ...params, _meta: meta }, { headers: { ...headers, ...name } }))
      .json as RpcAnswer;
  };
}

const taskIdOf = (answer: RpcAnswer): string => {
  const id = (answer.result?.task as { taskId?: string } | undefined)?.taskId ?? answer.result?.taskId;
  assert.equal(typeof id, 'string', `a task was created: ${JSON.stringify(answer)}`);
  return id as string;
};
const textOf = (answer: RpcAnswer): string =>
  ((answer.result?.content as Array<{ text?: string }> | undefined) ?? []).map((c) => c.text).join('');
const tick = (label: string, count: number, intervalMs: number) => ({
  name: 'tick_report',
  arguments: { label, count, intervalMs },
});

/** A task server process: its JSON lines are kept, and a wait for them fails at once when the process ends. */
class TaskServer extends FixtureInstance {
  readonly lines: Array<Record<string, unknown>> = [];
  private readonly seen = new Watched();

  constructor(name: string, env: Record<string, string>) {
    super(name, env, 'ignore', APP);
  }

  protected override onMessage(message: Record<string, unknown>): void {
    this.lines.push(message);
    this.seen.notify();
  }

  async until(test: (lines: Array<Record<string, unknown>>) => boolean, what: string): Promise<void> {
    const child = this.child!;
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) =>
        reject(
          new Error(
            `${this.name} ended (${code ?? signal}) while waiting for ${what}. Its log:\n${this.stderr.slice(-3000)}`,
          ),
        ),
      ),
    );
    await Promise.race([this.seen.until(() => test(this.lines), what), exited]);
  }

  /** Log lines saying a store write of this task failed. */
  storeFailures(taskId: string): number {
    return this.stderr
      .split('\n')
      .filter((line) => line.includes(`Task "${taskId}"`) && line.includes('could not be updated in the task store'))
      .length;
  }
}

describe('a refused task call ends nothing: the process lives (item 1)', () => {
  it('sample/08-tasks with its default options: the 101st anonymous report is refused, runs nothing, and the server lives on', async () => {
    const server = new TaskServer('sample-08', { APP: 'sample', REPORT_STEP_MS: '200' });
    await server.start();
    try {
      const meta = { [META_KEYS.clientCapabilities]: { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } } };
      const call = modernCaller(() => server.url, {}, meta);
      const report = (i: number) =>
        call('tools/call', { name: 'generate_report', arguments: { quarter: `Q${(i % 4) + 1}` } });
      // 16 at a time: one address may have limits.maxRequestsInFlight (32) calls in flight.
      const ids = (await pool(100, 16, report)).map(taskIdOf);
      const refused = await report(100);
      assert.equal(refused.error?.code, -32603);
      assert.match(refused.error!.message, /already has 100.*tasks\.maxTasksPerPrincipal/);
      // The old runner ran the refused report anyway, and its next step (one REPORT_STEP_MS on)
      // ended the process. Every accepted report reaching its approval question is three steps on.
      await server.until(
        (lines) => ids.every((id) => lines.some((line) => line.task === id && line.status === 'input_required')),
        'every accepted report to ask for approval',
      );
      assert.ok(server.alive, 'the server still runs');
      assert.deepEqual(
        server.lines.filter((line) => line.task !== undefined && !ids.includes(line.task as string)),
        [],
        'the refused report left no task',
      );
      assert.equal((await modernRpc(server.url, 'tools/list', {})).status, 200);
    } finally {
      await server.kill();
    }
  });

  it('a principal past tasks.maxTasksPerPrincipal 2: its third call is refused on both eras, runs nothing, and the server lives on', async () => {
    const server = new TaskServer('limit-2', { AUTH: '1', TASKS: JSON.stringify({ maxTasksPerPrincipal: 2 }) });
    await server.start();
    try {
      const alice = modernCaller(() => server.url, BEARER.alice);
      for (const label of ['a1', 'a2']) taskIdOf(await alice('tools/call', tick(label, 5, 100)));
      const refused = await alice('tools/call', tick('a-refused', 5, 100));
      assert.equal(refused.error?.code, -32603);
      assert.match(refused.error!.message, /tasks\.maxTasksPerPrincipal/);
      const bob = await LegacyCaller.open(server.url, { headers: BEARER.bob });
      for (const label of ['b1', 'b2']) taskIdOf(await bob.call('tools/call', { ...tick(label, 5, 100), task: {} }));
      assert.equal((await bob.call('tools/call', { ...tick('b-refused', 5, 100), task: {} })).error?.code, -32603);
      await server.until(
        (lines) =>
          ['a1', 'a2', 'b1', 'b2'].every((label) => lines.some((line) => line.label === label && line.tick === 5)),
        'every accepted task to report its last step',
      );
      assert.ok(server.alive, 'the server still runs');
      assert.deepEqual(
        server.lines.filter((line) => String(line.label).endsWith('refused')),
        [],
        'a refused call ran no step',
      );
    } finally {
      await server.kill();
    }
  });
});

describe('a Redis stall while tasks report progress (item 2)', { skip: redisSkip }, () => {
  let redis: RedisChild;
  before(async () => {
    redis = await RedisChild.onFreePort();
    await redis.start();
  });
  after(() => redis?.stop());

  it("CLIENT PAUSE 3000 WRITE: status writes fail, each task logs it once, both eras' tasks complete and the process lives", async () => {
    const server = new TaskServer('stall', { AUTH: '1', REDIS_URL: redis.url, MCP_KEY_PREFIX: 'stall:' });
    await server.start();
    try {
      const modern = taskIdOf(
        await modernCaller(() => server.url, BEARER.alice)('tools/call', tick('modern', 25, 200)),
      );
      const legacy = await LegacyCaller.open(server.url, { headers: BEARER.alice });
      const legacyTask = taskIdOf(await legacy.call('tools/call', { ...tick('legacy', 25, 200), task: {} }));
      await server.until(
        (lines) => ['modern', 'legacy'].every((label) => lines.some((line) => line.label === label)),
        'both tasks to report a step',
      );
      const admin = new Redis(redis.url);
      try {
        await admin.call('CLIENT', 'PAUSE', '3000', 'WRITE');
      } finally {
        admin.disconnect();
      }
      // 25 steps of 200 ms outlast the pause: the last step comes after Redis took writes again.
      await server.until(
        (lines) =>
          ['modern', 'legacy'].every((label) => lines.some((line) => line.label === label && line.tick === 25)),
        'both tasks to report their last step',
      );
      for (const [taskId, label] of [
        [modern, 'modern'],
        [legacyTask, 'legacy'],
      ]) {
        const result = await legacy.call('tasks/result', { taskId });
        assert.equal(textOf(result), `${label} ticked 25`, JSON.stringify(result));
      }
      assert.ok(server.alive, 'the server still runs');
      assert.ok(
        server.storeFailures(modern) + server.storeFailures(legacyTask) > 0,
        `the stall failed a status write:\n${server.stderr.slice(-2000)}`,
      );
      for (const taskId of [modern, legacyTask])
        assert.ok(server.storeFailures(taskId) <= 1, `task ${taskId}'s failures are logged once:\n${server.stderr}`);
    } finally {
      await server.kill();
    }
  });
});

describe('a Redis outage while a 2026-07-28 task asks the client a question', { skip: redisSkip }, () => {
  let redis: RedisChild;
  let server: RunningApp;
  let gates: TaskGates;
  const errors: string[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  const logged = new Watched();
  const logger: LoggerService = {
    log: () => undefined,
    warn: () => undefined,
    error: (message: unknown) => void (errors.push(String(message)), logged.notify()),
  };
  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    redis = await RedisChild.start();
    server = await startApp(
      TasksTestModule.register({
        auth: true,
        attack: true,
        redis: { url: redis.url, keyPrefix: 'elicit-outage:' },
        tasks: { pollIntervalMs: 20 },
      }),
      { logger },
    );
    gates = server.app.get(TaskGates);
  });
  after(async () => {
    await server?.close();
    await redis?.stop();
    process.off('unhandledRejection', onUnhandled);
  });

  it('the question cannot be recorded: the task fails once, logged once, and nothing rejects late (no ExceptionsHandler error)', async () => {
    const meta = {
      [META_KEYS.clientCapabilities]: { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } },
    };
    const taskId = taskIdOf(
      await modernCaller(
        () => server.url,
        BEARER.alice,
        meta,
      )('tools/call', { name: 'asking_report', arguments: { label: 'outage' } }),
    );
    await gates.hasStarted('outage');
    redis.pause();
    gates.open('outage');
    await logged.until(
      () => errors.some((e) => e.includes(`Task "${taskId}"`)),
      'the failed write of the question to be logged',
    );
    redis.resume();
    const legacy = await LegacyCaller.open(server.url, { headers: BEARER.alice });
    const result = await guard(legacy.call('tasks/result', { taskId }), 'the task to end', 30_000);
    assert.equal(result.error?.code, -32603, JSON.stringify(result));
    assert.match(result.error!.message, /could not be recorded, because the task store was unavailable/);
    assert.doesNotMatch(result.error!.message, /127\.0\.0\.1|Redis/, "the store's own message stays in the log");
    const aboutTask = errors.filter(
      (e) => e.includes(taskId) || e.includes('McpStoreUnavailableError') || e.includes('asking_report'),
    );
    assert.equal(
      aboutTask.length,
      1,
      `one log line, the store failure; no ExceptionsHandler or tool-failure line:\n${aboutTask.join('\n')}`,
    );
    assert.deepEqual(unhandled, []);
  });
});

describe(
  'a Redis outage answers the task methods as every other store-down path: 503, -32000, Retry-After',
  { skip: redisSkip },
  () => {
    let redis: RedisChild;
    let server: RunningApp;
    before(async () => {
      redis = await RedisChild.start();
      server = await startApp(
        TasksTestModule.register({
          sessions: 'stateless',
          attack: true,
          redis: { url: redis.url, keyPrefix: 'tasks-outage:' },
        }),
        { logger: false },
      );
    });
    after(async () => {
      await server?.close();
      await redis?.stop();
    });

    it('tasks/get, tasks/result and tasks/cancel on both eras', async () => {
      const taskId = 'AAAAAAAAAAAAAAAAAAAAAAAA';
      await redis.kill();
      const modern = await Promise.all(
        ['tasks/get', 'tasks/cancel'].map((method) =>
          modernRpc(server.url, method, { taskId, _meta: TASKS_META }, { headers: { 'Mcp-Name': taskId } }),
        ),
      );
      const legacy = await Promise.all(
        // (An anonymous stateless caller's tasks/list is empty without asking the store: no list shows its tasks.)
        ['tasks/get', 'tasks/result', 'tasks/cancel'].map((method, i) =>
          rpc(
            server.url,
            { jsonrpc: '2.0', id: i + 1, method, params: { taskId } },
            { headers: { 'MCP-Protocol-Version': '2025-11-25' } },
          ),
        ),
      );
      for (const reply of [...modern, ...legacy]) {
        const answer = reply.json as RpcAnswer;
        assert.equal(reply.status, 503, reply.text);
        assert.equal(answer.error?.code, -32000, reply.text);
        assert.match(answer.error!.message, /task store \(Redis at 127\.0\.0\.1:\d+\) is unreachable/);
        assert.match(reply.headers.get('retry-after') ?? '', /^\d+$/);
      }
    });
  },
);

describe('decide, then run: a refused call starts no handler (item 8)', () => {
  let server: RunningApp;
  let gates: TaskGates;
  before(async () => {
    server = await startApp(
      TasksTestModule.register({ auth: true, attack: true, tasks: { maxTasksPerPrincipal: 3, maxTasks: 5 } }),
    );
    gates = server.app.get(TaskGates);
  });
  after(() => server?.close());

  it('past the per-caller limit (2026-07-28) and the total (2025-11-25), concurrent calls: only accepted calls run', async () => {
    const alice = modernCaller(() => server.url, BEARER.alice);
    const labels = ['m1', 'm2', 'm3', 'm4'];
    const modern = await Promise.all(
      labels.map((label) => alice('tools/call', { name: 'gated_report', arguments: { label } })),
    );
    const bob = await LegacyCaller.open(server.url, { headers: BEARER.bob });
    const legacyLabels = ['l1', 'l2', 'l3'];
    const legacy = await Promise.all(
      legacyLabels.map((label) => bob.call('tools/call', { name: 'gated_report', arguments: { label }, task: {} })),
    );
    const accepted = [
      ...labels.filter((_, i) => modern[i]!.result),
      ...legacyLabels.filter((_, i) => legacy[i]!.result),
    ];
    assert.equal(
      modern.filter((a) => a.error).length,
      1,
      "one of alice's four calls is over tasks.maxTasksPerPrincipal",
    );
    assert.match(modern.find((a) => a.error)!.error!.message, /tasks\.maxTasksPerPrincipal/);
    assert.equal(legacy.filter((a) => a.error).length, 1, "one of bob's three calls is over tasks.maxTasks");
    assert.match(legacy.find((a) => a.error)!.error!.message, /tasks\.maxTasks\b/);
    await Promise.all(accepted.map((label) => guard(gates.hasStarted(label), `the handler of ${label} to start`)));
    assert.deepEqual([...gates.begun].sort(), accepted.sort(), "the handlers that ran are exactly the accepted calls'");
    for (const label of accepted) gates.open(label);
  });
});

describe('tasks are no parameter of a 2025-03-26 session, alone or in a batch', () => {
  let server: RunningApp;
  let gates: TaskGates;
  before(async () => {
    server = await startApp(TasksTestModule.register({ attack: true, tasks: { maxTasksPerPrincipal: 2 } }));
    gates = server.app.get(TaskGates);
  });
  after(() => server?.close());

  it('a batch of task-augmented calls creates no task: optional tools answer in the request, required ones -32601', async () => {
    const old = await LegacyCaller.open(server.url, { protocolVersion: '2025-03-26' });
    const answers = await old.batch([
      { method: 'tools/call', params: { ...tick('batch-1', 1, 0), task: {} } },
      { method: 'tools/call', params: { ...tick('batch-2', 1, 0), task: {} } },
      { method: 'tools/call', params: { ...tick('batch-3', 1, 0), task: {} } },
      { method: 'tools/call', params: { name: 'required_task', arguments: { label: 'batch-required' }, task: {} } },
    ]);
    assert.deepEqual(answers.slice(0, 3).map(textOf), ['batch-1 ticked 1', 'batch-2 ticked 1', 'batch-3 ticked 1']);
    assert.equal(answers[3]!.error?.code, -32601);
    assert.match(answers[3]!.error!.message, /protocol 2025-03-26 has none: initialize with 2025-11-25/);
    assert.deepEqual(gates.begun, [], 'the required tool never ran');
    assert.deepEqual((await old.call('tasks/list')).result?.tasks, []);
  });
});

describe('expiry is not an exit: task.ttl 1 (item 9)', () => {
  let server: RunningApp;
  let gates: TaskGates;
  before(async () => {
    server = await startApp(TasksTestModule.register({ auth: true, tasks: { maxTasksPerPrincipal: 3 } }));
    gates = server.app.get(TaskGates);
  });
  after(() => server?.close());

  it('15 tasks with a 1 ms TTL: each is cancelled as it expires, so no handler outlives its task and the limit holds', async () => {
    const bob = await LegacyCaller.open(server.url, { headers: BEARER.bob });
    const labels = Array.from({ length: 15 }, (_, i) => `ttl-${i}`);
    for (const label of labels)
      await bob.call('tools/call', { name: 'gated_report', arguments: { label }, task: { ttl: 1 } });
    // Nobody opens a gate: a handler ends only because its task expired and cancelled it.
    await gates.changed.until(() => gates.running === 0, 'every handler to end with its expired task');
    for (const label of gates.begun) await guard(gates.wasAborted(label), `${label}'s handler to see its signal abort`);
    const live = await Promise.all(
      [1, 2, 3].map((i) =>
        bob.call('tools/call', { name: 'gated_report', arguments: { label: `after-${i}` }, task: {} }),
      ),
    );
    assert.ok(
      live.every((answer) => answer.result?.task),
      "bob's expired tasks hold no place",
    );
    for (const i of [1, 2, 3]) gates.open(`after-${i}`);
  });
});

describe("anonymous callers never reach each other's tasks (item 6)", () => {
  const apps: RunningApp[] = [];
  after(() => Promise.all(apps.map((app) => app.close())));
  const start = async (options: TasksFixtureOptions): Promise<{ server: RunningApp; gates: TaskGates }> => {
    const server = await startApp(TasksTestModule.register(options));
    apps.push(server);
    return { server, gates: server.app.get(TaskGates) };
  };

  it("sessions.mode stateless: a 2026-07-28 caller's task is in no 2025-11-25 list, and its id stays its creator's key", async () => {
    const { server, gates } = await start({ sessions: 'stateless' });
    const creator = modernCaller(() => server.url);
    const taskId = taskIdOf(
      await creator('tools/call', { name: 'required_task', arguments: { label: 'stateless-1' } }),
    );
    const other = await LegacyCaller.open(server.url, { stateless: true, clientName: 'other' });
    assert.deepEqual((await other.call('tasks/list')).result?.tasks, [], 'another anonymous caller lists nothing');
    const mine = await LegacyCaller.open(server.url, { stateless: true, clientName: 'legacy-creator' });
    const legacyTask = taskIdOf(
      await mine.call('tools/call', { name: 'required_task', arguments: { label: 'stateless-2' }, task: {} }),
    );
    assert.deepEqual((await other.call('tasks/list')).result?.tasks, [], "nor the stateless legacy caller's task");
    for (const label of ['stateless-1', 'stateless-2']) gates.open(label);
    assert.equal((await creator('tasks/get', { taskId })).result?.taskId, taskId);
    assert.match(textOf(await mine.call('tasks/result', { taskId: legacyTask })), /Done stateless-2/);
  });

  it('sessions.mode stateful: two anonymous sessions and a stateless caller each reach only their own tasks', async () => {
    const { server, gates } = await start({});
    const a = await LegacyCaller.open(server.url, { clientName: 'anon-a' });
    const b = await LegacyCaller.open(server.url, { clientName: 'anon-b' });
    const modern = modernCaller(() => server.url);
    const aTask = taskIdOf(
      await a.call('tools/call', { name: 'required_task', arguments: { label: 'anon-a' }, task: {} }),
    );
    const mTask = taskIdOf(await modern('tools/call', { name: 'required_task', arguments: { label: 'anon-m' } }));
    const unknown = (answer: RpcAnswer, id: string) => ({
      code: answer.error?.code,
      message: answer.error?.message.replace(id, '<id>'),
    });
    const fake = 'Z'.repeat(aTask.length);
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      assert.deepEqual(
        unknown(await b.call(method, { taskId: aTask }), aTask),
        unknown(await b.call(method, { taskId: fake }), fake),
        `${method} of another session's task`,
      );
      assert.deepEqual(
        unknown(await a.call(method, { taskId: mTask }), mTask),
        unknown(await a.call(method, { taskId: fake }), fake),
        `${method} of a stateless caller's task`,
      );
    }
    for (const [method, extra] of [
      ['tasks/get', {}],
      ['tasks/cancel', {}],
      ['tasks/update', { inputResponses: { x: {} } }],
    ] as const) {
      assert.equal(
        (await modern(method, { taskId: aTask, ...extra })).error?.code,
        -32602,
        `${method} of a session's task from a stateless caller`,
      );
    }
    assert.deepEqual((await b.call('tasks/list')).result?.tasks, []);
    assert.deepEqual(
      ((await a.call('tasks/list')).result?.tasks as Array<{ taskId: string }>).map((t) => t.taskId),
      [aTask],
    );
    gates.open('anon-a');
    gates.open('anon-m');
    assert.match(
      textOf(await a.call('tasks/result', { taskId: aTask })),
      /Done anon-a/,
      'the attempts changed nothing',
    );
  });
});

describe('one anonymous caller cannot block another (item 10)', () => {
  let trusted: RunningApp;
  let untrusted: RunningApp;
  const limits = { maxTasksPerPrincipal: 3, maxTasks: 12 };
  before(async () => {
    trusted = await startApp(TasksTestModule.register({ attack: true, tasks: limits }), {
      configure: (app) => void (app as NestExpressApplication).set('trust proxy', 'loopback'),
    });
    untrusted = await startApp(TasksTestModule.register({ attack: true, tasks: limits }));
  });
  after(async () => {
    await trusted?.close();
    await untrusted?.close();
  });
  const slow = (label: string) => tick(label, 1, 10_000);

  it("2026-07-28: one address's tasks fill its own quota, not another address's", async () => {
    const a = modernCaller(() => trusted.url, { 'X-Forwarded-For': '203.0.113.1' });
    const b = modernCaller(() => trusted.url, { 'X-Forwarded-For': '203.0.113.2' });
    for (const i of [1, 2, 3]) taskIdOf(await a('tools/call', slow(`a-${i}`)));
    assert.match((await a('tools/call', slow('a-4'))).error?.message ?? '', /already has 3/);
    taskIdOf(await b('tools/call', slow('b-1')));
  });

  it('2025-11-25: four sessions from one address share its quota, and cannot fill tasks.maxTasks for the others', async () => {
    const sessions = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        LegacyCaller.open(trusted.url, { clientName: `c-${i}`, headers: { 'X-Forwarded-For': '203.0.113.3' } }),
      ),
    );
    const answers = await Promise.all(
      sessions.flatMap((session, i) =>
        [1, 2, 3].map((j) => session.call('tools/call', { ...slow(`c-${i}-${j}`), task: {} })),
      ),
    );
    assert.equal(
      answers.filter((answer) => answer.result).length,
      3,
      'the address holds three tasks, whatever its sessions',
    );
    const other = await LegacyCaller.open(trusted.url, {
      clientName: 'd',
      headers: { 'X-Forwarded-For': '203.0.113.4' },
    });
    taskIdOf(await other.call('tools/call', { ...slow('d-1'), task: {} }));
  });

  it('without trust proxy, X-Forwarded-For is no new address: a caller cannot spoof its way to a fresh quota', async () => {
    for (const i of [1, 2, 3])
      taskIdOf(
        await modernCaller(() => untrusted.url, { 'X-Forwarded-For': `198.51.100.${i}` })('tools/call', slow(`s-${i}`)),
      );
    assert.match(
      (await modernCaller(() => untrusted.url, { 'X-Forwarded-For': '198.51.100.9' })('tools/call', slow('s-4'))).error
        ?.message ?? '',
      /already has 3/,
    );
  });

  it('a 2025-11-25 client asking task.ttl of a day gets tasks.maxTtlMs, which defaults to tasks.ttlMs (one hour)', async () => {
    const session = await LegacyCaller.open(trusted.url, {
      clientName: 'ttl',
      headers: { 'X-Forwarded-For': '203.0.113.5' },
    });
    const created = await session.call('tools/call', { ...slow('ttl-1'), task: { ttl: 86_400_000 } });
    assert.equal((created.result?.task as { ttl?: number }).ttl, 3_600_000);
  });
});

describe('two principals: the task methods and tasks/list cursors', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(TasksTestModule.register({ auth: true, attack: true }));
  });
  after(() => server?.close());

  it("another principal's tasks/list cursor, or a made-up one, is -32602 and shows nothing; lists are the caller's own", async () => {
    const alice = await LegacyCaller.open(server.url, { headers: BEARER.alice });
    const bob = await LegacyCaller.open(server.url, { headers: BEARER.bob });
    const mine = await pool(51, 16, (i) =>
      alice.call('tools/call', { ...tick(`page-${i}`, 1, 0), task: {} }).then(taskIdOf),
    );
    const first = await alice.call('tasks/list');
    const cursor = first.result?.nextCursor as string;
    assert.equal(typeof cursor, 'string', 'alice has a second page');
    const second = await alice.call('tasks/list', { cursor });
    const listed = [
      ...(first.result?.tasks as Array<{ taskId: string }>),
      ...(second.result?.tasks as Array<{ taskId: string }>),
    ].map((t) => t.taskId);
    assert.deepEqual(listed.sort(), [...mine].sort());
    for (const foreign of [cursor, 'garbage', mine[0]!]) {
      const answer = await bob.call('tasks/list', { cursor: foreign });
      assert.equal(answer.error?.code, -32602, `bob with cursor ${foreign}`);
      assert.equal(answer.result, undefined);
    }
    assert.deepEqual((await bob.call('tasks/list')).result?.tasks, []);
  });
});

describe('what a task holds and what its errors say', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(TasksTestModule.register({ auth: true, attack: true, tasks: { maxResultBytes: 1024 } }));
  });
  after(() => server?.close());

  it('a result over tasks.maxResultBytes fails the task, naming the option, on both eras; a smaller one is kept', async () => {
    const alice = modernCaller(() => server.url, BEARER.alice);
    const legacy = await LegacyCaller.open(server.url, { headers: BEARER.alice });
    const big = taskIdOf(await alice('tools/call', { name: 'big_report', arguments: { size: 2000 } }));
    const failed = await legacy.call('tasks/result', { taskId: big });
    assert.equal(failed.error?.code, -32603);
    assert.match(
      failed.error!.message,
      /tool "big_report" returned a task result of \d+ bytes.*tasks\.maxResultBytes/i,
    );
    assert.equal((await alice('tasks/get', { taskId: big })).result?.result, undefined, 'nothing of it is kept');
    const legacyBig = taskIdOf(
      await legacy.call('tools/call', { name: 'big_report', arguments: { size: 5000 }, task: {} }),
    );
    assert.match(
      (await legacy.call('tasks/result', { taskId: legacyBig })).error?.message ?? '',
      /tasks\.maxResultBytes/,
    );
    const small = taskIdOf(await legacy.call('tools/call', { name: 'big_report', arguments: { size: 100 }, task: {} }));
    assert.equal(textOf(await legacy.call('tasks/result', { taskId: small })), 'x'.repeat(100));
  });

  it('an exception inside a task reaches the caller as a reference id, never its text, on both eras', async () => {
    const alice = modernCaller(() => server.url, BEARER.alice);
    const legacy = await LegacyCaller.open(server.url, { headers: BEARER.alice });
    const ids = [
      taskIdOf(await alice('tools/call', { name: 'leaky_report', arguments: { label: 'modern' } })),
      taskIdOf(await legacy.call('tools/call', { name: 'leaky_report', arguments: { label: 'legacy' }, task: {} })),
    ];
    for (const taskId of ids) {
      const result = await legacy.call('tasks/result', { taskId });
      assert.equal(result.result?.isError, true);
      assert.match(textOf(result), /failed with an internal error \(reference [0-9a-f-]{36}\)/);
      assert.doesNotMatch(JSON.stringify(result), /TASK-SECRET|postgres/);
    }
  });
});

/** A task store whose writes fail on demand, as a store would during an outage. */
class FlakyTaskStore extends InMemoryTaskStore {
  failUpdates = false;
  failCreates = false;

  override async create(record: McpTaskRecord, limits: McpTaskLimits): Promise<void> {
    if (this.failCreates) throw new Error('task store down at redis://:STORE-SECRET@cache.internal');
    return super.create(record, limits);
  }

  override async update(
    taskId: string,
    change: (record: McpTaskRecord) => McpTaskRecord | undefined,
  ): Promise<McpTaskRecord | undefined> {
    if (this.failUpdates) throw new Error('task store down');
    return super.update(taskId, change);
  }
}

describe('a task store that refuses writes', () => {
  const store = new FlakyTaskStore();
  const errors: string[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  const logger: LoggerService = {
    log: () => undefined,
    warn: () => undefined,
    error: (message: unknown) => void errors.push(String(message)),
  };
  let server: RunningApp;
  let gates: TaskGates;
  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    server = await startApp(TasksTestModule.register({ auth: true, attack: true, tasks: { store } }), { logger });
    gates = server.app.get(TaskGates);
  });
  after(async () => {
    await server?.close();
    process.off('unhandledRejection', onUnhandled);
  });

  it('failing status writes are logged once per task and dropped; the task completes once the store is back, on both eras', async () => {
    // The store fails from a task's first step to its fourth, as a stall would.
    gates.onTick = (_label, step) => {
      if (step === 1) store.failUpdates = true;
      if (step === 4) store.failUpdates = false;
    };
    const alice = modernCaller(() => server.url, BEARER.alice);
    const legacy = await LegacyCaller.open(server.url, { headers: BEARER.alice });
    for (const [label, create] of [
      ['flaky-modern', () => alice('tools/call', tick('flaky-modern', 6, 5))],
      ['flaky-legacy', () => legacy.call('tools/call', { ...tick('flaky-legacy', 6, 5), task: {} })],
    ] as const) {
      const taskId = taskIdOf(await create());
      assert.equal(textOf(await legacy.call('tasks/result', { taskId })), `${label} ticked 6`);
      assert.equal(errors.filter((line) => line.includes(`Task "${taskId}"`)).length, 1, errors.join('\n'));
    }
    assert.deepEqual(unhandled, []);
  });

  it('a create the store refuses fails the call with a reference id, leaks nothing, and runs nothing', async () => {
    gates.onTick = () => undefined;
    store.failCreates = true;
    try {
      const modern = await modernCaller(() => server.url, BEARER.alice)('tools/call', {
        name: 'gated_report',
        arguments: { label: 'never-m' },
      });
      const legacy = await (
        await LegacyCaller.open(server.url, { headers: BEARER.bob })
      ).call('tools/call', { name: 'gated_report', arguments: { label: 'never-l' }, task: {} });
      for (const answer of [modern, legacy]) {
        assert.equal(answer.error?.code, -32603);
        assert.match(answer.error!.message, /reference/);
        assert.doesNotMatch(answer.error!.message, /STORE-SECRET/);
      }
      assert.ok(!gates.begun.includes('never-m') && !gates.begun.includes('never-l'), 'no handler ran');
      assert.deepEqual(unhandled, []);
    } finally {
      store.failCreates = false;
    }
  });
});

/**
 * Inside a describe: an app whose task tools run as BullMQ jobs on the shared Redis, under key
 * prefixes and a queue of its own, and the ids of every job it queued (BullMQ's event stream).
 */
function durableApp(
  fixture: (bullmq: McpBullmqTasksOptions, keyPrefix: string) => TasksFixtureOptions,
  configure?: (app: NestExpressApplication) => void,
) {
  const keyPrefix = `mcp-sec-durable-${randomUUID()}:`;
  const queueName = `q-${randomUUID()}`;
  const bullPrefix = `bull-sec-${randomUUID()}`;
  const running = {} as { server: RunningApp; gates: TaskGates; redis: Redis };
  before(async () => {
    running.server = await startApp(
      TasksTestModule.register(fixture({ url: REDIS_URL, queueName, prefix: bullPrefix }, keyPrefix)),
      configure && { configure: (app) => configure(app as NestExpressApplication) },
    );
    running.gates = running.server.app.get(TaskGates);
    running.redis = new Redis(REDIS_URL);
  });
  after(async () => {
    await running.server?.close();
    running.redis?.disconnect();
    await clearRedisPrefix(keyPrefix);
    await clearRedisPrefix(bullPrefix);
  });
  return {
    get server(): RunningApp {
      return running.server;
    },
    get gates(): TaskGates {
      return running.gates;
    },
    queued: async (): Promise<string[]> => {
      const entries = (await running.redis.xrange(`${bullPrefix}:${queueName}:events`, '-', '+')) as Array<
        [string, string[]]
      >;
      return entries
        .filter(([, fields]) => fields[1] === 'added')
        .map(([, fields]) => fields[fields.indexOf('jobId') + 1]!);
    },
  };
}

describe('durable tasks (BullMQ) decide on the creating instance', { skip: redisSkip }, () => {
  const durable = durableApp((bullmq, keyPrefix) => ({
    auth: true,
    attack: true,
    redis: { url: REDIS_URL, keyPrefix },
    tasks: { pollIntervalMs: 20, bullmq },
  }));

  it('invalid arguments and a guard refusal never reach the queue; an allowed call runs as a job', async () => {
    const alice = modernCaller(() => durable.server.url, BEARER.alice);
    const denied = modernCaller(() => durable.server.url, { ...BEARER.alice, 'x-deny': '1' });
    const legacy = await LegacyCaller.open(durable.server.url, { headers: BEARER.alice });
    const invalid = await alice('tools/call', tick('bad', 0, 0));
    assert.equal(invalid.result?.isError, true, 'the validation error answers in the request');
    assert.match(textOf(invalid), /count/);
    const refused = await denied('tools/call', { name: 'guarded_report', arguments: { label: 'denied' } });
    assert.equal(refused.result?.isError, true, JSON.stringify(refused));
    const invalidLegacy = taskIdOf(await legacy.call('tools/call', { ...tick('bad-legacy', 0, 0), task: {} }));
    const result = await legacy.call('tasks/result', { taskId: invalidLegacy });
    assert.equal(result.result?.isError, true, 'a 2025-11-25 task completed with the validation error');
    const allowed = taskIdOf(await alice('tools/call', { name: 'guarded_report', arguments: { label: 'allowed' } }));
    await guard(durable.gates.hasStarted('allowed'), 'the allowed job to start');
    assert.deepEqual(await durable.queued(), [allowed], 'only the allowed call became a job');
    assert.ok(!durable.gates.begun.includes('denied'), 'the refused call never ran, on any instance');
    durable.gates.open('allowed');
  });
});

describe(
  'durable tasks (BullMQ): rate limits and fairness are decided per caller before anything is queued',
  { skip: redisSkip },
  () => {
    // Two worker slots, one per caller: one caller's backlog may hold one of them.
    const durable = durableApp(
      (bullmq, keyPrefix) => ({
        attack: true,
        redis: { url: REDIS_URL, keyPrefix },
        tasks: { pollIntervalMs: 20, bullmq: { ...bullmq, concurrency: 2, maxRunningPerCaller: 1 } },
      }),
      (app) => void app.set('trust proxy', 'loopback'),
    );
    const throttled = (label: string) => ({ name: 'throttled_report', arguments: { label } });

    it('an anonymous caller past @McpRateLimit is refused in the request on both eras, by its own address: nothing is created or queued', async () => {
      const a = modernCaller(() => durable.server.url, { 'X-Forwarded-For': '203.0.113.21' });
      const legacyA = await LegacyCaller.open(durable.server.url, { headers: { 'X-Forwarded-For': '203.0.113.21' } });
      const b = modernCaller(() => durable.server.url, { 'X-Forwarded-For': '203.0.113.22' });
      const accepted = [
        taskIdOf(await a('tools/call', throttled('a-1'))),
        taskIdOf(await legacyA.call('tools/call', { ...throttled('a-2'), task: {} })),
      ];
      for (const refused of [
        await a('tools/call', throttled('a-3')),
        await legacyA.call('tools/call', { ...throttled('a-4'), task: {} }),
      ]) {
        assert.equal(
          refused.result?.isError,
          true,
          `the third call of the address is refused: ${JSON.stringify(refused)}`,
        );
        assert.match(textOf(refused), /Rate limit for tool "throttled_report" reached/);
        assert.equal(refused.result?.task, undefined, 'no task');
      }
      const tasksOfA = await legacyA.call('tasks/list', {});
      assert.deepEqual(
        (tasksOfA.result?.tasks as Array<{ taskId: string }>).map((t) => t.taskId),
        [accepted[1]],
        'the session holds only its accepted task',
      );
      accepted.push(taskIdOf(await b('tools/call', throttled('b-1'))));
      await durable.gates.changed.until(
        () => ['a-1', 'a-2', 'b-1'].every((label) => durable.gates.begun.includes(label)),
        'the accepted jobs to run',
      );
      assert.deepEqual((await durable.queued()).sort(), [...accepted].sort(), 'only accepted calls became jobs');
      assert.ok(
        !durable.gates.begun.includes('a-3') && !durable.gates.begun.includes('a-4'),
        'a refused call ran nothing',
      );
    });

    it("one caller's backlog cannot hold every worker slot: past tasks.bullmq.maxRunningPerCaller its jobs wait, and another caller's job runs", async () => {
      const a = modernCaller(() => durable.server.url, { 'X-Forwarded-For': '203.0.113.31' });
      const b = modernCaller(() => durable.server.url, { 'X-Forwarded-For': '203.0.113.32' });
      const job = (label: string) => ({ name: 'required_task', arguments: { label } });
      const ofA = ['fa-1', 'fa-2', 'fa-3'];
      for (const label of ofA) taskIdOf(await a('tools/call', job(label)));
      const startedOfA = (): string[] => durable.gates.begun.filter((label) => ofA.includes(label));
      await durable.gates.changed.until(() => startedOfA().length > 0, 'a job of A to start');
      taskIdOf(await b('tools/call', job('fb-1')));
      await guard(
        durable.gates.hasStarted('fb-1'),
        "B's job to start while A's backlog waits (it had both slots)",
        30_000,
      );
      assert.equal(startedOfA().length, 1, 'A runs one job at a time');
      durable.gates.open('fb-1');
      for (const label of ofA) durable.gates.open(label);
      await durable.gates.changed.until(
        () => ofA.every((label) => durable.gates.begun.includes(label)) && durable.gates.running === 0,
        "A's waiting jobs to run once their turn comes",
      );
    });

    it("tasks/cancel of a job whose handler ignores the abort frees neither its caller's share nor its worker slot until the handler returns", async () => {
      const a = modernCaller(() => durable.server.url, { 'X-Forwarded-For': '203.0.113.41' });
      const b = modernCaller(() => durable.server.url, { 'X-Forwarded-For': '203.0.113.42' });
      const stubborn = (label: string) => ({ name: 'stubborn_task', arguments: { label } });
      const first = taskIdOf(await a('tools/call', stubborn('sa-1')));
      await guard(durable.gates.hasStarted('sa-1'), "A's first job to start");
      const cancelled = await a('tasks/cancel', { taskId: first });
      assert.equal(cancelled.error, undefined, JSON.stringify(cancelled));
      taskIdOf(await a('tools/call', stubborn('sa-2')));
      taskIdOf(await b('tools/call', stubborn('sb-1')));
      // sa-1's body still runs: A's share is taken, so B's later job gets the other worker slot.
      await guard(durable.gates.hasStarted('sb-1'), "B's job to start", 30_000);
      assert.ok(
        !durable.gates.begun.includes('sa-2'),
        `A's second job started while its cancelled first one still ran: ${durable.gates.begun.join(', ')}`,
      );
      durable.gates.open('sa-1');
      await guard(durable.gates.hasStarted('sa-2'), "A's second job to start once the first returned", 30_000);
      assert.ok(
        durable.gates.finishedWhenBegun.get('sa-2')?.includes('sa-1'),
        'it started only after the cancelled handler returned',
      );
      durable.gates.open('sa-2');
      durable.gates.open('sb-1');
      await durable.gates.changed.until(() => durable.gates.running === 0, 'every handler to return');
    });
  },
);
