/**
 * A gateway: McpMountModule mounts the official server-everything (over stdio, and over Streamable
 * HTTP) and this project's own server (Streamable HTTP) into one endpoint, driven by the official
 * SDK v1 and v2 clients.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, UseGuards, type CanActivate } from '@nestjs/common';
import { Args, McpModule, Tool } from 'nestjs-model-context';
import { McpClientModule, McpMountModule } from 'nestjs-model-context/client';
import { IsString } from 'class-validator';
import { ClientUpstreamModule, upstreamEvents, upstreamSeen } from '../fixtures/client-upstream.module.js';
import { ENTRY_PATHS, PathClient } from '../utils/paths.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectModernClient, connectSdkClient, type InputHandlers } from '../utils/clients.js';
import { EverythingHttp, everythingStdio } from '../utils/everything.js';
import { WireTap } from '../utils/wire-tap.js';
import { freePort } from '../utils/redis-server.js';
import { Watched, nextEvent } from '../utils/wait.js';

class NoteDto {
  @IsString()
  text!: string;
}

@Injectable()
class LocalTools {
  @Tool({ description: 'A tool of the gateway itself.' })
  note(@Args() { text }: NoteDto): string {
    return `noted: ${text}`;
  }
}

/** Refuses every call: mounted capabilities behind it are unreachable. */
@Injectable()
class DenyAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

function gateway(
  upstreamUrl: string,
  extraMounts: Array<Parameters<typeof McpMountModule.forRoot>[0]['mounts'][number]> = [],
) {
  @Module({
    imports: [
      McpModule.forRoot({ name: 'gateway', version: '1.0.0' }),
      McpClientModule.forRoot({
        clients: [
          // Declaring elicitation lets the upstream ask; each question is relayed to the gateway's caller.
          { name: 'everything', transport: everythingStdio(), capabilities: { elicitation: {} } },
          { name: 'upstream', transport: { type: 'http', url: upstreamUrl }, retry: false },
        ],
      }),
      McpMountModule.forRoot({
        mounts: [
          { client: 'everything', prefix: 'everything_', exclude: ['get-env'], resources: true, prompts: true },
          { client: 'upstream', prefix: 'up_', include: ['echo', 'hang'] },
          {
            client: 'upstream',
            prefix: 'guarded_',
            include: ['whoami'],
            resources: false,
            prompts: false,
            decorators: [UseGuards(DenyAll)],
          },
          {
            client: 'upstream',
            prefix: 'dyn_',
            include: ['grow', 'grown_a', 'grown_b'],
            resources: false,
            prompts: false,
          },
          ...extraMounts,
        ],
      }),
    ],
    providers: [LocalTools, DenyAll],
  })
  class GatewayModule {}
  return GatewayModule;
}

const textOf = (result: unknown) =>
  ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('');

const FLAVOURS = ['sdk v1 (2025-11-25)', 'client v2 (2026-07-28)'] as const;
const connectFor = (v1: boolean, url: string, options: InputHandlers = {}) =>
  v1 ? connectSdkClient(url, options) : connectModernClient(url, options);
/** callTool with request options: v1 takes a result schema before them, v2 does not. */
const callWith = (
  v1: boolean,
  client: { callTool: (...args: any[]) => Promise<unknown> },
  params: { name: string; arguments: Record<string, unknown> },
  options: Record<string, unknown>,
) => (v1 ? client.callTool(params, undefined, options) : client.callTool(params, options));

describe('gateway: McpMountModule', () => {
  let upstreamPort: number;
  let upstream: RunningApp;
  let gw: RunningApp;
  before(async () => {
    upstreamPort = await freePort();
    upstream = await startApp(ClientUpstreamModule.register(), { port: upstreamPort });
    gw = await startApp(gateway(upstream.url));
  });
  after(async () => {
    await gw?.close();
    upstream.app.getHttpServer().closeAllConnections();
    await upstream.close();
  });

  for (const flavour of FLAVOURS) {
    const v1 = flavour.startsWith('sdk');
    const connect = (options: InputHandlers = {}) => connectFor(v1, gw.url, options);

    it(`${flavour}: lists merge the gateway's tools with the mounted ones, prefixed; excluded and guarded ones are absent`, async () => {
      const connection = await connect();
      try {
        const names = (await connection.client.listTools()).tools.map((tool) => tool.name);
        for (const name of [
          'note',
          'everything_echo',
          'everything_trigger-long-running-operation',
          'up_echo',
          'up_hang',
        ])
          assert.ok(names.includes(name), `${name} in ${names.join()}`);
        for (const name of ['everything_get-env', 'up_whoami', 'guarded_whoami', 'echo'])
          assert.ok(!names.includes(name), `${name} must not be listed`);
        const prompts = (await connection.client.listPrompts()).prompts.map((prompt) => prompt.name);
        assert.ok(prompts.includes('everything_args-prompt'), prompts.join());
        const resources = (await connection.client.listResources()).resources;
        assert.ok(resources.length > 0);
      } finally {
        await connection.close();
      }
    });

    it(`${flavour}: calls, resources and prompts are forwarded; progress flows back`, async () => {
      const connection = await connect();
      try {
        assert.match(
          textOf(await connection.client.callTool({ name: 'everything_echo', arguments: { message: 'via gateway' } })),
          /via gateway/,
        );
        const echoed = await connection.client.callTool({ name: 'up_echo', arguments: { text: 'structured' } });
        assert.deepEqual(echoed.structuredContent, { text: 'structured' });
        const progress: number[] = [];
        await callWith(
          v1,
          connection.client,
          { name: 'everything_trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
          { onprogress: (p: { progress: number }) => progress.push(p.progress) },
        );
        assert.ok(progress.includes(1) && progress.includes(2), `progress ${progress.join()}`);
        const resource = (await connection.client.listResources()).resources[0]!;
        const read = await connection.client.readResource({ uri: resource.uri });
        assert.equal(read.contents[0]!.uri, resource.uri);
        const prompt = await connection.client.getPrompt({
          name: 'everything_args-prompt',
          arguments: { city: 'Bergen' },
        });
        assert.match(JSON.stringify(prompt.messages), /Bergen/);
      } finally {
        await connection.close();
      }
    });

    it(`${flavour}: the upstream's elicitation is answered by the gateway's caller (${v1 ? 'pushed on the session' : 'an input round'})`, async () => {
      const asked: string[] = [];
      const connection = await connect({
        onElicit: (params) => {
          asked.push(params.message);
          return { action: 'accept', content: { name: 'Ada' } };
        },
      });
      try {
        const result = await connection.client.callTool({
          name: 'everything_trigger-elicitation-request',
          arguments: {},
        });
        assert.equal(result.isError, undefined, textOf(result));
        assert.match(textOf(result), /Name: Ada/);
        assert.ok(asked.length >= 1 && asked.every((message) => /Please provide inputs/.test(message)), asked.join());
      } finally {
        await connection.close();
      }
    });

    it(`${flavour}: cancelling a mounted call cancels it upstream`, async () => {
      const connection = await connect();
      try {
        const controller = new AbortController();
        const started = nextEvent(upstreamEvents, 'started', 'the upstream never started the call');
        const cancelled = nextEvent(upstreamEvents, 'cancelled', 'the upstream never saw the cancellation');
        const call = callWith(v1, connection.client, { name: 'up_hang', arguments: {} }, { signal: controller.signal });
        await started;
        controller.abort();
        await assert.rejects(call);
        await cancelled;
      } finally {
        await connection.close();
      }
    });

    it(`${flavour}: excluded and guarded upstream tools cannot be called`, async () => {
      const connection = await connect();
      try {
        for (const name of ['everything_get-env', 'guarded_whoami', 'up_whoami']) {
          const outcome = await connection.client.callTool({ name, arguments: {} }).then(
            (result) => ({ isError: result.isError, text: textOf(result) }),
            (error: Error) => ({ isError: true, text: error.message }),
          );
          assert.equal(outcome.isError, true, `${name}: ${outcome.text}`);
          assert.doesNotMatch(outcome.text, /authorization|PATH=/i);
        }
      } finally {
        await connection.close();
      }
    });
  }

  it('by every entry path (2026-07-28, a 2025-11-25 session, a 2025-03-26 batch) excluded and guarded upstream tools are neither listed nor run', async () => {
    const paths = new PathClient(gw.url);
    upstreamSeen.authorizations.length = 0;
    for (const path of ENTRY_PATHS) {
      const listed = await paths.call(path, 'tools/list');
      const names = (listed.body.result.tools as Array<{ name: string }>).map((tool) => tool.name);
      assert.ok(
        names.includes('up_echo') && !names.includes('guarded_whoami') && !names.includes('everything_get-env'),
        `${path}: ${names.join()}`,
      );
      for (const name of ['guarded_whoami', 'everything_get-env', 'up_whoami']) {
        const answer = await paths.call(path, 'tools/call', { name, arguments: {} });
        const refused = answer.body.error !== undefined || answer.body.result?.isError === true;
        assert.ok(refused, `${path} ${name}: ${JSON.stringify(answer.body)}`);
        assert.doesNotMatch(JSON.stringify(answer.body), /PATH=|HOME=/);
      }
    }
    assert.deepEqual(upstreamSeen.authorizations, [], 'the upstream never ran whoami');
  });

  it("an upstream's tools/list_changed reaches the caller, and the new tool is mounted and callable", async () => {
    const connection = await connectSdkClient(gw.url);
    const changes = new Watched();
    let names: string[] = [];
    connection.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      names = (await connection.client.listTools()).tools.map((tool) => tool.name);
      changes.notify();
    });
    try {
      assert.match(
        textOf(await connection.client.callTool({ name: 'dyn_grow', arguments: { text: 'grown_a' } })),
        /grew grown_a/,
      );
      await changes.until(() => names.includes('dyn_grown_a'), "the gateway never listed the upstream's new tool");
      assert.match(textOf(await connection.client.callTool({ name: 'dyn_grown_a', arguments: {} })), /grown_a answers/);
    } finally {
      await connection.close();
    }
  });

  it('an upstream that is down gives a tool error naming it; the rest keeps working; it serves again when back', async () => {
    const connection = await connectSdkClient(gw.url);
    try {
      // The gateway holds a subscriptions/listen stream open on the upstream, which app.close() waits for.
      upstream.app.getHttpServer().closeAllConnections();
      await upstream.close();
      const down = await connection.client.callTool({ name: 'up_echo', arguments: { text: 'x' } });
      assert.equal(down.isError, true);
      assert.match(textOf(down), /upstream MCP server "upstream" could not run "echo"/);
      assert.match(
        textOf(await connection.client.callTool({ name: 'note', arguments: { text: 'still here' } })),
        /noted: still here/,
      );
      assert.match(
        textOf(await connection.client.callTool({ name: 'everything_echo', arguments: { message: 'also here' } })),
        /also here/,
      );
      upstream = await startApp(ClientUpstreamModule.register(), { port: upstreamPort });
      const back = await connection.client.callTool({ name: 'up_echo', arguments: { text: 'back' } });
      assert.deepEqual(back.structuredContent, { text: 'back' });
    } finally {
      await connection.close();
    }
  });

  it('a name that clashes after prefixing fails the bootstrap, naming it', async () => {
    await assert.rejects(
      startApp(gateway(upstream.url, [{ client: 'upstream', prefix: 'up_', include: ['echo'] }])),
      /tool "up_echo" of upstream "upstream" clashes/,
    );
  });
});

describe('gateway: server-everything mounted over Streamable HTTP', () => {
  let everything: EverythingHttp;
  let tap: WireTap;
  let gw: RunningApp;
  before(async () => {
    everything = await EverythingHttp.start();
    // The tap sits between the gateway and server-everything: it shows what reached the upstream.
    tap = await WireTap.start(everything.url);
    @Module({
      imports: [
        McpModule.forRoot({ name: 'gateway', version: '1.0.0' }),
        McpClientModule.forRoot({
          clients: [{ name: 'everything', transport: { type: 'http', url: tap.url }, retry: false }],
        }),
        McpMountModule.forRoot({
          mounts: [
            { client: 'everything', prefix: 'everything_', exclude: ['get-env'], resources: true, prompts: true },
          ],
        }),
      ],
      providers: [LocalTools],
    })
    class HttpGatewayModule {}
    gw = await startApp(HttpGatewayModule);
  });
  after(async () => {
    await gw?.close();
    await tap?.close();
    await everything?.stop();
  });

  for (const flavour of FLAVOURS) {
    const v1 = flavour.startsWith('sdk');

    it(`${flavour}: lists merge with the prefix; a call, a resource, a prompt and progress are forwarded`, async () => {
      const connection = await connectFor(v1, gw.url);
      try {
        const names = (await connection.client.listTools()).tools.map((tool) => tool.name);
        for (const name of ['note', 'everything_echo', 'everything_trigger-long-running-operation'])
          assert.ok(names.includes(name), `${name} in ${names.join()}`);
        for (const name of ['everything_get-env', 'echo'])
          assert.ok(!names.includes(name), `${name} must not be listed`);
        assert.match(
          textOf(await connection.client.callTool({ name: 'everything_echo', arguments: { message: 'over http' } })),
          /over http/,
        );
        const resource = (await connection.client.listResources()).resources[0]!;
        assert.equal((await connection.client.readResource({ uri: resource.uri })).contents[0]!.uri, resource.uri);
        const prompts = (await connection.client.listPrompts()).prompts.map((prompt) => prompt.name);
        assert.ok(prompts.includes('everything_args-prompt'), prompts.join());
        const prompt = await connection.client.getPrompt({
          name: 'everything_args-prompt',
          arguments: { city: 'Tromsø' },
        });
        assert.match(JSON.stringify(prompt.messages), /Tromsø/);
        const progress: number[] = [];
        await callWith(
          v1,
          connection.client,
          { name: 'everything_trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
          { onprogress: (p: { progress: number }) => progress.push(p.progress) },
        );
        assert.ok(progress.includes(1) && progress.includes(2), `progress ${progress.join()}`);
      } finally {
        await connection.close();
      }
    });

    it(`${flavour}: cancelling a mounted call sends notifications/cancelled to server-everything`, async () => {
      const connection = await connectFor(v1, gw.url);
      try {
        tap.clear();
        const controller = new AbortController();
        const started = new Watched();
        let progressed = false;
        const call = callWith(
          v1,
          connection.client,
          { name: 'everything_trigger-long-running-operation', arguments: { duration: 600, steps: 600 } },
          {
            signal: controller.signal,
            onprogress: () => {
              progressed = true;
              started.notify();
            },
          },
        );
        // The first progress notification proves the upstream is running the call.
        await started.until(() => progressed, 'server-everything never reported progress');
        controller.abort();
        await assert.rejects(call);
        await tap.arrived('notifications/cancelled', 'server-everything never received notifications/cancelled');
      } finally {
        await connection.close();
      }
    });
  }
});
