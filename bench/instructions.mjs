// Instructions per request, counted by valgrind's callgrind: a per-call cost that does not move
// with the machine's load, steal time or clock, unlike req/s and CPU time (on a shared VM those
// swing ±15% between runs of the same build). Repeats agree within about 2%.
//
//   npm run build && node bench/instructions.mjs                      # ours and bare, 2026-07-28
//   INSTR_WIRE=legacy-stateless INSTR_SERVERS=ours node bench/instructions.mjs
//   BENCH_DIST=../before/dist node bench/instructions.mjs             # another build
//
// Each server runs under callgrind with instrumentation off; after a warm-up (INSTR_WARM_MS,
// default 20 s of load, so the JIT has settled) counting is switched on for INSTR_MEASURE_MS
// (default 25 s) and dumped. Guest instructions of every thread (GC and compiler threads too)
// are divided by the requests served meanwhile. Needs valgrind (Debian: apt-get install valgrind).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const benchDir = dirname(fileURLToPath(import.meta.url));
const dist = process.env.BENCH_DIST ?? join(dirname(benchDir), 'dist');
const wire = process.env.INSTR_WIRE ?? 'modern';
const servers = (process.env.INSTR_SERVERS ?? 'bare,ours').split(',');
const warmMs = Number(process.env.INSTR_WARM_MS ?? 20_000);
const measureMs = Number(process.env.INSTR_MEASURE_MS ?? 25_000);
const HOST = '127.0.0.1';
if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('bench/instructions.mjs needs valgrind (callgrind): install it, e.g. apt-get install valgrind.');
  process.exit(2);
}

async function measure(name, port) {
  const script = join(dist, 'bench', name === 'bare' ? 'bare-server.js' : 'echo-server.js');
  const out = join(tmpdir(), `mcp-instructions-${process.pid}-${name}.out`);
  const dumps = () => readdirSync(tmpdir()).filter((f) => f.startsWith(`mcp-instructions-${process.pid}-${name}.out`));
  for (const file of dumps()) rmSync(join(tmpdir(), file), { force: true });
  // vgdb names its pipes after $HOST: the server and callgrind_control must see the same one.
  const env = { ...process.env, HOST, PORT: String(port), MCP_TOOLS: '5' };
  env.MCP_SESSIONS = wire === 'legacy-stateful' ? 'stateful' : 'stateless';
  const server = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${out}`,
      process.execPath,
      script,
    ],
    { env, stdio: 'ignore' },
  );
  const control = (...args) =>
    execFileSync('callgrind_control', [...args, String(server.pid)], { env, stdio: 'ignore' });
  try {
    for (let i = 0; ; i++) {
      const open = await new Promise((resolve) => {
        const socket = net.connect(port, HOST, () => resolve(socket.destroy() || true));
        socket.on('error', () => resolve(false));
      });
      if (open) break;
      if (i > 600 || server.exitCode !== null) throw new Error(`${name} did not listen on ${port} under valgrind.`);
      await sleep(200);
    }
    const load = (durationMs) => {
      const options = {
        scenario: 'throughput',
        op: 'call',
        wire,
        url: `http://${HOST}:${port}/mcp`,
        concurrency: 8,
        warmupMs: 0,
        durationMs,
        serverPid: server.pid,
        expectTools: 5,
      };
      const run = spawnSync(process.execPath, [join(benchDir, 'load.mjs'), JSON.stringify(options)], {
        encoding: 'utf8',
      });
      return JSON.parse(run.stdout.trim().split('\n').pop());
    };
    load(warmMs);
    control('-i', 'on');
    const measured = load(measureMs);
    control('-d');
    // The dump command is taken when the server next runs: the requests that wake it count too.
    const woken = load(1000);
    for (let i = 0; i < 100 && dumps().every((f) => f === `mcp-instructions-${process.pid}-${name}.out`); i++)
      await sleep(200);
    await sleep(500);
    let instructions = 0;
    for (const file of dumps()) {
      const totals = readFileSync(join(tmpdir(), file), 'utf8').match(/^(?:summary|totals): (\d+)/m);
      if (totals) instructions = Math.max(instructions, Number(totals[1]));
    }
    if (instructions === 0) throw new Error(`callgrind wrote no counts for ${name}.`);
    return { requests: measured.count + woken.count, instructions };
  } finally {
    server.kill('SIGKILL');
    for (const file of dumps()) rmSync(join(tmpdir(), file), { force: true });
  }
}

const results = {};
for (const [i, name] of servers.entries()) {
  const { requests, instructions } = await measure(name, 4700 + i);
  results[name] = Math.round(instructions / requests);
  console.log(
    `${name} · ${wire}: ${results[name].toLocaleString('en-US')} instructions per tools/call (${requests} requests)`,
  );
}
if (results.bare && results.ours) {
  console.log(
    `bare / ours: ${(results.bare / results.ours).toFixed(3)} (the throughput-like ratio: 1.0 is the bare controller's cost)`,
  );
}
