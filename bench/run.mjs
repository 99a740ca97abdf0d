// `npm run bench`: starts every bench server in its own process pinned to CPU 0, drives each with
// bench/load.mjs pinned to CPU 1, and prints one table of ratios against the bare Nest controller
// measured in the same run. Writes bench/results/latest.json and docs/bench.svg.
//
// Throughput scenarios are measured in interleaved rounds: each round visits every server once
// (in a rotating order), and each ratio is taken against the bare controller's figure from the
// same round, so slow drifts of the machine cancel out. The reported figure is the median over
// rounds (and, with BENCH_RUNS > 1, the median over runs of those medians).
//
// Environment (all optional):
//   BENCH_DURATION_MS  measured window per server per round        (default 1200)
//   BENCH_WARMUP_MS    unmeasured load before each window           (default 300)
//   BENCH_PRIME_MAX_MS longest warm-up of a fresh server before its first round; it stops
//                      earlier once its rate has settled            (default 10000)
//   BENCH_ROUNDS       interleaved rounds per scenario              (default 5)
//   BENCH_RUNS         full runs (fresh processes); median of runs  (default 1)
//   BENCH_CONCURRENCY  closed-loop clients                          (default 32)
//   BENCH_SESSIONS     idle legacy sessions for the memory scenario (default 1000)
//   BENCH_ONLY         comma-separated row ids to run (bare rows are always kept)
//   BENCH_SCENARIOS    comma-separated subset of call,list5,list50,init,memory,sse
//   BENCH_DIST         compiled output holding bench/*.js           (default <repo>/dist)
//   BENCH_BEFORE_DIST  another build's output (an earlier commit): its three rows of ours run in
//                      the same rounds, ids before-stateless, before-stateful, before-modern
//   BENCH_PORT         first port to use                            (default 4100)
//   BENCH_MAX_FOREIGN  "busy machine" threshold, in CPU cores used by other processes: before
//                      each window the bench waits (up to BENCH_MAX_WAIT_MS, within a total
//                      budget of BENCH_WAIT_BUDGET_MS) for the machine to be quieter than
//                      this, and a window that was busier anyway is measured again, up to
//                      twice (default 0.1; 10000; 180000)
//   BENCH_SVG          chart path ('' to skip)                      (default <repo>/docs/bench.svg)
//   BENCH_REDIS_URL    Redis for the "legacy stateful + Redis" row  (default redis://127.0.0.1:6379)
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import net from 'node:net';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { renderSvg } from './chart.mjs';
import { machineBusyTicks } from './load.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const num = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}".`);
  return value;
};
const config = {
  durationMs: num('BENCH_DURATION_MS', 1200),
  warmupMs: num('BENCH_WARMUP_MS', 300),
  primeMaxMs: num('BENCH_PRIME_MAX_MS', 10000),
  rounds: num('BENCH_ROUNDS', 5),
  runs: num('BENCH_RUNS', 1),
  concurrency: num('BENCH_CONCURRENCY', 32),
  sessions: num('BENCH_SESSIONS', 1000),
  port: num('BENCH_PORT', 4100),
  maxForeign: num('BENCH_MAX_FOREIGN', 0.1),
  maxWaitMs: num('BENCH_MAX_WAIT_MS', 10_000),
  waitBudgetMs: num('BENCH_WAIT_BUDGET_MS', 180_000),
  dist: process.env.BENCH_DIST ?? join(root, 'dist'),
  svg: process.env.BENCH_SVG ?? join(root, 'docs/bench.svg'),
  only: process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((s) => s.trim()) : undefined,
  scenarios: (process.env.BENCH_SCENARIOS ?? 'call,list5,list50,init,memory,sse').split(',').map((s) => s.trim()),
};
const SCENARIO_NAMES = ['call', 'list5', 'list50', 'init', 'memory', 'sse'];
for (const name of config.scenarios) {
  if (!SCENARIO_NAMES.includes(name))
    throw new Error(`BENCH_SCENARIOS: unknown scenario "${name}"; use ${SCENARIO_NAMES.join(', ')}.`);
}

// ------------------------------------------------------------------------------------ servers

const ourServer = join(config.dist, 'bench/echo-server.js');
const bareServer = join(config.dist, 'bench/bare-server.js');
// `node bench/run.mjs --report [file]` measures nothing: it prints the table and targets of a
// saved result (default bench/results/latest.json) and redraws the chart from it.
const reportFile =
  process.argv[2] === '--report' ? (process.argv[3] ?? join(benchDir, 'results/latest.json')) : undefined;
const previous = reportFile ? JSON.parse(readFileSync(reportFile, 'utf8')) : undefined;
for (const file of previous ? [] : [ourServer, bareServer]) {
  if (!existsSync(file))
    throw new Error(`${relative(root, file)} is missing: run \`npm run build\` first (npm run bench does).`);
}
const peer = (name) => join(benchDir, 'servers', name);

/**
 * One table row: a server process (command + env) driven over one wire. `baseline` names the bare
 * row its ratios are taken against (the bare row with the same wire, so request bytes match).
 */
const ROWS = [
  {
    id: 'bare',
    label: 'bare Nest controller · 2025-11-25',
    family: 'bare',
    script: bareServer,
    env: { MCP_SESSIONS: 'stateful' },
    wire: 'legacy-stateless',
    sessions: true,
  },
  {
    id: 'bare-modern',
    label: 'bare Nest controller · 2026-07-28',
    family: 'bare',
    script: bareServer,
    env: { MCP_SESSIONS: 'stateless' },
    wire: 'modern',
  },
  {
    id: 'ours-stateless',
    label: 'nestjs-model-context · legacy stateless',
    family: 'ours',
    script: ourServer,
    env: { MCP_SESSIONS: 'stateless' },
    wire: 'legacy-stateless',
  },
  {
    id: 'ours-stateful',
    label: 'nestjs-model-context · legacy stateful',
    family: 'ours',
    script: ourServer,
    env: { MCP_SESSIONS: 'stateful' },
    wire: 'legacy-stateful',
    sessions: true,
  },
  {
    id: 'ours-stateful-redis',
    label: 'nestjs-model-context · legacy stateful + Redis',
    family: 'ours',
    script: ourServer,
    env: { MCP_SESSIONS: 'stateful', REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    wire: 'legacy-stateful',
    sessions: true,
  },
  {
    id: 'ours-modern',
    label: 'nestjs-model-context · 2026-07-28',
    family: 'ours',
    script: ourServer,
    env: { MCP_SESSIONS: 'stateful' },
    wire: 'modern',
  },
  {
    id: 'rekog-stateless',
    label: '@rekog/mcp-nest 2.0.5 · legacy stateless',
    family: 'rekog',
    script: peer('rekog-server.mjs'),
    env: { MCP_SESSIONS: 'stateless' },
    wire: 'legacy-stateless',
  },
  {
    id: 'rekog-stateful',
    label: '@rekog/mcp-nest 2.0.5 · legacy stateful',
    family: 'rekog',
    script: peer('rekog-server.mjs'),
    env: { MCP_SESSIONS: 'stateful' },
    wire: 'legacy-stateful',
    sessions: true,
  },
  {
    id: 'rekog-modern',
    label: '@rekog/mcp-nest 2.0.5 · 2026-07-28',
    family: 'rekog',
    script: peer('rekog-server.mjs'),
    env: { MCP_SESSIONS: 'stateless' },
    wire: 'modern',
  },
  {
    id: 'sdk-legacy',
    label: 'SDK v2 createMcpHandler · legacy (stateless)',
    family: 'sdk',
    script: peer('sdk-server.mjs'),
    env: {},
    wire: 'legacy-stateless',
  },
  {
    id: 'sdk-modern',
    label: 'SDK v2 createMcpHandler · 2026-07-28',
    family: 'sdk',
    script: peer('sdk-server.mjs'),
    env: {},
    wire: 'modern',
  },
  // BENCH_BEFORE_DIST: the same three rows from another build (an earlier commit's dist), in the
  // same rounds, so a change's before and after are paired against the same bare controller.
  ...(process.env.BENCH_BEFORE_DIST
    ? [
        ['before-stateless', 'legacy stateless', 'stateless', 'legacy-stateless'],
        ['before-stateful', 'legacy stateful', 'stateful', 'legacy-stateful'],
        ['before-modern', '2026-07-28', 'stateful', 'modern'],
      ].map(([id, what, sessions, wire]) => ({
        id,
        label: `before (BENCH_BEFORE_DIST) · ${what}`,
        family: 'before',
        script: join(process.env.BENCH_BEFORE_DIST, 'bench/echo-server.js'),
        env: { MCP_SESSIONS: sessions },
        wire,
        ...(wire === 'legacy-stateful' && { sessions: true }),
      }))
    : []),
].map((row) => ({ ...row, baseline: row.wire === 'modern' ? 'bare-modern' : 'bare' }));
const rows = previous
  ? ROWS.filter((row) => previous.rows.some((saved) => saved.id === row.id))
  : ROWS.filter((row) => row.family === 'bare' || !config.only || config.only.includes(row.id));

const pinning = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const clkTck = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
const pinned = (cpu, args) => (pinning ? ['taskset', ['-c', String(cpu), ...args]] : [args[0], args.slice(1)]);

let nextPort = config.port;
const children = new Set();

async function waitForPort(port, child, log) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`server exited with code ${child.exitCode} before listening on ${port}:\n${log.join('')}`);
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`server did not listen on ${port} within 60 s:\n${log.join('')}`);
}

/** Starts one server process pinned to CPU 0 and waits until it accepts connections. */
async function startServer(script, env, { memFile } = {}) {
  const port = nextPort++;
  const nodeArgs = memFile ? ['--expose-gc', '--import', join(benchDir, 'preload.mjs')] : [];
  const [cmd, args] = pinned(0, [process.execPath, ...nodeArgs, script]);
  const child = spawn(cmd, args, {
    cwd: dirname(script),
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      ...(memFile ? { BENCH_MEM_FILE: memFile } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = [];
  child.stdout.on('data', (d) => log.length < 50 && log.push(String(d)));
  child.stderr.on('data', (d) => {
    if (log.length < 50) log.push(String(d));
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  await waitForPort(port, child, log);
  return { child, pid: child.pid, port, url: `http://127.0.0.1:${port}/mcp`, log };
}

async function stopServer(server) {
  if (!server || server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000)]);
  if (server.child.exitCode === null) server.child.kill('SIGKILL');
}

function stopAll() {
  for (const child of children) child.kill('SIGKILL');
}
process.on('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopAll();
    process.exit(130);
  });
}

// ------------------------------------------------------------------------------------ load generator

function startLoad() {
  const [cmd, args] = pinned(1, [process.execPath, join(benchDir, 'load.mjs'), '--serve']);
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(child);
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  lines.on('line', (line) => waiting.shift()?.(JSON.parse(line)));
  return {
    run(opts) {
      return new Promise((resolve) => {
        waiting.push(resolve);
        child.stdin.write(`${JSON.stringify({ clkTck, concurrency: config.concurrency, ...opts })}\n`);
      });
    },
    stop() {
      child.stdin.end();
      children.delete(child);
    },
  };
}

// ------------------------------------------------------------------------------------ scenarios

const median = (values) => {
  const sorted = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const log = (...args) => console.error(...args);

/** CPU cores used by the whole machine over `ms` (everything here is idle while it samples). */
async function machineLoad(ms) {
  const b0 = machineBusyTicks();
  const t0 = performance.now();
  await sleep(ms);
  const b1 = machineBusyTicks();
  if (b0 === undefined || b1 === undefined) return 0;
  return (b1 - b0) / clkTck / ((performance.now() - t0) / 1000);
}

let waitedMs = 0;
/** Waits (bounded) until processes outside the bench leave the CPUs alone. */
async function waitForQuiet() {
  const started = Date.now();
  while (waitedMs + (Date.now() - started) < config.waitBudgetMs && Date.now() - started < config.maxWaitMs) {
    if ((await machineLoad(250)) <= config.maxForeign) break;
    await sleep(250);
  }
  waitedMs += Date.now() - started;
}

/**
 * Unmeasured load until the server is warm: a fresh Node server needs several seconds of traffic
 * (JIT tiers, inline caches, heap sizing) before its rate settles — about 1/5 of the steady rate in
 * the first second here. Stops once two successive 1 s windows agree within 10 % (after at least
 * 4 s), or after BENCH_PRIME_MAX_MS.
 */
async function prime(load, name, row, server, opts) {
  const rates = [];
  const deadline = Date.now() + config.primeMaxMs;
  while (Date.now() < deadline) {
    const result = await load.run({ ...opts, url: server.url, serverPid: server.pid, warmupMs: 0, durationMs: 1000 });
    if (result.failed) break;
    rates.push(result.perSecond);
    const [a, b] = rates.slice(-2);
    if (rates.length >= 4 && Math.abs(a - b) / Math.max(a, b) < 0.1) break;
  }
  log(`  ${name} warm-up ${row.id}: ${rates.map((r) => r.toFixed(0)).join(' → ')}/s`);
}

/** Interleaved rounds of a closed-loop scenario over `targets` ({ row, server }). */
async function rounds(load, name, targets, opts) {
  const samples = Object.fromEntries(targets.map(({ row }) => [row.id, []]));
  for (const { row, server } of targets) await prime(load, name, row, server, opts(row));
  for (let round = 0; round < config.rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    for (const { row, server } of order) {
      // A window shared with a busy neighbour process is measured again; the quietest try is kept.
      let result;
      for (let attempt = 0; attempt < 3; attempt++) {
        await waitForQuiet();
        const next = await load.run({
          ...opts(row),
          url: server.url,
          serverPid: server.pid,
          warmupMs: config.warmupMs,
          durationMs: config.durationMs,
        });
        if (!result || next.failed || (next.foreignCpuShare ?? 0) < (result.foreignCpuShare ?? 0)) result = next;
        if (result.failed || !((result.foreignCpuShare ?? 0) > config.maxForeign)) break;
      }
      samples[row.id].push(result);
      const busy =
        (result.foreignCpuShare ?? 0) > config.maxForeign
          ? ` [busy machine: ${result.foreignCpuShare.toFixed(2)} foreign cores]`
          : '';
      log(
        `  ${name} round ${round + 1} ${row.id}: ${result.failed ? `FAILED ${result.failed}` : `${result.perSecond.toFixed(0)}/s, ${(result.serverCpuMsPerOp * 1000).toFixed(0)} µs CPU/op${result.errors ? ` (${result.errors} errors: ${result.firstError})` : ''}${busy}`}`,
      );
    }
  }
  return samples;
}

/** Per-round ratios against each row's baseline, then medians. */
function summarize(samples, rowsById, metric) {
  const out = {};
  for (const [id, list] of Object.entries(samples)) {
    const base = samples[rowsById[id].baseline];
    const ok = list.filter((s) => !s.failed);
    const errors = list.reduce((sum, s) => sum + (s.errors ?? 0), 0);
    if (ok.length === 0) {
      out[id] = { failed: list[0]?.failed ?? 'no samples' };
      continue;
    }
    const ratios = list.map((s, i) =>
      s.failed || !base?.[i] || base[i].failed ? undefined : metric(s) / metric(base[i]),
    );
    out[id] = {
      value: median(ok.map(metric)),
      ratio: median(ratios),
      ratioMin: Math.min(...ratios.filter((r) => r !== undefined)),
      ratioMax: Math.max(...ratios.filter((r) => r !== undefined)),
      cpuMsPerOp: median(ok.map((s) => s.serverCpuMsPerOp)),
      cpuRatio: median(
        list.map((s, i) =>
          s.failed || !base?.[i] || base[i].failed ? undefined : s.serverCpuMsPerOp / base[i].serverCpuMsPerOp,
        ),
      ),
      p50Ms: median(ok.map((s) => s.p50Ms)),
      p99Ms: median(ok.map((s) => s.p99Ms)),
      clientCpuShare: median(ok.map((s) => s.clientCpuShare)),
      foreignCpuShare: median(ok.map((s) => s.foreignCpuShare)),
      contendedSamples: ok.filter((s) => (s.foreignCpuShare ?? 0) > config.maxForeign).length,
      errors,
      firstError: list.find((s) => s.firstError)?.firstError,
      samples: list.length,
    };
  }
  return out;
}

async function runOnce(runIndex) {
  log(`\nrun ${runIndex + 1}/${config.runs}: starting ${rows.length} servers…`);
  const rowsById = Object.fromEntries(ROWS.map((row) => [row.id, row]));
  const load = startLoad();
  const result = {};
  const servers5 = new Map();
  const servers50 = new Map();
  try {
    for (const row of rows) servers5.set(row.id, await startServer(row.script, { ...row.env, MCP_TOOLS: '5' }));
    const targets = rows.map((row) => ({ row, server: servers5.get(row.id) }));

    if (config.scenarios.includes('call')) {
      log('tools/call');
      result.call = summarize(
        await rounds(load, 'call', targets, (row) => ({ scenario: 'throughput', op: 'call', wire: row.wire })),
        rowsById,
        (s) => s.perSecond,
      );
    }
    if (config.scenarios.includes('list5')) {
      log('tools/list, 5 tools');
      result.list5 = summarize(
        await rounds(load, 'list5', targets, (row) => ({
          scenario: 'throughput',
          op: 'list',
          wire: row.wire,
          expectTools: 5,
        })),
        rowsById,
        (s) => s.perSecond,
      );
    }
    if (config.scenarios.includes('sse')) {
      log('SSE: one call streaming 100 progress notifications vs 100 plain calls');
      result.sse = {};
      for (const { row, server } of targets) {
        const samples = [];
        for (let round = 0; round < config.rounds; round++) {
          await waitForQuiet();
          samples.push(await load.run({ scenario: 'sse', url: server.url, wire: row.wire }));
        }
        const ok = samples.filter((s) => !s.failed);
        result.sse[row.id] = ok.length
          ? {
              streamMs: median(ok.map((s) => s.streamMs)),
              plainMs: median(ok.map((s) => s.plainMs)),
              ratio: median(ok.map((s) => s.ratio)),
              notifications: Math.min(...ok.map((s) => s.notifications)),
              complete: ok.every((s) => s.complete),
            }
          : { failed: samples[0].failed };
        const r = result.sse[row.id];
        log(
          `  sse ${row.id}: ${r.failed ? `FAILED ${r.failed}` : `${r.streamMs.toFixed(1)} ms vs ${r.plainMs.toFixed(1)} ms (${r.notifications} notifications)`}`,
        );
      }
    }
    const sessionTargets = targets.filter(({ row }) => row.sessions);
    if (config.scenarios.includes('init') && sessionTargets.length > 0) {
      log('legacy session init + DELETE churn');
      result.init = summarize(
        await rounds(load, 'init', sessionTargets, () => ({ scenario: 'init' })),
        rowsById,
        (s) => s.perSecond,
      );
    }
    for (const server of servers5.values()) await stopServer(server);
    servers5.clear();

    if (config.scenarios.includes('list50')) {
      log('tools/list, 50 tools');
      for (const row of rows) servers50.set(row.id, await startServer(row.script, { ...row.env, MCP_TOOLS: '50' }));
      result.list50 = summarize(
        await rounds(
          load,
          'list50',
          rows.map((row) => ({ row, server: servers50.get(row.id) })),
          (row) => ({ scenario: 'throughput', op: 'list', wire: row.wire, expectTools: 50 }),
        ),
        rowsById,
        (s) => s.perSecond,
      );
      for (const server of servers50.values()) await stopServer(server);
      servers50.clear();
    }

    if (config.scenarios.includes('memory')) {
      log(`memory per idle legacy session (${config.sessions} sessions, after a forced GC)`);
      result.memory = {};
      const memDir = join(benchDir, 'results');
      mkdirSync(memDir, { recursive: true });
      for (const row of rows.filter((r) => r.sessions)) {
        const memFile = join(memDir, `mem-${row.id}.json`);
        rmSync(memFile, { force: true });
        const server = await startServer(row.script, { ...row.env, MCP_TOOLS: '5' }, { memFile });
        try {
          result.memory[row.id] = await load.run({
            scenario: 'memory',
            url: server.url,
            serverPid: server.pid,
            memFile,
            sessions: config.sessions,
          });
        } finally {
          await stopServer(server);
          rmSync(memFile, { force: true });
        }
        const m = result.memory[row.id];
        log(
          `  memory ${row.id}: ${m.failed ? `FAILED ${m.failed}` : `${(m.bytesPerSession / 1024).toFixed(2)} KB heap+external, ${(m.rssBytesPerSession / 1024).toFixed(1)} KB rss per session`}`,
        );
      }
    }
  } finally {
    for (const server of [...servers5.values(), ...servers50.values()]) await stopServer(server);
    load.stop();
  }
  return result;
}

// ------------------------------------------------------------------------------------ aggregation

/** Median over runs of every numeric leaf, plus min/max of the headline ratios. */
function combineRuns(runs) {
  if (runs.length === 1) return runs[0];
  const combined = {};
  for (const scenario of SCENARIO_NAMES) {
    const perRun = runs.map((r) => r[scenario]).filter(Boolean);
    if (perRun.length === 0) continue;
    combined[scenario] = {};
    for (const id of Object.keys(perRun[0])) {
      const entries = perRun.map((r) => r[id]).filter((e) => e && !e.failed);
      if (entries.length === 0) {
        combined[scenario][id] = perRun[0][id];
        continue;
      }
      const merged = {};
      for (const key of Object.keys(entries[0])) {
        const values = entries.map((e) => e[key]);
        merged[key] = typeof values[0] === 'number' ? median(values) : values[0];
      }
      if (entries[0].ratio !== undefined) merged.runRatios = entries.map((e) => e.ratio);
      if (entries[0].value !== undefined) merged.runValues = entries.map((e) => e.value);
      if (entries[0].complete !== undefined) merged.complete = entries.every((e) => e.complete);
      combined[scenario][id] = merged;
    }
  }
  return combined;
}

// ------------------------------------------------------------------------------------ report

const fmtInt = (v) => (v === undefined ? '–' : Math.round(v).toLocaleString('en-US'));
const fmtX = (v) => (v === undefined || !Number.isFinite(v) ? '' : `${v.toFixed(2)}x`);
const cell = (entry, fmt = fmtInt, ratioKey = 'ratio') => {
  if (!entry) return 'n/a';
  if (entry.failed) return 'failed';
  const warn = entry.errors ? ' ⚠' : '';
  return `${fmt(entry.value)} (${fmtX(entry[ratioKey])})${warn}`;
};

function buildTable(summary) {
  const header = [
    'server · wire',
    'tools/call req/s (×bare)',
    'CPU µs/call (×bare)',
    'tools/list 5 req/s (×bare)',
    'tools/list 50 req/s (×bare, ×5-tool)',
    'session init/s (×bare)',
    'KB / idle session',
    '100-progress SSE ms (×100 calls)',
  ];
  const lines = [];
  for (const row of rows) {
    const call = summary.call?.[row.id];
    const list5 = summary.list5?.[row.id];
    const list50 = summary.list50?.[row.id];
    const init = summary.init?.[row.id];
    const memory = summary.memory?.[row.id];
    const sse = summary.sse?.[row.id];
    const vs5 = list50?.value !== undefined && list5?.value ? list50.value / list5.value : undefined;
    lines.push([
      row.label,
      cell(call),
      call && !call.failed
        ? `${(call.cpuMsPerOp * 1000).toFixed(0)} (${fmtX(call.cpuRatio)})`
        : call?.failed
          ? 'failed'
          : 'n/a',
      cell(list5),
      list50 && !list50.failed
        ? `${fmtInt(list50.value)} (${fmtX(list50.ratio)}, ${fmtX(vs5)})`
        : list50?.failed
          ? 'failed'
          : 'n/a',
      init ? cell(init) : row.sessions ? 'n/a' : '– (no sessions)',
      memory ? (memory.failed ? 'failed' : (memory.bytesPerSession / 1024).toFixed(2)) : row.sessions ? 'n/a' : '–',
      sse
        ? sse.failed
          ? 'failed'
          : sse.complete
            ? `${sse.streamMs.toFixed(1)} vs ${sse.plainMs.toFixed(1)} (${fmtX(sse.ratio)})`
            : `– (${sse.notifications}/100 on the call's stream)`
        : 'n/a',
    ]);
  }
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
    ...lines.map((l) => `| ${l.join(' | ')} |`),
  ].join('\n');
}

/** The issue's targets, checked against the summary. */
function checkTargets(summary) {
  const checks = [];
  const add = (target, value, ok) => checks.push({ target, value, ok });
  const ours = ['ours-stateless', 'ours-stateful', 'ours-modern'].filter((id) => rows.some((r) => r.id === id));
  for (const id of ours) {
    const call = summary.call?.[id];
    if (call && !call.failed) {
      add(`${id}: tools/call ≥ 0.85x bare`, fmtX(call.ratio), call.ratio >= 0.85);
      add(`${id}: CPU per call ≤ 1.25x bare`, fmtX(call.cpuRatio), call.cpuRatio <= 1.25);
    }
    const l5 = summary.list5?.[id];
    const l50 = summary.list50?.[id];
    if (l5?.value && l50?.value)
      add(`${id}: tools/list 50 ≥ 0.9x tools/list 5`, fmtX(l50.value / l5.value), l50.value / l5.value >= 0.9);
    const sse = summary.sse?.[id];
    if (sse && !sse.failed)
      add(`${id}: 100-progress stream ≤ 1.5x 100 plain calls`, fmtX(sse.ratio), sse.ratio <= 1.5 && sse.complete);
  }
  const init = summary.init?.['ours-stateful'];
  if (init && !init.failed) add('ours-stateful: session init ≥ 0.8x bare', fmtX(init.ratio), init.ratio >= 0.8);
  const mem = summary.memory?.['ours-stateful'];
  if (mem && !mem.failed)
    add(
      'ours-stateful: ≤ 4 KB per idle session',
      `${(mem.bytesPerSession / 1024).toFixed(2)} KB`,
      mem.bytesPerSession <= 4096,
    );

  // Ahead of the peers: compare like with like (same wire / session mode).
  const pairs = [
    ['ours-stateless', ['rekog-stateless', 'sdk-legacy']],
    ['ours-stateful', ['rekog-stateful']],
    ['ours-modern', ['rekog-modern', 'sdk-modern']],
  ];
  // Throughput is compared through the ratios (each taken against the bare controller of the same
  // round), so a noisy window of one server cannot decide it; both eras' bare rows are equivalent.
  const higher = { call: 'ratio', list5: 'ratio', list50: 'ratio', init: 'ratio' };
  for (const [mine, peers] of pairs) {
    for (const peerId of peers) {
      if (!rows.some((r) => r.id === mine) || !rows.some((r) => r.id === peerId)) continue;
      const lost = [];
      let compared = 0;
      for (const [scenario, key] of Object.entries(higher)) {
        const a = summary[scenario]?.[mine];
        const b = summary[scenario]?.[peerId];
        if (!a || !b || a.failed || b.failed) continue;
        compared++;
        if (!(a[key] > b[key])) lost.push(scenario);
      }
      const ma = summary.memory?.[mine];
      const mb = summary.memory?.[peerId];
      if (ma && mb && !ma.failed && !mb.failed) {
        compared++;
        if (!(ma.bytesPerSession < mb.bytesPerSession)) lost.push('memory');
      }
      const sa = summary.sse?.[mine];
      const sb = summary.sse?.[peerId];
      if (sa && sb && !sa.failed && !sb.failed && sb.complete) {
        compared++;
        if (!(sa.streamMs < sb.streamMs)) lost.push('sse');
      }
      add(
        `${mine} ahead of ${peerId} (${compared} scenarios)`,
        lost.length ? `behind on ${lost.join(', ')}` : 'ahead on all',
        lost.length === 0,
      );
    }
  }
  return checks;
}

function machine() {
  const model = (() => {
    try {
      return /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model;
    } catch {
      return cpus()[0]?.model;
    }
  })();
  return {
    cpus: cpus().length,
    model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    pinning: pinning ? 'taskset: servers on CPU 0, load generator on CPU 1' : 'taskset not found: processes not pinned',
    commit: (() => {
      const rev = spawnSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout?.trim();
      const dirty = spawnSync('git', ['-C', root, 'status', '--porcelain', '--', 'lib'], {
        encoding: 'utf8',
      }).stdout?.trim();
      return rev ? `${rev}${dirty ? ' (lib/ modified)' : ''}` : undefined;
    })(),
  };
}

// ------------------------------------------------------------------------------------ main

const started = Date.now();
const info = previous?.machine ?? machine();
const shown = previous?.config ?? config;
const runs = previous?.runs ?? [];
if (!previous) {
  log(`bench: ${info.cpus} × ${info.model}, Node ${info.node}; ${info.pinning}`);
  log(
    `bench: c=${config.concurrency}, ${config.rounds} rounds × (${config.warmupMs} ms warm-up + ${config.durationMs} ms), ${config.runs} run(s)`,
  );
  for (let i = 0; i < config.runs; i++) runs.push(await runOnce(i));
}
const summary = combineRuns(runs);
const table = buildTable(summary);
const targets = checkTargets(summary);
const date = (previous?.date ?? new Date().toISOString()).slice(0, 10);

console.log(`\n## Bench ${date}: ${info.cpus} × ${info.model}, Node ${info.node}, c=${shown.concurrency}`);
console.log(
  `(${runs.length > 1 ? `median of ${runs.length} runs, each ` : ''}median of ${shown.rounds} interleaved rounds of ${shown.durationMs} ms; ratios against the bare controller in the same round)\n`,
);
if (runs.length > 1) {
  runs.forEach((run, i) => console.log(`Run ${i + 1} of ${runs.length}:\n\n${buildTable(run)}\n`));
  console.log(`Median of the ${runs.length} runs:\n`);
}
console.log(table);
console.log('\nTargets:');
for (const t of targets) console.log(`  ${t.ok ? 'met ' : 'MISS'}  ${t.target}: ${t.value}`);

// Redis commands per operation (bench/redis-commands.mjs, also `npm run bench:redis`).
const redisCommands = spawnSync(process.execPath, [join(benchDir, 'redis-commands.mjs')], {
  env: { ...process.env, BENCH_DIST: config.dist },
  encoding: 'utf8',
});
console.log(
  redisCommands.stdout ||
    `Redis commands per operation: not measured (${(redisCommands.stderr || redisCommands.error?.message || '').trim().split('\n').at(-1)})`,
);
targets.push({
  target: 'Redis commands per operation (2026-07-28 tools/call 0, legacy tools/call ≤ 2, session open ≤ 4)',
  value: redisCommands.status === 0 ? 'met' : 'missed or not measured',
  ok: redisCommands.status === 0,
});

// Telemetry cost per tools/call (bench/telemetry-cost.ts, also `npm run bench:telemetry`).
const telemetryCost = previous
  ? undefined
  : spawnSync(process.execPath, [join(config.dist, 'bench/telemetry-cost.js')], { env: process.env, encoding: 'utf8' });
if (telemetryCost) {
  console.log(
    telemetryCost.stdout ||
      `Telemetry cost per tools/call: not measured (${(telemetryCost.stderr || telemetryCost.error?.message || '').trim().split('\n').at(-1)})`,
  );
  targets.push({
    target: 'tools/call CPU with @opentelemetry/api and no SDK within 3% of telemetry: false',
    value: telemetryCost.status === 0 ? 'met' : 'missed or not measured',
    ok: telemetryCost.status === 0,
  });
}

// Tokens of tools/list, full and progressive, and the scripted agent (bench/token-bench.mjs, also `npm run bench:tokens`).
const tokenBench = previous
  ? undefined
  : spawnSync(process.execPath, [join(benchDir, 'token-bench.mjs')], {
      env: { ...process.env, BENCH_DIST: config.dist },
      encoding: 'utf8',
    });
if (tokenBench) {
  console.log(
    tokenBench.stdout ||
      `Token bench: not measured (${(tokenBench.stderr || tokenBench.error?.message || '').trim().split('\n').at(-1)})`,
  );
  targets.push({
    target:
      'progressive tools/list <= 3% of full tokens (300 tools); 30 named tools found and called in <= 3 requests (SDK v1, v2, AI SDK)',
    value: tokenBench.status === 0 ? 'met' : 'missed or not measured',
    ok: tokenBench.status === 0,
  });
}
// Gateway proxy overhead (bench/gateway-cost.ts, also `npm run bench:gateway`).
const gatewayCost = previous
  ? undefined
  : spawnSync(process.execPath, [join(config.dist, 'bench/gateway-cost.js')], { env: process.env, encoding: 'utf8' });
if (gatewayCost)
  console.log(
    gatewayCost.stdout ||
      `Gateway proxy overhead: not measured (${(gatewayCost.stderr || gatewayCost.error?.message || '').trim().split('\n').at(-1)})`,
  );

const output = previous
  ? { ...previous, summary, targets, table }
  : {
      date: new Date().toISOString(),
      machine: info,
      config: { ...config, dist: relative(root, config.dist) || '.', svg: config.svg && relative(root, config.svg) },
      rows: rows.map(({ id, label, family, wire, baseline }) => ({ id, label, family, wire, baseline })),
      summary,
      runs,
      targets,
      table,
      redisCommands: redisCommands.stdout?.trim().split('\n') ?? [],
      telemetryCost: telemetryCost?.stdout?.trim().split('\n') ?? [],
      tokenBench: tokenBench?.stdout?.trim().split('\n') ?? [],
      gatewayCost: gatewayCost?.stdout?.trim().split('\n') ?? [],
      elapsedSeconds: Math.round((Date.now() - started) / 1000),
      waitedForQuietSeconds: Math.round(waitedMs / 1000),
    };
if (!previous) {
  mkdirSync(join(benchDir, 'results'), { recursive: true });
  writeFileSync(join(benchDir, 'results/latest.json'), `${JSON.stringify(output, null, 2)}\n`);
}
if (config.svg) {
  mkdirSync(dirname(config.svg), { recursive: true });
  writeFileSync(config.svg, renderSvg(output));
}
if (waitedMs > 1000)
  log(`\nwaited ${Math.round(waitedMs / 1000)} s in total for other processes to leave the CPUs alone`);
if (previous)
  log(`\nreported ${relative(root, reportFile)}${config.svg ? `; wrote ${relative(root, config.svg)}` : ''}`);
else
  log(
    `\nwrote bench/results/latest.json${config.svg ? ` and ${relative(root, config.svg)}` : ''} in ${output.elapsedSeconds} s`,
  );
