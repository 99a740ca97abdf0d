/**
 * Soak bench (ISSUE-15 acceptance): does the server give back what a caller made it hold?
 *
 *   npm run bench:soak            # builds, then: node --expose-gc bench/soak.mjs
 *   CYCLES=2000 FLOOD=3000 node --expose-gc bench/soak.mjs
 *
 * Starts dist/bench/soak-app.js (this module, default options) in a child process with
 * --expose-gc, on loopback, warms it up, and measures its heap after GC. Then runs
 *   (a) CYCLES (10,000) initialize + GET stream + DELETE cycles,
 *   (b) a session flood: FLOOD (10,500) initializes from one client address, past its cap, while
 *       a session of another address must survive,
 *   (c) a slow reader: a call streaming NOTIFY (20,000) 1 KiB notifications to a raw socket that
 *       never reads its response,
 *   (d) aborted elicitations: ABORTED (1,000) calls whose tool elicits with an ASK_BYTES (95 KiB)
 *       message, each POST closed by the client once the elicitation arrived, spread over
 *       sessions of ABORTED_PER_SESSION (25) calls; then the same sessions deleted,
 *   (e) small events kept for replay: SMALL_CALLS (400) calls of 1,000 progress notifications
 *       of 16 bytes each, read to their end, over sessions of 4 calls; the event store keeps
 *       them (finished streams stay replayable), so the heap grows by its total bound at most
 *       (run it with SOAK_EVENT_TOTAL_BYTES=16777216 to see the bound reached),
 * and prints, per case, the heap before and after GC and the change against the start.
 * SOAK_CASES picks cases (default "abcde"), e.g. SOAK_CASES=d.
 * SOAK_EVENT_TTL_MS=1000 gives the in-memory event store a 1 s TTL (default 5 min), which takes
 * the streams it keeps for replay out of the figures.
 * A bench, not a test: it prints figures and exits 0; it is not part of npm test.
 */
import { fork } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

const CYCLES = Number(process.env.CYCLES ?? 10_000);
const FLOOD = Number(process.env.FLOOD ?? 10_500);
const NOTIFY = Number(process.env.NOTIFY ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const ABORTED = Number(process.env.ABORTED ?? 1_000);
const ASK_BYTES = Number(process.env.ASK_BYTES ?? 95 * 1024);
const ABORTED_PER_SESSION = Number(process.env.ABORTED_PER_SESSION ?? 25);
const SMALL_CALLS = Number(process.env.SMALL_CALLS ?? 400);
const CASES = process.env.SOAK_CASES ?? 'abcde';
const VERSION = '2025-11-25';

if (process.argv[2] === '--server') await serve();
else await drive();

// ------------------------------------------------------------------ the server (child process)

async function serve() {
  if (typeof globalThis.gc !== 'function') throw new Error('soak server: run with node --expose-gc');
  const { startSoakApp } = await import(new URL('../dist/bench/soak-app.js', import.meta.url).href);
  const app = await startSoakApp();
  process.on('message', async (message) => {
    if (message?.type === 'measure') {
      const before = process.memoryUsage();
      for (let i = 0; i < 6; i++) {
        globalThis.gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
      const after = process.memoryUsage();
      process.send({ event: 'measured', heapBefore: before.heapUsed, heapAfter: after.heapUsed, rss: after.rss });
    } else if (message?.type === 'stop') {
      await app.close();
      process.exit(0);
    }
  });
  process.send({ event: 'listening', port: app.port });
}

// ------------------------------------------------------------------ the driver

async function drive() {
  const child = fork(fileURLToPath(import.meta.url), ['--server'], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiters = [];
  child.on('message', (message) => {
    const index = waiters.findIndex((w) => w.event === message.event);
    if (index >= 0) waiters.splice(index, 1)[0].resolve(message);
  });
  child.on('exit', (code) => {
    if (code !== 0) {
      console.error(`soak server exited with ${code}`);
      process.exit(1);
    }
  });
  const next = (event) => new Promise((resolve) => waiters.push({ event, resolve }));
  const { port } = await next('listening');
  const url = `http://127.0.0.1:${port}/mcp`;
  const measure = () => {
    const measured = next('measured');
    child.send({ type: 'measure' });
    return measured;
  };

  const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
  const rows = [];
  let start;
  const record = (name, m, extra = '') => {
    const change = start ? ((m.heapAfter - start.heapAfter) / start.heapAfter) * 100 : 0;
    rows.push({
      case: name,
      'heap before GC': mib(m.heapBefore),
      'heap after GC': mib(m.heapAfter),
      'vs start': `${change >= 0 ? '+' : ''}${change.toFixed(2)} %`,
      rss: mib(m.rss),
      notes: extra,
    });
    console.log(
      `${name}: heap before GC ${mib(m.heapBefore)}, after GC ${mib(m.heapAfter)} (${change >= 0 ? '+' : ''}${change.toFixed(2)} % vs start), rss ${mib(m.rss)}${extra ? `; ${extra}` : ''}`,
    );
  };

  // Warm-up: every code path once, JIT and pools settled.
  await cycles(url, 500);
  await flood(url, 300, '10.9.0.9');
  start = await measure();
  record('start (after warm-up)', start);

  let t = performance.now();
  if (CASES.includes('a')) {
    await cycles(url, CYCLES);
    record(
      `(a) ${CYCLES} initialize+GET+DELETE cycles`,
      await measure(),
      `${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
  }

  if (CASES.includes('b')) {
    t = performance.now();
    const victim = await initialize(url, '10.8.0.1');
    const kept = await flood(url, FLOOD, '10.8.0.2');
    const survived = (await ping(url, victim, '10.8.0.1')) === 200;
    await del(url, victim, '10.8.0.1');
    for (const id of kept) await del(url, id, '10.8.0.2');
    record(
      `(b) flood of ${FLOOD} sessions from one address`,
      await measure(),
      `other address's session survived: ${survived}; ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
  }

  if (CASES.includes('c')) {
    t = performance.now();
    const slow = await slowReader(url, next);
    record(
      `(c) slow reader, ${NOTIFY} x 1 KiB notifications`,
      await measure(),
      `${slow}; ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
  }

  if (CASES.includes('d')) {
    t = performance.now();
    const sessions = await abortedElicitations(url);
    record(
      `(d) ${ABORTED} elicitations of ${(ASK_BYTES / 1024).toFixed(0)} KiB, each POST closed once asked`,
      await measure(),
      `${sessions.length} sessions; ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    for (const id of sessions) await del(url, id, '10.5.0.1');
    record('(d) ... and those sessions deleted', await measure());
  }

  if (CASES.includes('e')) {
    t = performance.now();
    const sessions = await smallEvents(url);
    const bound = process.env.SOAK_EVENT_TOTAL_BYTES
      ? `bound ${mib(Number(process.env.SOAK_EVENT_TOTAL_BYTES))}`
      : 'bound 64 MiB';
    record(
      `(e) ${SMALL_CALLS} x 1,000 small progress events kept for replay`,
      await measure(),
      `${bound}; ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    for (const id of sessions) await del(url, id, '10.4.0.1');
    record('(e) ... and those sessions deleted', await measure());
  }

  console.log();
  console.table(rows);
  child.send({ type: 'stop' });
  await new Promise((resolve) => child.once('exit', resolve));
}

/**
 * ABORTED calls of `ask`, ABORTED_PER_SESSION per session: each POST is read until the server's
 * elicitation/create arrives on it, then closed, as a client that gives up would. Returns the
 * sessions, still open.
 */
async function abortedElicitations(url) {
  const sessions = [];
  for (let i = 0; i < Math.ceil(ABORTED / ABORTED_PER_SESSION); i++)
    sessions.push(await initialize(url, '10.5.0.1', { elicitation: {} }));
  let done = 0;
  const worker = async () => {
    while (done < ABORTED) {
      const n = done++;
      const sessionId = sessions[Math.floor(n / ABORTED_PER_SESSION)];
      const controller = new AbortController();
      const response = await fetch(url, {
        method: 'POST',
        headers: headers('10.5.0.1', sessionId),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: `ask-${n}`,
          method: 'tools/call',
          params: { name: 'ask', arguments: { bytes: ASK_BYTES } },
        }),
        signal: controller.signal,
      });
      if (response.status !== 200) throw new Error(`tools/call ask answered ${response.status}`);
      const reader = response.body.getReader();
      let text = '';
      while (!text.includes('elicitation/create')) {
        const { value, done: ended } = await reader.read();
        if (ended) throw new Error('the call ended before it asked');
        text += new TextDecoder().decode(value);
      }
      controller.abort();
      await reader.cancel().catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return sessions;
}

/** SMALL_CALLS calls of `flood` (1,000 progress notifications of 16 bytes), 4 per session, each read to its end. */
async function smallEvents(url) {
  const sessions = [];
  for (let i = 0; i < Math.ceil(SMALL_CALLS / 4); i++) sessions.push(await initialize(url, '10.4.0.1'));
  let done = 0;
  const worker = async () => {
    while (done < SMALL_CALLS) {
      const n = done++;
      const response = await fetch(url, {
        method: 'POST',
        headers: headers('10.4.0.1', sessions[Math.floor(n / 4)]),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: `small-${n}`,
          method: 'tools/call',
          params: { name: 'flood', arguments: { count: 1000, bytes: 16 }, _meta: { progressToken: `p${n}` } },
        }),
      });
      if (response.status !== 200) throw new Error(`tools/call flood answered ${response.status}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return sessions;
}

function headers(address, sessionId) {
  const h = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'X-Forwarded-For': address,
  };
  if (sessionId) {
    h['Mcp-Session-Id'] = sessionId;
    h['MCP-Protocol-Version'] = VERSION;
  }
  return h;
}

async function initialize(url, address, capabilities = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: headers(address),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities, clientInfo: { name: 'soak', version: '1' } },
    }),
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`initialize answered ${response.status}`);
  return response.headers.get('mcp-session-id');
}

async function ping(url, sessionId, address) {
  const response = await fetch(url, {
    method: 'POST',
    headers: headers(address, sessionId),
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function del(url, sessionId, address) {
  const response = await fetch(url, { method: 'DELETE', headers: headers(address, sessionId) });
  await response.arrayBuffer();
  return response.status;
}

/** initialize, open the GET stream, DELETE, and read the GET stream to its end. */
async function cycles(url, count) {
  let done = 0;
  const worker = async (n) => {
    const address = `10.7.0.${n + 1}`;
    while (done < count) {
      done++;
      const id = await initialize(url, address);
      const get = await fetch(url, {
        headers: {
          Accept: 'text/event-stream',
          'Mcp-Session-Id': id,
          'MCP-Protocol-Version': VERSION,
          'X-Forwarded-For': address,
        },
      });
      if (get.status !== 200) throw new Error(`GET answered ${get.status}`);
      const status = await del(url, id, address);
      if (status !== 200) throw new Error(`DELETE answered ${status}`);
      await get.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, n) => worker(n)));
}

/** `count` initializes from one address; returns the session ids it still holds at the end. */
async function flood(url, count, address) {
  let done = 0;
  const ids = [];
  const worker = async () => {
    while (done < count) {
      done++;
      ids.push(await initialize(url, address));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const live = [];
  for (const id of ids.slice(-200)) if ((await ping(url, id, address)) === 200) live.push(id);
  return live;
}

/** A call streaming NOTIFY notifications to a socket that never reads; returns what happened. */
async function slowReader(url, next) {
  const address = '10.6.0.1';
  const sessionId = await initialize(url, address);
  const { port } = new URL(url);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'flood', arguments: { count: NOTIFY, bytes: 1024 }, _meta: { progressToken: 'p' } },
  });
  const socket = connect({ host: '127.0.0.1', port: Number(port) });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  // Never read: the kernel buffers fill up, then everything else waits in the server.
  socket.pause();
  socket.setNoDelay(true);
  const done = next('flood-done');
  const closed = next('flood-socket-closed');
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `Mcp-Session-Id: ${sessionId}\r\nMCP-Protocol-Version: ${VERSION}\r\nX-Forwarded-For: ${address}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const outcome = await done;
  const whenDone = `the tool sent ${outcome.sent}${outcome.aborted ? ' (cancelled)' : ''}, ${(outcome.bufferedBytes / 1024 / 1024).toFixed(1)} MiB waiting in the server's socket buffer`;
  socket.destroy();
  await closed;
  await del(url, sessionId, address);
  return whenDone;
}
