/**
 * A slow call behind a proxy that cuts connections idle for longer than T (as load balancers do
 * after 30 s; T is small here). The keep-alive comments (`keepAliveMs`, below T) keep the call's
 * connection busy, so its result arrives through the proxy; the control run, with keep-alives
 * far apart, is cut while the call runs. No durations are asserted: the proxy reports what it
 * forwarded and what it cut, and the tests wait for those events.
 */
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module } from '@nestjs/common';
import { Ctx, McpModule, Tool, type McpContext } from '../../lib/index.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient } from '../utils/clients.js';

type Json = Record<string, any>;

/** How long the proxy lets a connection sit idle before it cuts it. */
const IDLE_CUT_MS = 800;
/** The server's keep-alive interval in the run that must survive: well below the cut. */
const KEEP_ALIVE_MS = 100;

/**
 * A TCP proxy that destroys a connection once no byte went either way for `idleMs`. It reports
 * keep-alive comments it forwarded to the client and the connections it cut, marking those that
 * carried a `tools/call`.
 */
class IdleCuttingProxy extends EventEmitter {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  cuts = 0;

  constructor(
    private readonly upstreamPort: number,
    private readonly idleMs: number,
  ) {
    super();
    this.server = createServer((client) => this.connection(client));
  }

  async listen(): Promise<number> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }

  private connection(client: Socket): void {
    const upstream = createConnection(this.upstreamPort, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    let carriesCall = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.cuts++;
        client.destroy();
        upstream.destroy();
        this.emit('cut', { call: carriesCall });
      }, this.idleMs);
    };
    arm();
    client.on('data', (chunk: Buffer) => {
      arm();
      if (chunk.includes('"tools/call"')) carriesCall = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      arm();
      // A comment line alone is an SSE keep-alive (possibly inside a chunked-encoding frame).
      if (carriesCall && /(^|\n):\n\n/.test(chunk.toString('latin1'))) this.emit('keep-alive');
      client.write(chunk);
    });
    const end = (): void => {
      clearTimeout(timer);
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }
}

/** The slow tool's run: the test releases it, and hears when it started. */
let release: () => void = () => undefined;
let started: () => void = () => undefined;

@Injectable()
class SlowTools {
  @Tool('slow_job', { description: 'Runs until the test releases it (or the call is cancelled).' })
  run(@Ctx() ctx: McpContext): Promise<string> {
    started();
    return new Promise((resolve, reject) => {
      release = () => resolve('job done');
      ctx.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
    });
  }
}

function appModule(keepAliveMs: number): unknown {
  @Module({
    imports: [McpModule.forRoot({ name: 'keep-alive-e2e', version: '1.0.0', keepAliveMs })],
    providers: [SlowTools],
  })
  class KeepAliveModule {}
  return KeepAliveModule;
}

interface AnyClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Json>;
}

const eras: Array<{ era: string; connect: (url: string) => Promise<{ client: AnyClient; close(): Promise<void> }> }> = [
  { era: '2025-11-25 (@modelcontextprotocol/sdk 1.32)', connect: (url) => connectSdkClient(url) as never },
  { era: '2026-07-28 (@modelcontextprotocol/client 2.4)', connect: (url) => connectModernClient(url) as never },
];

/** Resolves with the first `event` for which `accept` holds, failing after a guard time. */
function waitFor<T>(emitter: EventEmitter, event: string, accept: (value: T) => boolean, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`timed out waiting for ${what}`));
    }, 60_000);
    const listener = (value: T): void => {
      if (!accept(value)) return;
      clearTimeout(guard);
      emitter.off(event, listener);
      resolve(value);
    };
    emitter.on(event, listener);
  });
}

for (const { era, connect } of eras) {
  describe(`a slow call behind an idle-cutting proxy, ${era}`, () => {
    describe(`keepAliveMs ${KEEP_ALIVE_MS} below the proxy's ${IDLE_CUT_MS} ms idle cut`, () => {
      let app: RunningApp;
      let proxy: IdleCuttingProxy;
      let url: string;
      before(async () => {
        app = await startApp(appModule(KEEP_ALIVE_MS) as never);
        proxy = new IdleCuttingProxy(Number(new URL(app.base).port), IDLE_CUT_MS);
        url = `http://127.0.0.1:${await proxy.listen()}/mcp`;
      });
      after(async () => {
        await proxy.close();
        await app.close();
      });

      it('stays alive past the idle cut and delivers its result through the proxy', async () => {
        const connection = await connect(url);
        const callCuts: unknown[] = [];
        proxy.on('cut', (cut: { call: boolean }) => cut.call && callCuts.push(cut));
        try {
          const running = new Promise<void>((resolve) => (started = resolve));
          // Enough keep-alives, each at least keepAliveMs after the last, that the call has
          // outlived the idle cut: ceil(T / interval) + 1 of them.
          const needed = Math.ceil(IDLE_CUT_MS / KEEP_ALIVE_MS) + 1;
          let seen = 0;
          const enough = waitFor<void>(
            proxy,
            'keep-alive',
            () => ++seen >= needed,
            `${needed} keep-alive comments on the call's connection`,
          );
          const call = connection.client.callTool({ name: 'slow_job', arguments: {} });
          await running;
          await enough;
          release();
          const result = await call;
          assert.notEqual(result.isError, true);
          assert.equal(result.content[0].text, 'job done');
          assert.deepEqual(callCuts, [], 'the proxy never cut the call while keep-alives flowed');
        } finally {
          await connection.close().catch(() => undefined);
        }
      });
    });

    describe('control: keep-alives far apart (60 s)', () => {
      let app: RunningApp;
      let proxy: IdleCuttingProxy;
      let url: string;
      before(async () => {
        app = await startApp(appModule(60_000) as never);
        proxy = new IdleCuttingProxy(Number(new URL(app.base).port), IDLE_CUT_MS);
        url = `http://127.0.0.1:${await proxy.listen()}/mcp`;
      });
      after(async () => {
        release();
        await proxy.close();
        await app.close();
      });

      it('is cut by the proxy while the call runs', async () => {
        const connection = await connect(url);
        try {
          const running = new Promise<void>((resolve) => (started = resolve));
          const cut = waitFor<{ call: boolean }>(proxy, 'cut', (c) => c.call, 'the proxy to cut the idle call');
          const call = connection.client.callTool({ name: 'slow_job', arguments: {} });
          call.catch(() => undefined);
          await running;
          await cut;
        } finally {
          await connection.close().catch(() => undefined);
        }
      });
    });
  });
}
