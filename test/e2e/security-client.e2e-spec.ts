/**
 * The MCP client from the attacker's side: what an upstream learns of the app's callers, whether
 * one caller's credentials can serve another, what a hostile or dying upstream can do to the app.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Test } from '@nestjs/testing';
import {
  type McpClient,
  McpClientError,
  McpClientModule,
  McpClients,
  type McpClientOptions,
} from 'nestjs-model-context/client';
import { ClientUpstreamModule, upstreamEvents, upstreamSeen } from '../fixtures/client-upstream.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { GUARDED_NODE_ARGS, guardedChildEnv } from '../utils/child-guard.js';
import { EverythingHttp, everythingStdio } from '../utils/everything.js';
import { APP_AUDIENCE, UPSTREAM_AUDIENCE, claimsOf, startAuthServer, type TestAuthServer } from '../utils/oidc.js';
import { freePort } from '../utils/redis-server.js';
import { guard, nextEvent } from '../utils/wait.js';

type Whoami = { whoami: { args: Record<string, never>; result: { authorization: string | null } } };
type Caller = { id: string; token: string };

const STDIO_UPSTREAM = fileURLToPath(new URL('../fixtures/client-upstream.stdio.js', import.meta.url));
const isError = (kind: string, pattern: RegExp) => (error: unknown) =>
  error instanceof McpClientError && error.kind === kind && pattern.test(error.message);

async function clientsFor(options: McpClientOptions[]): Promise<{ clients: McpClients; close: () => Promise<void> }> {
  const moduleRef = await Test.createTestingModule({
    imports: [McpClientModule.forRoot({ clients: options })],
  }).compile();
  await moduleRef.init();
  return { clients: moduleRef.get(McpClients), close: () => moduleRef.close() };
}

describe('security: the MCP client', () => {
  let upstream: RunningApp;
  before(async () => {
    upstream = await startApp(ClientUpstreamModule.register());
  });
  after(() => upstream.close());
  beforeEach(() => {
    upstreamSeen.authorizations.length = 0;
  });

  describe("the caller's token never reaches an upstream unless configured", () => {
    let auth: TestAuthServer;
    let alice: string;
    before(async () => {
      auth = await startAuthServer();
      alice = await auth.tokenFor('alice');
    });
    after(() => auth.close());

    for (const era of ['auto', 'legacy'] as const) {
      it(`no auth: nothing is sent, on ${era === 'auto' ? '2026-07-28' : 'a legacy session'}`, async () => {
        const { clients, close } = await clientsFor([
          { name: 'plain', transport: { type: 'http', url: upstream.url }, era },
        ]);
        try {
          const result = await clients
            .get<McpClient<Whoami>>('plain')
            .callTool('whoami', {}, { caller: { id: 'alice', token: alice } });
          assert.equal(result.structuredContent?.authorization, null);
          assert.ok(upstreamSeen.authorizations.every((seen) => seen === null));
        } finally {
          await close();
        }
      });
    }

    it('pass-through to another audience is refused before a byte is sent, with the fix in the message', async () => {
      const { clients, close } = await clientsFor([
        {
          name: 'elsewhere',
          transport: { type: 'http', url: upstream.url },
          auth: { type: 'pass-through', audience: UPSTREAM_AUDIENCE },
        },
      ]);
      try {
        await assert.rejects(
          clients.get('elsewhere').listTools({ caller: { id: 'alice', token: alice } }),
          isError('credentials', /token-exchange/),
        );
        await assert.rejects(
          clients.get('elsewhere').listTools({ caller: { id: 'alice', token: 'opaque-not-a-jwt' } }),
          isError('credentials', /not a JWT/),
        );
        assert.deepEqual(upstreamSeen.authorizations, []);
      } finally {
        await close();
      }
    });

    it("a client-credentials upstream gets the app's token, never the caller's", async () => {
      const { clients, close } = await clientsFor([
        {
          name: 'service',
          transport: { type: 'http', url: upstream.url },
          auth: {
            type: 'client-credentials',
            tokenEndpoint: auth.tokenEndpoint,
            clientId: 'gateway',
            clientSecret: 'gateway-secret',
            resource: UPSTREAM_AUDIENCE,
          },
        },
      ]);
      try {
        const result = await clients
          .get<McpClient<Whoami>>('service')
          .callTool('whoami', {}, { caller: { id: 'alice', token: alice } });
        assert.equal(claimsOf(result.structuredContent?.authorization).sub, 'gateway');
      } finally {
        await close();
      }
    });
  });

  describe("one principal's exchanged token is never used for another", () => {
    let auth: TestAuthServer;
    let clients: McpClients;
    let close: () => Promise<void>;
    const tokens: Record<string, string> = {};
    before(async () => {
      auth = await startAuthServer();
      for (const id of ['alice', 'bob', 'mallory']) tokens[id] = await auth.tokenFor(id);
      ({ clients, close } = await clientsFor([
        {
          name: 'obo',
          transport: { type: 'http', url: upstream.url },
          auth: {
            type: 'token-exchange',
            tokenEndpoint: auth.tokenEndpoint,
            clientId: 'gateway',
            clientSecret: 'gateway-secret',
            resource: UPSTREAM_AUDIENCE,
          },
        },
      ]));
    });
    after(async () => {
      await close();
      await auth.close();
    });
    const onBehalfOf = async (caller: Caller) =>
      claimsOf(
        (await clients.get<McpClient<Whoami>>('obo').callTool('whoami', {}, { caller })).structuredContent
          ?.authorization,
      ).on_behalf_of;

    it('interleaved concurrent calls of two principals each carry their own exchanged token', async () => {
      const callers = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? 'alice' : 'bob'));
      const seen = await Promise.all(callers.map((id) => onBehalfOf({ id, token: tokens[id]! })));
      assert.deepEqual(seen, callers);
      assert.equal(auth.exchanges.get('alice'), 1, 'concurrent first calls share one exchange');
      assert.equal(auth.exchanges.get('bob'), 1);
    });

    it("a caller reusing another principal's id with its own token gets its own exchange, not the cached one", async () => {
      assert.equal(await onBehalfOf({ id: 'alice', token: tokens.mallory! }), 'mallory');
      assert.equal(await onBehalfOf({ id: 'alice', token: tokens.alice! }), 'alice');
    });

    it('an app token for another audience is not exchanged (the authorization server refuses it) and is not leaked in the error', async () => {
      const wrong = await auth.tokenFor('mallory', UPSTREAM_AUDIENCE);
      await assert.rejects(
        clients.get('obo').listTools({ caller: { id: 'mallory', token: wrong } }),
        (error: unknown) => isError('credentials', /invalid_grant/)(error) && !(error as Error).message.includes(wrong),
      );
      assert.notEqual(APP_AUDIENCE, UPSTREAM_AUDIENCE);
    });
  });

  describe("a hostile upstream's huge or endless answer is bounded", () => {
    for (const era of ['auto', 'legacy'] as const) {
      it(`a huge JSON answer stops at maxResponseBytes (${era})`, async () => {
        const { clients, close } = await clientsFor([
          { name: 'big', transport: { type: 'http', url: upstream.url }, era, maxResponseBytes: 64 * 1024 },
        ]);
        try {
          await assert.rejects(
            clients.get('big').callTool('huge', { bytes: 1024 * 1024 }),
            isError('bound', /"big" sent more than 65536 bytes.*maxResponseBytes/),
          );
          // The connection is still usable for answers within the bound.
          assert.equal((await clients.get('big').callTool('huge', { bytes: 10 })).isError, undefined);
        } finally {
          await close();
        }
      });

      it(`an endless stream stops at maxResponseBytes and the upstream call is cancelled (${era})`, async () => {
        const { clients, close } = await clientsFor([
          { name: 'firehose', transport: { type: 'http', url: upstream.url }, era, maxResponseBytes: 256 * 1024 },
        ]);
        try {
          const cancelled = nextEvent(upstreamEvents, 'cancelled', 'the upstream never saw the endless call end');
          await assert.rejects(
            clients.get('firehose').callTool('endless', {}, { onProgress: () => undefined }),
            isError('bound', /"firehose" sent more than 262144 bytes/),
          );
          await cancelled;
        } finally {
          await close();
        }
      });
    }

    it('an answer that never comes stops at timeoutMs', async () => {
      const { clients, close } = await clientsFor([
        { name: 'silent', transport: { type: 'http', url: upstream.url }, timeoutMs: 200 },
      ]);
      try {
        const cancelled = nextEvent(upstreamEvents, 'cancelled', 'the upstream never saw the timed-out call end');
        await assert.rejects(
          clients.get('silent').callTool('hang', {}),
          isError('timeout', /"silent" did not answer tools\/call within 200 ms/),
        );
        await cancelled;
      } finally {
        await close();
      }
    });

    it("a stdio upstream's line longer than maxResponseBytes is refused; the next call gets a fresh child", async () => {
      const { clients, close } = await clientsFor([
        { name: 'everything', transport: everythingStdio(), maxResponseBytes: 16 * 1024 },
      ]);
      try {
        await assert.rejects(
          clients.get('everything').callTool('echo', { message: 'z'.repeat(64 * 1024) }),
          isError('bound', /"everything" sent more than 16384 bytes/),
        );
        const echoed = await clients.get('everything').callTool('echo', { message: 'small' });
        assert.match(JSON.stringify(echoed.content), /small/);
      } finally {
        await close();
      }
    });
  });

  describe('an upstream that dies mid-call', () => {
    it('stdio: the call fails at once naming the upstream; the next call starts a new child', async () => {
      const { clients, close } = await clientsFor([
        {
          name: 'fragile',
          transport: {
            type: 'stdio',
            command: process.execPath,
            args: [...GUARDED_NODE_ARGS, STDIO_UPSTREAM],
            env: guardedChildEnv(),
            stderr: 'ignore',
          },
          retry: false,
        },
      ]);
      try {
        await assert.rejects(
          guard(
            clients.get('fragile').callTool('crash', {}, { onProgress: () => undefined }),
            'the call on a dead child never ended',
          ),
          isError('transport', /"fragile" closed the connection during tools\/call.*reconnects/),
        );
        assert.equal(
          (await clients.get('fragile').callTool('echo', { text: 'back' })).structuredContent?.text ??
            (await clients.get('fragile').callTool('echo', { text: 'back' })).content.length,
          'back',
        );
      } finally {
        await close();
      }
    });

    it('Streamable HTTP (server-everything): killed mid-call gives a clear error, not a hang; served again once it returns', async () => {
      const server = await EverythingHttp.start();
      const { clients, close } = await clientsFor([
        {
          name: 'everything-http',
          transport: { type: 'http', url: server.url },
          retry: { attempts: 1, baseDelayMs: 1 },
        },
      ]);
      try {
        const everything = clients.get('everything-http');
        await everything.ping();
        const call = everything.callTool(
          'trigger-long-running-operation',
          { duration: 30, steps: 30 },
          { onProgress: () => void server.stop() },
        );
        await assert.rejects(
          guard(call, 'the call on a killed upstream never ended'),
          isError('transport', /"everything-http"/),
        );
        await assert.rejects(everything.listTools(), isError('transport', /"everything-http" could not be reached/));
        await server.start();
        assert.ok((await everything.listTools()).some((tool) => tool.name === 'echo'));
      } finally {
        await close();
        await server.stop();
      }
    });

    it("this project's server on both eras: down gives a transport error, back on the same port serves again", async () => {
      const port = await freePort();
      let app = await startApp(ClientUpstreamModule.register(), { port });
      const { clients, close } = await clientsFor([
        { name: 'modern', transport: { type: 'http', url: app.url }, retry: false },
        { name: 'legacy', transport: { type: 'http', url: app.url }, era: 'legacy', retry: false },
      ]);
      try {
        for (const name of ['modern', 'legacy'])
          assert.equal((await clients.get(name).callTool('echo', { text: 'up' })).isError, undefined);
        const started = nextEvent(upstreamEvents, 'started', 'the hanging call never started');
        const hanging = clients.get('legacy').callTool('hang', {});
        await started;
        await app.app.getHttpServer().closeAllConnections?.();
        await app.close();
        await assert.rejects(
          guard(hanging, 'the call on a stopped upstream never ended'),
          isError('transport', /"legacy"/),
        );
        for (const name of ['modern', 'legacy'])
          await assert.rejects(
            clients.get(name).listTools(),
            isError('transport', new RegExp(`"${name}" could not be reached`)),
          );
        app = await startApp(ClientUpstreamModule.register(), { port });
        for (const name of ['modern', 'legacy'])
          assert.equal((await clients.get(name).callTool('echo', { text: 'again' })).structuredContent?.text, 'again');
      } finally {
        await close();
        await app.close();
      }
    });
  });
});
