/**
 * The legacy HTTP+SSE transport (protocol 2024-11-05): `npm run sample:legacy-sse` started as a
 * child process and driven by the SDK v1 `SSEClientTransport`, with bearer auth and the
 * Origin/Host checks; then the same transport in process on Express and Fastify for what needs a
 * tool of the test's own (a call cancelled by the stream closing).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Ctx, McpModule, Tool, type McpContext } from '../../lib/index.js';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';
import { GUARDED_NODE_ARGS } from '../utils/child-guard.js';
import { openStream, post } from '../utils/legacy-sse.js';
import { endProcess } from '../utils/wait.js';

type Json = Record<string, any>;

const SAMPLE = fileURLToPath(new URL('../../sample/01-basic/legacy-sse.js', import.meta.url));
const TOKENS = { alice: 'token-alice-0123456789', bob: 'token-bob-0123456789' };

/** Starts the sample on a free port and resolves its base URL once Nest says where it listens. */
function startSample(): Promise<{ base: string; child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [...GUARDED_NODE_ARGS, SAMPLE], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', MCP_TOKENS: `${TOKENS.alice}:alice,${TOKENS.bob}:bob` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const guard = setTimeout(
      () => reject(new Error(`the sample did not announce its endpoint within 60 s:\n${output}`)),
      60_000,
    );
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = /MCP endpoint at (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(output);
      if (match) {
        clearTimeout(guard);
        resolve({ base: match[1]!, child, output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(guard);
      reject(new Error(`the sample exited (${code}) before listening:\n${output}`));
    });
  });
}

async function connect(url: string, token?: string): Promise<{ client: Client; transport: SSEClientTransport }> {
  const headers = token ? { Authorization: `Bearer ${token}` } : undefined;
  const transport = new SSEClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'legacy-sse-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

describe('npm run sample:legacy-sse with the SDK v1 SSEClientTransport', () => {
  let base: string;
  let child: ChildProcess;
  before(async () => {
    ({ base, child } = await startSample());
  });
  after(async () => {
    await endProcess(child, 'SIGTERM');
  });

  it('lists and calls sample 01 tools over /sse with a bearer token', async () => {
    const { client } = await connect(`${base}/sse`, TOKENS.alice);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        ['create_task', 'list_tasks', 'get_task', 'complete_task', 'delete_task'],
      );
      const created = (await client.callTool({
        name: 'create_task',
        arguments: { title: 'Legacy docs', priority: 'high' },
      })) as Json;
      assert.notEqual(created.isError, true);
      assert.equal(created.structuredContent.title, 'Legacy docs');
      const got = (await client.callTool({
        name: 'get_task',
        arguments: { id: created.structuredContent.id },
      })) as Json;
      assert.equal(got.structuredContent.title, 'Legacy docs');
      const invalid = (await client.callTool({ name: 'create_task', arguments: { title: '' } })) as Json;
      assert.equal(invalid.isError, true);
      assert.match(invalid.content[0].text, /title/);
    } finally {
      await client.close();
    }
  });

  it('announces a relative POST endpoint with a sessionId, answers POSTs 202 and the messages on the stream, accepting a 2024-11-05 initialize', async () => {
    const stream = await openStream(`${base}/sse`, bearer(TOKENS.alice));
    try {
      assert.equal(stream.res.statusCode, 200);
      assert.match(String(stream.res.headers['content-type']), /^text\/event-stream/);
      const endpoint = await stream.next();
      assert.equal(endpoint.event, 'endpoint');
      assert.match(endpoint.rawData, /^\/messages\?sessionId=[^&]+$/);
      const messages = new URL(endpoint.rawData, base).href;
      const init = await post(
        messages,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        },
        bearer(TOKENS.alice),
      );
      assert.equal(init.status, 202);
      const answer = await stream.next((e) => (e.data as Json)?.id === 1);
      assert.equal(answer.event, 'message');
      assert.equal((answer.data as Json).result.protocolVersion, '2024-11-05');
      assert.equal(
        (await post(messages, { jsonrpc: '2.0', method: 'notifications/initialized' }, bearer(TOKENS.alice))).status,
        202,
      );
      assert.equal(
        (await post(messages, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, bearer(TOKENS.alice))).status,
        202,
      );
      const list = await stream.next((e) => (e.data as Json)?.id === 2);
      assert.equal((list.data as Json).result.tools.length, 5);

      // Another principal cannot post into this session: to it, the session does not exist.
      const foreign = await post(messages, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, bearer(TOKENS.bob));
      assert.equal(foreign.status, 404);
      assert.match(JSON.parse(foreign.text).error.message, /Session not found/);

      // Bad bodies are refused on the POST itself, with the JSON-RPC error they are.
      const notJson = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          messages,
          { method: 'POST', headers: { 'Content-Type': 'application/json', ...bearer(TOKENS.alice) } },
          (res) => (res.resume(), resolve(res.statusCode!)),
        );
        req.on('error', reject);
        req.end('{not json');
      });
      assert.equal(notJson, 400);
    } finally {
      stream.close();
    }
  });

  it('ends the session when the GET stream closes', async () => {
    const stream = await openStream(`${base}/sse`, bearer(TOKENS.alice));
    const messages = new URL((await stream.next()).rawData, base).href;
    stream.close();
    await stream.closed;
    // The server learns of the close asynchronously: wait for the refusal, not for a duration.
    for (;;) {
      const answer = await post(messages, { jsonrpc: '2.0', id: 1, method: 'ping' }, bearer(TOKENS.alice));
      if (answer.status === 404) break;
      assert.equal(answer.status, 202, `a POST into a closing session answers 202 or 404, got ${answer.status}`);
      await new Promise((next) => setImmediate(next));
    }
  });

  it('challenges a GET and a POST without a bearer token with 401 and WWW-Authenticate', async () => {
    const stream = await openStream(`${base}/sse`);
    stream.res.resume();
    assert.equal(stream.res.statusCode, 401);
    assert.match(String(stream.res.headers['www-authenticate']), /^Bearer /);
    const answer = await post(`${base}/messages?sessionId=x`, { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(answer.status, 401);
    assert.match(String(answer.headers['www-authenticate']), /^Bearer /);
    await assert.rejects(connect(`${base}/sse`), /401|Unauthorized/i);
  });

  it('refuses a foreign Origin with 403 on both routes', async () => {
    const stream = await openStream(`${base}/sse`, { ...bearer(TOKENS.alice), Origin: 'https://evil.example' });
    stream.res.resume();
    assert.equal(stream.res.statusCode, 403);
    const answer = await post(
      `${base}/messages?sessionId=x`,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...bearer(TOKENS.alice), Origin: 'https://evil.example' },
    );
    assert.equal(answer.status, 403);
    assert.match(JSON.parse(answer.text).error.message, /Forbidden: .*Origin/i);
  });

  it('refuses a foreign Host (DNS rebinding) with 403 on both routes', async () => {
    const port = new URL(base).port;
    const stream = await openStream(`${base}/sse`, { ...bearer(TOKENS.alice), Host: `evil.example:${port}` });
    stream.res.resume();
    assert.equal(stream.res.statusCode, 403);
    const answer = await post(
      `${base}/messages?sessionId=x`,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...bearer(TOKENS.alice), Host: `evil.example:${port}` },
    );
    assert.equal(answer.status, 403);
    assert.match(JSON.parse(answer.text).error.message, /Forbidden: .*Host/i);
  });

  it('still serves Streamable HTTP at /mcp next to it', async () => {
    const answer = await post(
      `${base}/mcp`,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      {
        ...bearer(TOKENS.alice),
        Accept: 'application/json, text/event-stream',
      },
    );
    assert.equal(answer.status, 200);
  });
});

/** A tool that runs until its call is cancelled, telling the test when it started and ended. */
const slow = {
  started: undefined as undefined | (() => void),
  aborted: undefined as undefined | (() => void),
};

@Injectable()
class SlowTools {
  @Tool('wait_forever', { description: 'Runs until cancelled.' })
  waitForever(@Ctx() ctx: McpContext): Promise<string> {
    slow.started?.();
    return new Promise((_resolve, reject) => {
      ctx.signal.addEventListener('abort', () => {
        slow.aborted?.();
        reject(new Error('cancelled'));
      });
    });
  }
}

@Injectable()
class AskingTools {
  @Tool('confirm', { description: 'Asks the user to confirm.' })
  async confirm(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Proceed?', {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
    });
    return outcome.action === 'accept' ? `ok=${String((outcome.content as Json).ok)}` : outcome.action;
  }
}

@Module({
  imports: [
    McpModule.forRoot({ name: 'legacy-sse-e2e', version: '1.0.0', legacySse: true, limits: { sessionsPerAddress: 2 } }),
  ],
  providers: [SlowTools, AskingTools],
})
class LegacySseTestModule {}

for (const platform of ['express', 'fastify'] as TestPlatform[]) {
  describe(`legacy SSE transport on ${platform}`, () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp(LegacySseTestModule, { platform });
    });
    after(() => app.close());

    it('lists and calls tools with SSEClientTransport', async () => {
      const { client } = await connect(`${app.base}/sse`);
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['confirm', 'wait_forever']);
        assert.equal((await client.ping()) !== undefined, true);
      } finally {
        await client.close();
      }
    });

    it('sends an elicitation on the stream and takes the answer POSTed back', async () => {
      const transport = new SSEClientTransport(new URL(`${app.base}/sse`));
      const client = new Client({ name: 'legacy-sse-e2e', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      const asked: Json[] = [];
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params);
        return { action: 'accept', content: { ok: true } };
      });
      await client.connect(transport);
      try {
        const result = (await client.callTool({ name: 'confirm', arguments: {} })) as Json;
        assert.equal(result.content[0].text, 'ok=true');
        assert.equal(asked.length, 1);
        assert.equal(asked[0]!.message, 'Proceed?');
      } finally {
        await client.close();
      }
    });

    it('cancels a running call when its GET stream closes', async () => {
      const { client } = await connect(`${app.base}/sse`);
      const started = new Promise<void>((resolve) => (slow.started = resolve));
      const aborted = new Promise<void>((resolve) => (slow.aborted = resolve));
      const call = client.callTool({ name: 'wait_forever', arguments: {} }).catch(() => 'closed');
      await started;
      await client.close();
      await aborted;
      assert.equal(await call, 'closed');
    });

    it('keeps at most limits.sessionsPerAddress streams per caller, ending the oldest', async () => {
      const first = await openStream(`${app.base}/sse`);
      await first.next();
      const second = await openStream(`${app.base}/sse`);
      await second.next();
      const third = await openStream(`${app.base}/sse`);
      await third.next();
      await first.closed;
      second.close();
      third.close();
    });

    it('refuses a POST without sessionId (400) and one naming no session (404)', async () => {
      const missing = await post(`${app.base}/messages`, { jsonrpc: '2.0', id: 1, method: 'ping' });
      assert.equal(missing.status, 400);
      assert.match(JSON.parse(missing.text).error.message, /sessionId/);
      const unknown = await post(`${app.base}/messages?sessionId=nope`, { jsonrpc: '2.0', id: 1, method: 'ping' });
      assert.equal(unknown.status, 404);
    });
  });
}
