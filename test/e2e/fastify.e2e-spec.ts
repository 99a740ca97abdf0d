/**
 * McpModule on Fastify: an app on @nestjs/platform-fastify 12 (Nest 12, this process) and one on
 * @nestjs/platform-fastify 11 (Nest 11, a child process: test/fastify11, installed here on first
 * run), each serving progress over SSE, resumption with Last-Event-ID, legacy sessions, client
 * disconnect as cancellation, and Fastify's body errors as JSON-RPC errors.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import {
  Body,
  Controller,
  Injectable,
  Module,
  Post,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { McpModule } from 'nestjs-model-context';
import { InteractiveModule, InteractiveTools, events } from '../fixtures/interactive.module.js';
import { SecurityWireModule } from '../fixtures/security-wire.module.js';
import { startApp } from '../utils/app.js';
import { GUARDED_NODE_ARGS } from '../utils/child-guard.js';
import { connectModernClient, connectSdkClient, rpc } from '../utils/clients.js';
import { readSse, type SseEvent } from '../utils/sse.js';

type Json = Record<string, any>;

// Compiled to dist/test/e2e; test/fastify11 is read from the repository.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FASTIFY11 = join(ROOT, 'test/fastify11');
const FASTIFY11_SERVER = join(ROOT, 'dist/test/fastify11/server.js');

const ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** One app under test, wherever it runs, with a way to await a fixture side effect. */
interface Target {
  url: string;
  versions: { platformFastify: string; nestCore: string };
  /** Resolves when the fixture records `name` (e.g. `slow:teardown`) after this call. */
  nextEvent(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Listeners for fixture events of the in-process app. */
const inProcessListeners = new Set<(event: string) => void>();
const push = events.push.bind(events);
events.push = (...items: string[]): number => {
  for (const item of items) for (const listener of inProcessListeners) listener(item);
  return push(...items);
};

function nextInProcessEvent(name: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (event: string): void => {
      if (event !== name) return;
      inProcessListeners.delete(listener);
      resolve();
    };
    inProcessListeners.add(listener);
  });
}

async function startFastify12(): Promise<Target> {
  const server = await startApp(InteractiveModule.register(), { platform: 'fastify' });
  const require = createRequire(import.meta.url);
  const version = (pkg: string) =>
    (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
  return {
    url: server.url,
    versions: { platformFastify: version('@nestjs/platform-fastify'), nestCore: version('@nestjs/core') },
    nextEvent: nextInProcessEvent,
    close: () => server.close(),
  };
}

/** Installs test/fastify11 (Nest 11) once, from its lock file. */
function installFastify11(): void {
  if (existsSync(join(FASTIFY11, 'node_modules/@nestjs/platform-fastify/package.json'))) return;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: FASTIFY11,
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, `npm ci in test/fastify11 failed:\n${result.stdout}\n${result.stderr}`);
}

async function startFastify11(): Promise<Target> {
  installFastify11();
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', join(FASTIFY11, 'register.mjs'), ...GUARDED_NODE_ARGS, FASTIFY11_SERVER],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
  const listeners = new Set<(line: Json) => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const message = JSON.parse(line) as Json;
    for (const listener of listeners) listener(message);
  });
  const ready = await new Promise<Json>((resolve, reject) => {
    const onLine = (message: Json): void => {
      if (!message.ready) return;
      listeners.delete(onLine);
      resolve(message);
    };
    listeners.add(onLine);
    child.once('exit', (code) => reject(new Error(`the Fastify 11 app exited (${code}) before listening:\n${stderr}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${ready.port}/mcp`,
    versions: ready.versions,
    nextEvent: (name) =>
      new Promise((resolve) => {
        const onLine = (message: Json): void => {
          if (message.event !== name) return;
          listeners.delete(onLine);
          resolve();
        };
        listeners.add(onLine);
      }),
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function legacySession(url: string): Promise<string> {
  const init = await rpc(url, INIT);
  assert.equal(init.status, 200, init.text);
  const sessionId = init.headers.get('mcp-session-id');
  assert.ok(sessionId, 'the server minted a session');
  const initialized = await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId });
  assert.equal(initialized.status, 202);
  return sessionId;
}

function legacyHeaders(sessionId: string): Record<string, string> {
  return { ...ACCEPT, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' };
}

const legs = [
  { label: '@nestjs/platform-fastify 12 (Nest 12)', major: '12', start: startFastify12 },
  { label: '@nestjs/platform-fastify 11 (Nest 11, own process)', major: '11', start: startFastify11 },
] as const;

for (const leg of legs) {
  describe(`McpModule on ${leg.label}`, () => {
    let target: Target;
    before(
      async () => {
        target = await leg.start();
      },
      { timeout: 300_000 },
    );
    after(() => target?.close());

    it('runs on the Nest and platform-fastify major it claims', () => {
      assert.equal(target.versions.platformFastify.split('.')[0], leg.major);
      assert.equal(target.versions.nestCore.split('.')[0], leg.major);
    });

    it('streams progress over SSE before the result (raw, SDK 1.32 legacy era, client 2.4 modern era)', async () => {
      const sessionId = await legacySession(target.url);
      const res = await fetch(target.url, {
        method: 'POST',
        headers: legacyHeaders(sessionId),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'c',
          method: 'tools/call',
          params: { name: 'count', arguments: { n: 3 }, _meta: { progressToken: 'p' } },
        }),
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
      const { events: stream, timedOut } = await readSse(res.body, { timeoutMs: 5000 });
      assert.equal(timedOut, false, 'the stream ends with the result');
      const messages = stream.map((e) => e.data as Json).filter((m) => typeof m === 'object' && m !== null);
      assert.deepEqual(
        messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress),
        [1, 2, 3],
      );
      assert.equal(messages.at(-1)!.result.content[0].text, 'counted to 3');

      const sdk = await connectSdkClient(target.url);
      try {
        const seen: number[] = [];
        const result = await sdk.client.callTool({ name: 'count', arguments: { n: 4 } }, undefined, {
          onprogress: (p) => seen.push(p.progress),
        });
        assert.equal(sdk.protocolVersion, '2025-11-25');
        assert.deepEqual(seen, [1, 2, 3, 4]);
        assert.equal((result.content as Json[])[0].text, 'counted to 4');
      } finally {
        await sdk.close();
      }
      const modern = await connectModernClient(target.url);
      try {
        const seen: number[] = [];
        const result = await modern.client.callTool(
          { name: 'count', arguments: { n: 2 } },
          { onprogress: (p: { progress: number }) => seen.push(p.progress) },
        );
        assert.deepEqual(seen, [1, 2]);
        assert.equal((result.content as Json[])[0].text, 'counted to 2');
      } finally {
        await modern.close();
      }
    });

    it('resumes a stream the server closed with Last-Event-ID, replaying exactly the missed events', async () => {
      const sessionId = await legacySession(target.url);
      const res = await fetch(target.url, {
        method: 'POST',
        headers: legacyHeaders(sessionId),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'r',
          method: 'tools/call',
          params: { name: 'resumable', arguments: {}, _meta: { progressToken: 'rt' } },
        }),
      });
      const first = await readSse(res.body, { timeoutMs: 5000 });
      assert.equal(first.timedOut, false, 'the server closes the stream itself');
      const [priming, ...rest] = first.events;
      assert.ok(priming.id, 'the priming event carries an id');
      assert.equal(priming.data, '');
      assert.deepEqual(
        rest.map((e) => (e.data as Json).params.progress),
        [1],
      );
      const resumed = await fetch(target.url, {
        method: 'GET',
        headers: { ...legacyHeaders(sessionId), 'Last-Event-ID': rest.at(-1)!.id! },
      });
      assert.equal(resumed.status, 200);
      const second = await readSse(resumed.body, { timeoutMs: 5000 });
      const messages = second.events.map((e) => e.data as Json).filter((m) => typeof m === 'object' && m !== null);
      assert.deepEqual(
        messages.filter((m) => m.method).map((m) => m.params.progress),
        [2, 3, 4],
      );
      assert.equal(messages.filter((m) => m.id === 'r').length, 1);
      assert.equal(messages.at(-1)!.result.content[0].text, 'resumed');
      const ids = [...first.events, ...second.events].map((e: SseEvent) => e.id).filter((id) => id !== undefined);
      assert.equal(new Set(ids).size, ids.length, 'no event twice');
    });

    it('keeps legacy sessions: 400 without the id, served with it, ended by DELETE, 404 after', async () => {
      const sessionId = await legacySession(target.url);
      const missing = await rpc(
        target.url,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { headers: { 'MCP-Protocol-Version': '2025-11-25' } },
      );
      assert.equal(missing.status, 400);
      assert.equal((missing.json as Json).error.code, -32600);
      const list = await rpc(
        target.url,
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { sessionId, headers: { 'MCP-Protocol-Version': '2025-11-25' } },
      );
      assert.equal(list.status, 200);
      assert.ok(((list.json as Json).result.tools as Json[]).some((t) => t.name === 'count'));
      const ended = await fetch(target.url, { method: 'DELETE', headers: legacyHeaders(sessionId) });
      assert.equal(ended.status, 200);
      const after = await rpc(
        target.url,
        { jsonrpc: '2.0', id: 3, method: 'tools/list' },
        { sessionId, headers: { 'MCP-Protocol-Version': '2025-11-25' } },
      );
      assert.equal(after.status, 404);
      assert.match((after.json as Json).error.message, /Session not found/);
    });

    it('cancels a running call when the client disconnects mid-stream', async () => {
      const sessionId = await legacySession(target.url);
      const controller = new AbortController();
      const res = await fetch(target.url, {
        method: 'POST',
        headers: legacyHeaders(sessionId),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: { name: 'slow', arguments: {}, _meta: { progressToken: 'q' } },
        }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      await reader.read();
      const teardown = target.nextEvent('slow:teardown');
      controller.abort();
      await teardown;
    });

    it("answers Fastify's body errors with JSON-RPC errors: bad JSON, empty body, content types, encodings, bodyLimit", async () => {
      const bad = await rpc(target.url, '{"jsonrpc": "2.0", ');
      assert.equal(bad.status, 400, bad.text);
      assert.equal((bad.json as Json).error.code, -32700);
      for (const headers of [{}, { 'MCP-Protocol-Version': '2026-07-28' }]) {
        const empty = await rpc(target.url, '', { headers });
        assert.equal(empty.status, 400, empty.text);
        assert.equal((empty.json as Json).error.code, -32700);
        assert.match((empty.json as Json).error.message, /empty/);
      }
      const init = JSON.stringify(INIT);
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/xml',
        undefined,
      ]) {
        const res = await rpc(target.url, init, { headers: { 'Content-Type': type } });
        assert.equal(res.status, 415, `${type}: ${res.text}`);
        assert.equal(res.headers.get('mcp-session-id'), null, 'no session was opened');
        assert.equal((res.json as Json).error.code, -32600);
        assert.match((res.json as Json).error.message, /Content-Type: application\/json/);
      }
      const gzip = await fetch(target.url, {
        method: 'POST',
        body: gzipSync(Buffer.from(init)),
        headers: { ...ACCEPT, 'Content-Encoding': 'gzip' },
      });
      assert.equal(gzip.status, 200);
      assert.equal(((await gzip.json()) as Json).result.protocolVersion, '2025-11-25');
      const undecodable = await rpc(target.url, init, { headers: { 'Content-Encoding': 'br' } });
      assert.equal(undecodable.status, 400, undecodable.text);
      assert.equal((undecodable.json as Json).error.code, -32700);
      assert.match((undecodable.json as Json).error.message, /Content-Encoding "br"/);
      // Fastify's default bodyLimit (1 MiB) is below McpModule's default maxBodyBytes (4 MiB).
      const big = await rpc(target.url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'ping',
        params: { pad: 'x'.repeat(1_100_000) },
      });
      assert.equal(big.status, 413, big.text);
      assert.equal((big.json as Json).error.code, -32600);
      assert.match((big.json as Json).error.message, /Fastify's bodyLimit of 1048576 bytes/);
      assert.match((big.json as Json).error.message, /new FastifyAdapter\(\{ bodyLimit \}\)/);
      // Fastify's onProtoPoisoning: 'error' (its default) refuses the body before McpModule sees it.
      const poisoned = await rpc(target.url, '{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{"x":1}}');
      assert.equal(poisoned.status, 400, poisoned.text);
      assert.equal((poisoned.json as Json).error.code, -32700);
      // The app still serves the MCP endpoint.
      assert.equal((await rpc(target.url, INIT)).status, 200);
    });
  });
}

@Injectable()
class DenyOnHeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    if (request.headers['x-deny'] !== undefined) throw new UnauthorizedException('denied by the app guard');
    return true;
  }
}

@Controller('echo')
class EchoController {
  @Post()
  echo(@Body() body: unknown): unknown {
    return body;
  }
}

@Module({
  imports: [InteractiveModule.register()],
  controllers: [EchoController],
  providers: [{ provide: APP_GUARD, useClass: DenyOnHeaderGuard }],
})
class GuardedModule {}

describe('McpModule on Fastify 12: the app around the endpoint', () => {
  it('names both limits in a 413: Fastify bodyLimit before, McpModule maxBodyBytes after', async (t) => {
    const server = await startApp(SecurityWireModule.register({ maxBodyBytes: 16_384 }), {
      platform: 'fastify',
      fastifyOptions: { bodyLimit: 65_536 },
    });
    t.after(() => server.close());
    const alice = { Authorization: 'Bearer alice-token' };
    const big = (bytes: number) => ({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(bytes) } });
    const parser = await rpc(server.url, big(100 * 1024), { headers: alice });
    assert.equal(parser.status, 413);
    assert.equal((parser.json as Json).error.code, -32600);
    assert.match((parser.json as Json).error.message, /Fastify's bodyLimit of 65536 bytes/);
    const module = await rpc(server.url, big(20 * 1024), { headers: alice });
    assert.equal(module.status, 413);
    assert.match((module.json as Json).error.message, /16384 bytes.*maxBodyBytes/);
  });

  it('serves the protected-resource metadata and the bearer challenge', async (t) => {
    const server = await startApp(SecurityWireModule.register(), { platform: 'fastify' });
    t.after(() => server.close());
    const meta = await fetch(`${server.base}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(meta.status, 200);
    assert.equal(((await meta.json()) as Json).resource, 'http://127.0.0.1/mcp');
    const other = await fetch(`${server.base}/.well-known/oauth-protected-resource/elsewhere`);
    assert.equal(other.status, 404);
    const missing = await rpc(server.url, INIT);
    assert.equal(missing.status, 401);
    assert.match(
      missing.headers.get('www-authenticate')!,
      /^Bearer .*resource_metadata="http:\/\/127\.0\.0\.1\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
  });

  it("answers an app guard's HttpException on the MCP route as a JSON-RPC error", async (t) => {
    const server = await startApp(GuardedModule, { platform: 'fastify' });
    t.after(() => server.close());
    const denied = await rpc(server.url, INIT, { headers: { 'x-deny': '1' } });
    assert.equal(denied.status, 401);
    assert.equal((denied.json as Json).jsonrpc, '2.0');
    assert.equal((denied.json as Json).error.code, -32600);
    assert.match((denied.json as Json).error.message, /denied by the app guard/);
    assert.equal((await rpc(server.url, INIT)).status, 200);
  });

  it('keeps the headers that hooks and plugins (CORS) set on the reply, on JSON and SSE answers', async (t) => {
    type Hooked = {
      addHook(
        name: 'onRequest',
        hook: (req: unknown, reply: { header(n: string, v: string): void }, done: () => void) => void,
      ): void;
    };
    const server = await startApp(InteractiveModule.register(), {
      platform: 'fastify',
      configure: (app) => {
        app.enableCors({ origin: true });
        (app.getHttpAdapter().getInstance() as Hooked).addHook('onRequest', (_req, reply, done) => {
          reply.header('x-probe', 'kept');
          done();
        });
      },
    });
    t.after(() => server.close());
    const origin = 'http://127.0.0.1:5173';
    const json = await rpc(server.url, INIT, { headers: { Origin: origin } });
    assert.equal(json.status, 200, json.text);
    assert.equal(json.headers.get('access-control-allow-origin'), origin);
    assert.equal(json.headers.get('x-probe'), 'kept');
    const sessionId = json.headers.get('mcp-session-id')!;
    await rpc(
      server.url,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { sessionId, headers: { Origin: origin } },
    );
    const sse = await rpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'count', arguments: { n: 2 }, _meta: { progressToken: 'o' } },
      },
      {
        sessionId,
        headers: { Origin: origin, 'MCP-Protocol-Version': '2025-11-25' },
      },
    );
    assert.match(sse.headers.get('content-type')!, /^text\/event-stream/);
    assert.equal(sse.headers.get('access-control-allow-origin'), origin);
    assert.equal(sse.headers.get('x-probe'), 'kept');
  });

  it('works in an app made from a TestingModule (the adapter is only known at createNestApplication)', async (t) => {
    const moduleRef = await Test.createTestingModule({ imports: [InteractiveModule.register()] }).compile();
    const app = moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    t.after(() => app.close());
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/mcp`;
    const bad = await rpc(url, '{oops');
    assert.equal(bad.status, 400, bad.text);
    assert.equal((bad.json as Json).error.code, -32700);
    const init = await rpc(url, INIT);
    assert.equal(init.status, 200, init.text);
  });

  it("leaves body errors of the app's other routes to Fastify and Nest", async (t) => {
    const server = await startApp(GuardedModule, { platform: 'fastify' });
    t.after(() => server.close());
    const echoed = await fetch(`${server.base}/echo`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'Content-Type': 'application/json' },
    });
    assert.deepEqual(await echoed.json(), { a: 1 });
    const res = await fetch(`${server.base}/echo`, {
      method: 'POST',
      body: '{oops',
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as Json;
    assert.equal(body.jsonrpc, undefined, 'not a JSON-RPC body');
    assert.equal(body.statusCode, 400, "Nest's own error body");
  });
});

@Module({
  imports: [
    McpModule.forRoot({ name: 'root', version: '1', path: 'mcp' }),
    McpModule.forRoot({ name: 'agents', version: '1', path: 'agents/mcp', maxBodyBytes: 1000 }),
  ],
  providers: [InteractiveTools],
})
class TwoEndpointsModule {}

describe('McpModule twice on one Fastify 12 app (paths mcp and agents/mcp)', () => {
  it('scopes each endpoint to its own routes: one decoding, its own maxBodyBytes named', async (t) => {
    const server = await startApp(TwoEndpointsModule, { platform: 'fastify', fastifyOptions: { bodyLimit: 4096 } });
    t.after(() => server.close());
    for (const [path, name] of [
      ['mcp', 'root'],
      ['agents/mcp', 'agents'],
    ] as const) {
      const url = `${server.base}/${path}`;
      const gzip = await fetch(url, {
        method: 'POST',
        body: gzipSync(Buffer.from(JSON.stringify(INIT))),
        headers: { ...ACCEPT, 'Content-Encoding': 'gzip' },
      });
      assert.equal(gzip.status, 200, `${path}: ${await gzip.clone().text()}`);
      assert.equal(((await gzip.json()) as Json).result.serverInfo.name, name);
    }
    const big = { jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(8192) } };
    const root = await rpc(`${server.base}/mcp`, big);
    assert.equal(root.status, 413);
    assert.match((root.json as Json).error.message, /bodyLimit of 4096 bytes.*maxBodyBytes \(4194304 bytes\)/);
    const agents = await rpc(`${server.base}/agents/mcp`, big);
    assert.equal(agents.status, 413);
    assert.match((agents.json as Json).error.message, /bodyLimit of 4096 bytes.*maxBodyBytes \(1000 bytes\)/);
  });
});

describe("McpModule on Fastify 12 behind a proxy (Fastify's trustProxy)", () => {
  it("counts anonymous sessions per client address as Fastify's request.ip tells it", async (t) => {
    const server = await startApp(
      {
        module: class SessionsApp {},
        imports: [McpModule.forRoot({ name: 'sessions', version: '1', limits: { sessionsPerAddress: 1 } })],
      },
      { platform: 'fastify', fastifyOptions: { trustProxy: true } },
    );
    t.after(() => server.close());
    const initialize = async (ip: string): Promise<string> => {
      const res = await rpc(server.url, INIT, { headers: { 'X-Forwarded-For': ip } });
      assert.equal(res.status, 200, res.text);
      return res.headers.get('mcp-session-id')!;
    };
    const ping = async (ip: string, sessionId: string): Promise<number> =>
      (
        await rpc(
          server.url,
          { jsonrpc: '2.0', id: 2, method: 'ping' },
          { sessionId, headers: { 'X-Forwarded-For': ip, 'MCP-Protocol-Version': '2025-11-25' } },
        )
      ).status;
    const victim = await initialize('10.0.0.1');
    const first = await initialize('10.0.0.2');
    const second = await initialize('10.0.0.2');
    assert.equal(await ping('10.0.0.1', victim), 200, "another address's sessions must not end this one");
    assert.equal(await ping('10.0.0.2', first), 404, 'beyond its cap an address loses its oldest session');
    assert.equal(await ping('10.0.0.2', second), 200);
  });
});

describe('McpModule on an unsupported HTTP platform', () => {
  it('fails the bootstrap naming the platform and the supported ones', async () => {
    class OtherAdapter extends ExpressAdapter {
      override getType(): string {
        return 'h3';
      }
    }
    const app = await NestFactory.create(InteractiveModule.register(), new OtherAdapter(), { logger: false });
    await assert.rejects(
      app.init(),
      /McpModule cannot serve MCP on the "h3" HTTP platform: it supports "express" \(@nestjs\/platform-express\) and "fastify" \(@nestjs\/platform-fastify\)/,
    );
    await app.close();
  });
});
