/**
 * MCP Apps under attack (issue 26, item 7), from the side of a client that does not render
 * views: an app-only tool (`visibility: ["app"]`) is unknown to it on every path, exactly as a
 * name nothing serves (tools/list, tools/call with any arguments, as a task of either era, a
 * 2025-03-26 batch, the Mcp-Param header rule), and calling it spends nothing and runs nothing.
 * Support means `text/html;profile=mcp-app` in the extension's `mimeTypes` (REQUIRED by the
 * extension): a bare `io.modelcontextprotocol/ui: {}`, as Mastra 2.0 sends, is no support.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { IsString } from 'class-validator';
import { Args, McpApp, McpHeader, McpModule, Tool } from 'nestjs-model-context';
import { TASKS_EXTENSION } from 'nestjs-model-context/tasks';
import { UI_EXTENSION, UI_MIME_TYPE } from 'nestjs-model-context/protocol';
import { startApp, type RunningApp } from '../utils/app.js';
import { META_KEYS, modernRpc } from '../utils/clients.js';
import { LegacyCaller, type RpcAnswer } from '../utils/legacy-session.js';

const BOARD = 'ui://security/board';

class ShipDto {
  @McpHeader('Region')
  @IsString()
  region!: string;

  @IsString()
  id!: string;
}

/** What the app-only tool did: every call that reached it. */
@Injectable()
class Shipments {
  readonly shipped: string[] = [];
}

@Injectable()
class BoardTools {
  constructor(private readonly shipments: Shipments) {}

  @Tool({ name: 'board', description: 'Shows the board; hosts with MCP Apps render its view.' })
  @McpApp({ view: { uri: BOARD, title: 'Board', html: '<!doctype html><title>Board</title>' } })
  board(): string {
    return `${this.shipments.shipped.length} shipped`;
  }

  @Tool({ name: 'ship', description: 'Ships an order; called by the board view only.', task: 'optional' })
  @McpApp({ resourceUri: BOARD, visibility: ['app'] })
  ship(@Args() { id }: ShipDto): string {
    this.shipments.shipped.push(id);
    return `shipped ${id}`;
  }
}

@Module({})
class AppsSecurityModule {
  static register(guardAwareLists?: boolean): DynamicModule {
    return {
      module: AppsSecurityModule,
      imports: [
        McpModule.forRoot({ name: 'apps-security', version: '1.0.0', sessions: { mode: 'stateful' }, guardAwareLists }),
      ],
      providers: [Shipments, BoardTools],
    };
  }
}

/** Client capabilities that declare no MCP Apps support, however they mention the extension. */
const NOT_APPS: Record<string, Record<string, unknown>> = {
  'no extension': {},
  'a bare io.modelcontextprotocol/ui (Mastra 2.0)': { extensions: { [UI_EXTENSION]: {} } },
  'mimeTypes without the MCP App profile': { extensions: { [UI_EXTENSION]: { mimeTypes: ['text/html'] } } },
  'mimeTypes as a string, not a list': { extensions: { [UI_EXTENSION]: { mimeTypes: UI_MIME_TYPE } } },
};
const APPS = { extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] } } };

/** One era's calls for a client with these capabilities (2026-07-28 also declares tasks). */
interface EraClient {
  call(method: string, params: Record<string, unknown>, headers?: Record<string, string>): Promise<RpcAnswer>;
  /** The params that make tools/call a task on this era. */
  task: Record<string, unknown>;
}

const eras: Array<{
  era: string;
  connect: (url: string, capabilities: Record<string, unknown>) => Promise<EraClient>;
}> = [
  {
    era: '2025-11-25',
    connect: async (url, capabilities) => {
      const session = await LegacyCaller.open(url, { capabilities });
      return { call: (method, params) => session.call(method, params), task: { task: {} } };
    },
  },
  {
    era: '2026-07-28',
    connect: async (url, capabilities) => {
      const extensions = { ...(capabilities.extensions as Record<string, unknown> | undefined), [TASKS_EXTENSION]: {} };
      const meta = { [META_KEYS.clientCapabilities]: { ...capabilities, extensions } };
      return {
        call: async (method, params, headers = {}) =>
          (await modernRpc(url, method, { ...params, _meta: meta }, { headers })).json as RpcAnswer,
        task: {},
      };
    },
  },
];

/** An error with the tool's name taken out, to compare with the error of a name nothing serves. */
const anonymized = (answer: RpcAnswer, name: string) =>
  JSON.parse(JSON.stringify(answer.error ?? answer.result ?? null).replaceAll(name, '<name>')) as unknown;
const names = (answer: RpcAnswer) => (answer.result?.tools as Array<{ name: string }>).map((tool) => tool.name);

describe('MCP Apps: an app-only tool and clients without MCP Apps (item 7)', () => {
  let server: RunningApp;
  let shipments: Shipments;
  before(async () => {
    server = await startApp(AppsSecurityModule.register());
    shipments = server.app.get(Shipments);
  });
  after(() => server?.close());

  for (const { era, connect } of eras) {
    for (const [kind, capabilities] of Object.entries(NOT_APPS)) {
      it(`${era}, ${kind}: unknown on every path, exactly as a name nothing serves, and nothing runs or is spent`, async () => {
        const client = await connect(server.url, capabilities);
        assert.deepEqual(names(await client.call('tools/list', {})), ['board']);
        const region = { 'Mcp-Param-Region': 'eu' };
        const attempts: Array<Record<string, unknown>> = [
          { arguments: { region: 'eu', id: 'A-1' } },
          { arguments: [] },
          { arguments: 'A-1' },
          { arguments: { region: 'eu' } },
          { arguments: { region: 'eu', id: 'A-1' }, ...client.task },
          { arguments: [], ...client.task },
        ];
        for (const attempt of attempts) {
          const app = await client.call('tools/call', { name: 'ship', ...attempt }, region);
          const none = await client.call('tools/call', { name: 'no_such_tool', ...attempt }, region);
          assert.equal(app.error?.code, -32602, `${JSON.stringify(attempt)}: ${JSON.stringify(app)}`);
          assert.deepEqual(anonymized(app, 'ship'), anonymized(none, 'no_such_tool'), JSON.stringify(attempt));
        }
        assert.ok(!shipments.shipped.includes('A-1'), 'the tool never ran');
        if (era === '2025-11-25')
          assert.deepEqual(
            (await client.call('tasks/list', {})).result?.tasks,
            [],
            'no task was created, no quota spent',
          );
      });
    }

    it(`${era}, with MCP Apps declared: the app-only tool is listed and callable, as a task too`, async () => {
      const client = await connect(server.url, APPS);
      assert.deepEqual(names(await client.call('tools/list', {})), ['board', 'ship']);
      const direct = await client.call(
        'tools/call',
        { name: 'ship', arguments: { region: 'eu', id: `${era}-direct` } },
        { 'Mcp-Param-Region': 'eu' },
      );
      assert.equal(direct.result?.isError, undefined, JSON.stringify(direct));
      const asTask = await client.call(
        'tools/call',
        { name: 'ship', arguments: { region: 'eu', id: `${era}-task` }, ...client.task },
        { 'Mcp-Param-Region': 'eu' },
      );
      assert.ok(asTask.result, JSON.stringify(asTask));
    });
  }

  it('2026-07-28: the Mcp-Param header rule tells a client without MCP Apps nothing; a client with them gets the mismatch', async () => {
    const without = await eras[1]!.connect(server.url, NOT_APPS['a bare io.modelcontextprotocol/ui (Mastra 2.0)']!);
    const wrong = { 'Mcp-Param-Region': 'us' };
    const hidden = await without.call('tools/call', { name: 'ship', arguments: { region: 'eu', id: 'H-1' } }, wrong);
    assert.equal(hidden.error?.code, -32602);
    assert.match(hidden.error!.message, /Unknown tool "ship"/);
    const withApps = await eras[1]!.connect(server.url, APPS);
    const mismatch = await withApps.call('tools/call', { name: 'ship', arguments: { region: 'eu', id: 'H-2' } }, wrong);
    assert.match(mismatch.error?.message ?? '', /Mcp-Param-Region/);
    assert.ok(!shipments.shipped.includes('H-1') && !shipments.shipped.includes('H-2'));
  });

  it('a 2025-03-26 batch meets the same wall: the app-only call inside it is an unknown tool', async () => {
    const old = await LegacyCaller.open(server.url, {
      protocolVersion: '2025-03-26',
      capabilities: NOT_APPS['a bare io.modelcontextprotocol/ui (Mastra 2.0)'],
    });
    const [listed, shipped, board] = await old.batch([
      { method: 'tools/list' },
      { method: 'tools/call', params: { name: 'ship', arguments: { region: 'eu', id: 'B-1' } } },
      { method: 'tools/call', params: { name: 'board', arguments: {} } },
    ]);
    assert.deepEqual(names(listed!), ['board']);
    assert.equal(shipped!.error?.code, -32602);
    assert.match(shipped!.error!.message, /Unknown tool "ship"/);
    assert.equal(board!.result?.isError, undefined);
    assert.ok(!shipments.shipped.includes('B-1'));
  });
});

describe('MCP Apps with guardAwareLists: false', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(AppsSecurityModule.register(false));
  });
  after(() => server?.close());

  it('the app-only tool stays out of the list of a client without MCP Apps: visibility is no guard to turn off', async () => {
    for (const { era, connect } of eras) {
      assert.deepEqual(names(await (await connect(server.url, {})).call('tools/list', {})), ['board'], era);
      assert.deepEqual(names(await (await connect(server.url, APPS)).call('tools/list', {})), ['board', 'ship'], era);
    }
  });
});
