/**
 * MCP Apps views from the other two sources, an inline string and a provider method (`@AppView`,
 * run per read through the Nest pipeline, guards included), on both eras: the MIME profile and
 * `_meta.ui` on the listing and on the read contents, the extension declared, and a link to a
 * view nothing serves refused at bootstrap.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { AppView, McpApp, McpModule, Tool, appResult } from 'nestjs-model-context';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectSdkClient, modernRpc } from '../utils/clients.js';

@Injectable()
class StaffOnly implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return (
      context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-role'] === 'staff'
    );
  }
}

@Injectable()
class Views {
  renders = 0;

  @AppView({
    uri: 'ui://reports/chart',
    description: 'A chart of the report',
    csp: { resourceDomains: ['https://cdn.example.com'] },
    domain: 'reports.example.com',
  })
  @UseGuards(StaffOnly)
  chart() {
    this.renders++;
    return `<!DOCTYPE html><html><head></head><body><p>render ${this.renders}</p></body></html>`;
  }

  @Tool({ description: 'The report as a chart' })
  @McpApp({ resourceUri: 'ui://reports/chart' })
  report() {
    return appResult({ points: [1, 2, 3] }, 'Three points: 1, 2, 3.');
  }

  @Tool({ description: 'A greeting card' })
  @McpApp({
    view: { uri: 'ui://cards/hello', html: '<!DOCTYPE html><html><body>hello</body></html>', prefersBorder: false },
  })
  card() {
    return appResult({ to: 'you' }, 'Hello, you.');
  }
}

@Module({ imports: [McpModule.forRoot({ name: 'views-e2e', version: '1.0.0' })], providers: [StaffOnly, Views] })
class ViewsApp {}

type Read = {
  contents: Array<{ uri: string; mimeType: string; text: string; _meta?: { ui?: Record<string, unknown> } }>;
};

describe('MCP Apps views from a provider method and an inline string', () => {
  let server: RunningApp;

  before(async () => {
    server = await startApp(ViewsApp);
  });
  after(() => server.close());

  it('lists both views with the MIME profile and _meta.ui, and the tools with their links (2026-07-28)', async () => {
    const discover = (await modernRpc(server.url, 'server/discover')).json as {
      result: { capabilities: { extensions: Record<string, unknown> } };
    };
    assert.deepEqual(discover.result.capabilities.extensions['io.modelcontextprotocol/ui'], {
      mimeTypes: ['text/html;profile=mcp-app'],
    });
    const staff = { headers: { 'x-role': 'staff' } };
    const resources = (await modernRpc(server.url, 'resources/list', {}, staff)).json as {
      result: { resources: Array<{ uri: string; mimeType: string; _meta?: unknown }> };
    };
    assert.deepEqual(
      resources.result.resources.map((r) => [r.uri, r.mimeType, r._meta]),
      [
        [
          'ui://reports/chart',
          'text/html;profile=mcp-app',
          { ui: { csp: { resourceDomains: ['https://cdn.example.com'] }, domain: 'reports.example.com' } },
        ],
        ['ui://cards/hello', 'text/html;profile=mcp-app', { ui: { prefersBorder: false } }],
      ],
    );
    const anonymous = (await modernRpc(server.url, 'resources/list')).json as {
      result: { resources: Array<{ uri: string }> };
    };
    assert.deepEqual(
      anonymous.result.resources.map((r) => r.uri),
      ['ui://cards/hello'],
      'the guarded view is listed only to callers its guard admits',
    );
    const tools = (await modernRpc(server.url, 'tools/list')).json as {
      result: { tools: Array<{ name: string; _meta?: unknown }> };
    };
    assert.deepEqual(
      tools.result.tools.map((t) => [t.name, t._meta]),
      [
        ['report', { ui: { resourceUri: 'ui://reports/chart' } }],
        ['card', { ui: { resourceUri: 'ui://cards/hello' } }],
      ],
    );
  });

  it('renders a provider view per read, behind its guards, with _meta.ui on the contents', async () => {
    const uri = 'ui://reports/chart';
    const first = (await modernRpc(server.url, 'resources/read', { uri }, { headers: { 'x-role': 'staff' } })).json as {
      result: Read;
    };
    const second = (await modernRpc(server.url, 'resources/read', { uri }, { headers: { 'x-role': 'staff' } }))
      .json as { result: Read };
    const [a, b] = [first.result.contents[0]!, second.result.contents[0]!];
    assert.equal(a.mimeType, 'text/html;profile=mcp-app');
    assert.deepEqual(a._meta, {
      ui: { csp: { resourceDomains: ['https://cdn.example.com'] }, domain: 'reports.example.com' },
    });
    assert.notEqual(a.text, b.text, 'each read renders again');
    const refused = (await modernRpc(server.url, 'resources/read', { uri })).json as {
      error?: { code: number };
      result?: Read;
    };
    assert.ok(refused.error, `the guard refuses a caller without the role: ${JSON.stringify(refused)}`);
  });

  it('serves the inline view on the legacy era too (sdk 1.32.2)', async () => {
    const connection = await connectSdkClient(server.url);
    try {
      const extensions = (connection.client.getServerCapabilities() as { extensions?: Record<string, unknown> })
        .extensions;
      assert.ok(extensions?.['io.modelcontextprotocol/ui']);
      const read = (await connection.client.readResource({ uri: 'ui://cards/hello' })) as unknown as Read;
      assert.deepEqual(read.contents, [
        {
          uri: 'ui://cards/hello',
          mimeType: 'text/html;profile=mcp-app',
          text: '<!DOCTYPE html><html><body>hello</body></html>',
          _meta: { ui: { prefersBorder: false } },
        },
      ]);
      const result = (await connection.client.callTool({ name: 'card', arguments: {} })) as {
        content: Array<{ text: string }>;
        structuredContent: unknown;
      };
      assert.deepEqual([result.content[0]!.text, result.structuredContent], ['Hello, you.', { to: 'you' }]);
    } finally {
      await connection.close();
    }
  });

  it('refuses at bootstrap a tool linked to a view nothing serves, and a view URI outside ui://', async () => {
    @Injectable()
    class Dangling {
      @Tool({ description: 'x' })
      @McpApp({ resourceUri: 'ui://nowhere/view' })
      dangling() {
        return 'x';
      }
    }
    @Module({ imports: [McpModule.forRoot({ name: 'dangling', version: '1.0.0' })], providers: [Dangling] })
    class DanglingApp {}
    await assert.rejects(
      startApp(DanglingApp),
      /Dangling#dangling: @McpApp\(\) links to ui:\/\/nowhere\/view, which nothing serves/,
    );

    @Injectable()
    class WrongScheme {
      @AppView({ uri: 'https://example.com/view' })
      view() {
        return '<html></html>';
      }
    }
    @Module({ imports: [McpModule.forRoot({ name: 'wrong', version: '1.0.0' })], providers: [WrongScheme] })
    class WrongSchemeApp {}
    await assert.rejects(
      startApp(WrongSchemeApp),
      /invalid MCP Apps view URI "https:\/\/example\.com\/view": it must start with "ui:\/\/"/,
    );
  });
});
