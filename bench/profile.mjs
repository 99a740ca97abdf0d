// Profiles this module's echo server under tools/call load and prints where its CPU goes.
//
//   npm run build && node bench/profile.mjs                  # legacy stateless wire, 10 s
//   PROFILE_WIRE=modern PROFILE_SECONDS=20 node bench/profile.mjs
//   PROFILE_OP=list PROFILE_TOOLS=50 node bench/profile.mjs  # tools/list with 50 tools
//   PROFILE_SERVER=bare node bench/profile.mjs               # the bare controller, for comparison
//
// The server runs pinned to CPU 0 with bench/preload.mjs, which starts the V8 CPU profiler on the
// first SIGWINCH and writes the profile on the second, so start-up and warm-up stay out of it.
// bench/load.mjs (pinned to CPU 1) drives it at concurrency 32. Output: the top self-time
// functions overall and inside dist/lib (mapped back to lib/*.ts through the source maps), a
// summary per area, and bench/results/profile-<wire>-<op>.cpuprofile for Chrome DevTools.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import net from 'node:net';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const dist = process.env.BENCH_DIST ?? join(root, 'dist');
const wire = process.env.PROFILE_WIRE ?? 'legacy-stateless';
const op = process.env.PROFILE_OP ?? 'call';
const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
const tools = process.env.PROFILE_TOOLS ?? '5';
const port = Number(process.env.PROFILE_PORT ?? 4190);
const top = Number(process.env.PROFILE_TOP ?? 25);
if (!['legacy-stateless', 'legacy-stateful', 'modern'].includes(wire)) {
  throw new Error(`PROFILE_WIRE must be legacy-stateless, legacy-stateful or modern, got "${wire}".`);
}
const serverName = process.env.PROFILE_SERVER ?? 'ours';
if (!['ours', 'bare'].includes(serverName))
  throw new Error(`PROFILE_SERVER must be ours or bare, got "${serverName}".`);
const script = join(dist, serverName === 'bare' ? 'bench/bare-server.js' : 'bench/echo-server.js');
if (!existsSync(script)) throw new Error(`${relative(root, script)} is missing: run \`npm run build\` first.`);

const pinning = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const pinned = (cpu, args) => (pinning ? ['taskset', ['-c', String(cpu), ...args]] : [args[0], args.slice(1)]);
const resultsDir = join(benchDir, 'results');
mkdirSync(resultsDir, { recursive: true });
const profileName = `profile-${serverName === 'bare' ? 'bare-' : ''}${wire}-${op}`;
const profileFile = join(resultsDir, `${profileName}.cpuprofile`);
rmSync(profileFile, { force: true });

const [cmd, args] = pinned(0, [process.execPath, '--import', join(benchDir, 'preload.mjs'), script]);
const server = spawn(cmd, args, {
  cwd: dirname(script),
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    MCP_SESSIONS: wire === 'legacy-stateful' ? 'stateful' : 'stateless',
    MCP_TOOLS: tools,
    BENCH_PROFILE_FILE: profileFile,
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
process.on('exit', () => server.kill('SIGKILL'));

for (let i = 0; ; i++) {
  const open = await new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket.destroy() || true));
    socket.on('error', () => resolve(false));
  });
  if (open) break;
  if (i > 300 || server.exitCode !== null) throw new Error(`${relative(root, script)} did not listen on ${port}.`);
  await sleep(100);
}

function load(durationMs, warmupMs) {
  const opts = {
    scenario: 'throughput',
    op,
    wire,
    url: `http://127.0.0.1:${port}/mcp`,
    concurrency: 32,
    warmupMs,
    durationMs,
    serverPid: server.pid,
    expectTools: Number(tools),
  };
  const [lcmd, largs] = pinned(1, [process.execPath, join(benchDir, 'load.mjs'), JSON.stringify(opts)]);
  const out = spawnSync(lcmd, largs, { encoding: 'utf8' });
  return JSON.parse(out.stdout.trim().split('\n').pop());
}

console.error(
  `profile: ${serverName === 'bare' ? 'bare controller, ' : ''}${wire} ${op === 'list' ? `tools/list (${tools} tools)` : 'tools/call echo'}, warm-up 3 s, profiling ${seconds} s`,
);
load(3000, 0);
server.kill('SIGWINCH');
await sleep(200);
const measured = load(seconds * 1000, 0);
server.kill('SIGWINCH');
for (let i = 0; !existsSync(profileFile); i++) {
  if (i > 200) throw new Error('the server wrote no profile; was bench/preload.mjs loaded?');
  await sleep(50);
}
server.kill('SIGTERM');
console.error(
  `profile: ${measured.perSecond?.toFixed(0)} req/s, ${(measured.serverCpuMsPerOp * 1000).toFixed(0)} µs server CPU per request while profiling`,
);

// ------------------------------------------------------------------------------------ analysis

const profile = JSON.parse(readFileSync(profileFile, 'utf8'));
const selfUs = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
const idleUs = profile.nodes
  .filter((n) => n.callFrame.functionName === '(idle)')
  .reduce((a, n) => a + (selfUs.get(n.id) ?? 0), 0);
const busyUs = totalUs - idleUs;

const maps = new Map();
function sourceOf(url, line, column) {
  if (!url.startsWith('file://') || !url.includes('/dist/lib/')) return undefined;
  if (!maps.has(url)) {
    try {
      const file = fileURLToPath(url);
      maps.set(url, new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8'))));
    } catch {
      maps.set(url, undefined);
    }
  }
  const map = maps.get(url);
  const entry = map?.findEntry(line, column);
  if (!entry?.originalSource) return undefined;
  const source = entry.originalSource.startsWith('file://')
    ? fileURLToPath(entry.originalSource)
    : join(dirname(fileURLToPath(url)), entry.originalSource);
  return `${relative(root, source)}:${entry.originalLine + 1}`;
}

function area(url) {
  if (!url) return 'V8 / native';
  if (url.includes('/dist/lib/')) return 'nestjs-model-context (dist/lib)';
  if (url.includes('/node_modules/@nestjs/')) return '@nestjs/*';
  if (url.includes('/node_modules/class-validator/') || url.includes('/node_modules/class-transformer/'))
    return 'class-validator / class-transformer';
  if (url.includes('/node_modules/rxjs/')) return 'rxjs';
  if (url.includes('/node_modules/')) return 'express & other deps';
  if (url.startsWith('node:')) return 'Node core (http, streams…)';
  return 'other';
}

const byFunction = new Map();
const byArea = new Map();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (!us) continue;
  const { functionName, url, lineNumber, columnNumber } = node.callFrame;
  if (functionName === '(idle)') continue;
  const key = `${functionName}|${url}|${lineNumber}`;
  const entry = byFunction.get(key) ?? {
    functionName: functionName || '(anonymous)',
    url,
    lineNumber,
    columnNumber,
    us: 0,
  };
  entry.us += us;
  byFunction.set(key, entry);
  const a = area(url);
  byArea.set(a, (byArea.get(a) ?? 0) + us);
}
const where = (e) => {
  if (!e.url) return '';
  const mapped = sourceOf(e.url, e.lineNumber, e.columnNumber);
  if (mapped) return mapped;
  const path = e.url.startsWith('file://') ? relative(root, fileURLToPath(e.url)) : e.url;
  return `${path.replace(/^.*node_modules\//, '')}:${e.lineNumber + 1}`;
};
// Inclusive (total) time per dist/lib function: each sample counts once for every distinct lib
// function on its stack, so callees such as JSON.stringify or class-validator are charged to the
// lib code that called them.
const parent = new Map();
const nodeById = new Map(profile.nodes.map((n) => [n.id, n]));
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const inclusive = new Map();
for (const [nodeId, us] of selfUs) {
  if (nodeById.get(nodeId)?.callFrame.functionName === '(idle)') continue;
  const seen = new Set();
  for (let id = nodeId; id !== undefined; id = parent.get(id)) {
    const { functionName, url, lineNumber, columnNumber } = nodeById.get(id).callFrame;
    if (!url.includes('/dist/lib/')) continue;
    const key = `${functionName}|${url}|${lineNumber}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const entry = inclusive.get(key) ?? {
      functionName: functionName || '(anonymous)',
      url,
      lineNumber,
      columnNumber,
      us: 0,
    };
    entry.us += us;
    inclusive.set(key, entry);
  }
}
const inclusiveRows = [...inclusive.values()].sort((a, b) => b.us - a.us);

const pct = (us) => `${((us / busyUs) * 100).toFixed(1)}%`.padStart(6);
const rows = [...byFunction.values()].sort((a, b) => b.us - a.us);
const libRows = rows.filter((e) => e.url.includes('/dist/lib/'));

const lines = [];
lines.push(
  `busy CPU sampled: ${(busyUs / 1000).toFixed(0)} ms over ${seconds} s (${measured.count} requests, ${(busyUs / measured.count).toFixed(0)} µs sampled per request)`,
);
lines.push('\nself time by area:');
for (const [name, us] of [...byArea.entries()].sort((a, b) => b[1] - a[1])) lines.push(`  ${pct(us)}  ${name}`);
lines.push(`\ntop ${top} self-time functions:`);
for (const e of rows.slice(0, top)) lines.push(`  ${pct(e.us)}  ${e.functionName}  ${where(e)}`);
lines.push(`\ntop ${Math.min(top, libRows.length)} self-time functions in dist/lib:`);
for (const e of libRows.slice(0, top)) lines.push(`  ${pct(e.us)}  ${e.functionName}  ${where(e)}`);
lines.push(`\ntop ${Math.min(top, inclusiveRows.length)} total-time (self + callees) functions in dist/lib:`);
for (const e of inclusiveRows.slice(0, top)) lines.push(`  ${pct(e.us)}  ${e.functionName}  ${where(e)}`);
console.log(lines.join('\n'));

const summaryFile = join(resultsDir, `${profileName}.json`);
writeFileSync(
  summaryFile,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      wire,
      op,
      tools: Number(tools),
      seconds,
      load: measured,
      busyMs: busyUs / 1000,
      areas: Object.fromEntries([...byArea.entries()].sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, us / busyUs])),
      top: rows.slice(0, 60).map((e) => ({ function: e.functionName, where: where(e), share: e.us / busyUs })),
      lib: libRows.slice(0, 60).map((e) => ({ function: e.functionName, where: where(e), share: e.us / busyUs })),
      libInclusive: inclusiveRows
        .slice(0, 60)
        .map((e) => ({ function: e.functionName, where: where(e), share: e.us / busyUs })),
    },
    null,
    2,
  )}\n`,
);
console.error(`\nwrote ${relative(root, profileFile)} (open in Chrome DevTools) and ${relative(root, summaryFile)}`);
