import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppModule } from '../../sample/04-resources-prompts/app.module.js';
import { ResourcesPagingModule } from '../fixtures/resources-paging.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernRpc } from '../utils/clients.js';

type Json = Record<string, any>;

/** The surface the three official clients share for resources, prompts and completion. */
interface AnyClient {
  listResources(params?: Json): Promise<Json>;
  listResourceTemplates(params?: Json): Promise<Json>;
  readResource(params: { uri: string }): Promise<Json>;
  listPrompts(params?: Json): Promise<Json>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<Json>;
  complete(params: Json): Promise<Json>;
  callTool(params: { name: string; arguments?: Json }): Promise<Json>;
  subscribeResource(params: { uri: string }): Promise<Json>;
  unsubscribeResource(params: { uri: string }): Promise<Json>;
}

interface Connection {
  client: AnyClient;
  close(): Promise<void>;
}

const clients: Array<{ label: string; modern: boolean; connect: (url: string) => Promise<Connection> }> = [
  {
    label: '@modelcontextprotocol/sdk 1.32 (2025-11-25)',
    modern: false,
    connect: (url) => connectSdkClient(url) as never,
  },
  {
    label: '@modelcontextprotocol/sdk 1.12 (2025-03-26)',
    modern: false,
    connect: (url) => connectSdkClient(url, { version: 'legacy' }) as never,
  },
  {
    label: '@modelcontextprotocol/client 2.4 pinned to 2026-07-28',
    modern: true,
    connect: (url) => connectModernClient(url) as never,
  },
];

/** What a client threw for a JSON-RPC error: each SDK keeps `code` (and `data`) on its error. */
async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: Json }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: number; message: string; data?: Json };
    assert.equal(typeof e.code, 'number', `expected a JSON-RPC error, got: ${e.message}`);
    return { code: e.code!, message: e.message, data: e.data };
  }
  assert.fail('expected the request to fail');
}

async function withClient(
  url: string,
  connect: (url: string) => Promise<Connection>,
  body: (client: AnyClient) => Promise<void>,
): Promise<void> {
  const connection = await connect(url);
  try {
    await body(connection.client);
  } finally {
    await connection.close();
  }
}

describe('sample 04-resources-prompts with the official clients', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(AppModule);
  });
  after(() => server.close());

  for (const { label, modern, connect } of clients) {
    describe(label, () => {
      it('lists resources and templates', async () => {
        await withClient(server.url, connect, async (client) => {
          const { resources } = await client.listResources();
          const index = resources.find((r: Json) => r.uri === 'notes://index');
          assert.deepEqual(
            { name: index.name, title: index.title, mimeType: index.mimeType, annotations: index.annotations },
            {
              name: 'notes_index',
              title: 'All notes',
              mimeType: 'application/json',
              annotations: { audience: ['assistant'], priority: 0.8 },
            },
          );
          const { resourceTemplates } = await client.listResourceTemplates();
          assert.deepEqual(
            resourceTemplates.map((t: Json) => t.uriTemplate),
            ['notes://{folder}/{id}', 'docs://{+path}'],
          );
        });
      });

      it('reads records, JSON and files, with the declared MIME types', async () => {
        await withClient(server.url, connect, async (client) => {
          const note = await client.readResource({ uri: 'notes://work/n1' });
          assert.equal(note.contents.length, 1);
          assert.equal(note.contents[0].uri, 'notes://work/n1');
          assert.equal(note.contents[0].mimeType, 'text/markdown');
          assert.match(note.contents[0].text, /^# Release checklist/);
          const index = await client.readResource({ uri: 'notes://index' });
          assert.equal(index.contents[0].mimeType, 'application/json');
          assert.ok(JSON.parse(index.contents[0].text).some((n: Json) => n.uri === 'notes://ideas/n3'));
          const doc = await client.readResource({ uri: 'docs://guides/getting-started.md' });
          assert.equal(doc.contents[0].mimeType, 'text/markdown');
          assert.match(doc.contents[0].text, /^# Getting started/);
          if (modern) {
            assert.equal(typeof note.ttlMs, 'number');
            assert.equal(note.cacheScope, 'public');
          }
        });
      });

      it(`answers an unknown resource with ${modern ? '-32602' : '-32002'} and data.uri`, async () => {
        await withClient(server.url, connect, async (client) => {
          for (const uri of ['notes://work/n999', 'nothing://here', 'docs://missing.md']) {
            const error = await rejection(client.readResource({ uri }));
            assert.equal(error.code, modern ? -32602 : -32002, uri);
            assert.deepEqual(error.data, { uri });
          }
          const invalid = await rejection(client.readResource({ uri: 'notes://attic/n1' }));
          assert.equal(invalid.code, -32602);
          assert.match(invalid.message, /folder: must be one of the following values: work, personal, ideas/);
          const traversal = await rejection(client.readResource({ uri: 'docs://guides/../../../package.json' }));
          assert.equal(traversal.code, -32602);
          assert.match(traversal.message, /contains a "\.\." segment/);
        });
      });

      it('lists prompts with DTO arguments and renders them from string arguments', async () => {
        await withClient(server.url, connect, async (client) => {
          const { prompts } = await client.listPrompts();
          const summarize = prompts.find((p: Json) => p.name === 'summarize_folder');
          assert.equal(summarize.title, 'Summarize a folder');
          assert.deepEqual(summarize.arguments, [
            { name: 'folder', description: 'Which folder to summarize.', required: true },
            { name: 'style', description: 'Bullet points or one paragraph.', required: false },
            { name: 'maxWords', description: 'Upper bound on the summary length, in words.', required: false },
          ]);
          const got = await client.getPrompt({
            name: 'summarize_folder',
            arguments: { folder: 'work', style: 'paragraph', maxWords: '40' },
          });
          assert.equal(got.description, 'Summarize every note of one folder.');
          assert.match(got.messages[0].content.text, /as one paragraph, in at most 40 words/);
          assert.equal(got.messages[1].content.type, 'resource');
          assert.equal(got.messages[1].content.resource.uri, 'notes://work/n1');
          const draft = await client.getPrompt({ name: 'draft_note', arguments: { topic: 'release' } });
          assert.deepEqual(draft.messages, [
            {
              role: 'user',
              content: { type: 'text', text: 'Draft a short note about "release". Start with a one-line title.' },
            },
          ]);
        });
      });

      it('answers unknown prompts and bad arguments with -32602', async () => {
        await withClient(server.url, connect, async (client) => {
          const unknown = await rejection(client.getPrompt({ name: 'nope' }));
          assert.equal(unknown.code, -32602);
          assert.match(unknown.message, /Unknown prompt "nope"/);
          const missing = await rejection(client.getPrompt({ name: 'summarize_folder', arguments: {} }));
          assert.equal(missing.code, -32602);
          assert.match(missing.message, /Missing required argument "folder"/);
          const invalid = await rejection(
            client.getPrompt({ name: 'summarize_folder', arguments: { folder: 'work', maxWords: 'lots' } }),
          );
          assert.equal(invalid.code, -32602);
          assert.match(invalid.message, /maxWords: /);
        });
      });

      it('completes enum arguments without code, and arguments and variables through @Complete', async () => {
        await withClient(server.url, connect, async (client) => {
          const folder = await client.complete({
            ref: { type: 'ref/prompt', name: 'summarize_folder' },
            argument: { name: 'folder', value: 'p' },
          });
          assert.deepEqual(folder.completion, { values: ['personal'], total: 1, hasMore: false });
          const style = await client.complete({
            ref: { type: 'ref/prompt', name: 'summarize_folder' },
            argument: { name: 'style', value: '' },
          });
          assert.deepEqual(style.completion.values, ['bullets', 'paragraph']);
          const topic = await client.complete({
            ref: { type: 'ref/prompt', name: 'draft_note' },
            argument: { name: 'topic', value: 'pr' },
          });
          assert.deepEqual(topic.completion.values, ['process']);
          const ids = await client.complete({
            ref: { type: 'ref/resource', uri: 'notes://{folder}/{id}' },
            argument: { name: 'id', value: 'n' },
            context: { arguments: { folder: 'work' } },
          });
          assert.deepEqual(ids.completion.values.slice(0, 2), ['n1', 'n2']);
          const folders = await client.complete({
            ref: { type: 'ref/resource', uri: 'notes://{folder}/{id}' },
            argument: { name: 'folder', value: '' },
          });
          assert.deepEqual(folders.completion.values, ['work', 'personal', 'ideas']);
          const unknown = await rejection(
            client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } }),
          );
          assert.equal(unknown.code, -32602);
        });
      });

      it('serves records added by a tool at once, and resources registered at runtime', async () => {
        await withClient(server.url, connect, async (client) => {
          const added = await client.callTool({
            name: 'add_note',
            arguments: { folder: 'ideas', title: `From ${label}`, body: 'Hello.' },
          });
          const { uri } = added.structuredContent;
          const read = await client.readResource({ uri });
          assert.match(read.contents[0].text, new RegExp(`^# From `));
          await client.callTool({ name: 'pin_note', arguments: { id: 'n3' } });
          const { resources } = await client.listResources();
          const pinned = resources.find((r: Json) => r.uri === 'pinned://n3');
          assert.equal(pinned.title, 'Pinned: Resource templates');
          assert.match((await client.readResource({ uri: 'pinned://n3' })).contents[0].text, /^# Resource templates/);
        });
      });

      if (!modern) {
        it('accepts resources/subscribe and resources/unsubscribe', async () => {
          await withClient(server.url, connect, async (client) => {
            assert.deepEqual(await client.subscribeResource({ uri: 'notes://index' }), {});
            assert.deepEqual(await client.unsubscribeResource({ uri: 'notes://index' }), {});
          });
        });
      }
    });
  }

  describe('2026-07-28 on the wire', () => {
    it('puts ttlMs and cacheScope on every cacheable result', async () => {
      for (const [method, params] of [
        ['tools/list', {}],
        ['prompts/list', {}],
        ['resources/list', {}],
        ['resources/templates/list', {}],
        ['resources/read', { uri: 'notes://index' }],
      ] as const) {
        const res = await modernRpc(server.url, method, params);
        assert.equal(res.status, 200, method);
        const result = (res.json as Json).result;
        assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, method);
        assert.ok(['public', 'private'].includes(result.cacheScope), method);
        assert.equal(result.resultType, 'complete', method);
      }
    });

    it('declares the capabilities in server/discover and refuses the legacy-only subscribe methods', async () => {
      const discover = (await modernRpc(server.url, 'server/discover')).json as Json;
      assert.deepEqual(discover.result.capabilities.resources, { subscribe: true, listChanged: true });
      assert.deepEqual(discover.result.capabilities.prompts, { listChanged: true });
      assert.deepEqual(discover.result.capabilities.completions, {});
      for (const method of ['resources/subscribe', 'resources/unsubscribe']) {
        const res = await modernRpc(server.url, method, { uri: 'notes://index' });
        assert.equal(res.status, 404, method);
        assert.equal((res.json as Json).error.code, -32601, method);
      }
    });

    it('never answers a missing resource with empty contents (sep-2164)', async () => {
      const uri = 'test://nonexistent-resource-for-conformance-testing';
      const res = await modernRpc(server.url, 'resources/read', { uri }, { id: 77 });
      const json = res.json as Json;
      assert.equal(json.id, 77);
      assert.equal(json.result, undefined);
      assert.equal(json.error.code, -32602);
      assert.deepEqual(json.error.data, { uri });
    });
  });
});

describe('paging (pageSize 1)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(ResourcesPagingModule);
  });
  after(() => server.close());

  it('lets the official clients walk every page', async () => {
    await withClient(server.url, clients[2]!.connect, async (client) => {
      // The 2026 client aggregates pages on its own when called without a cursor.
      assert.equal((await client.listPrompts()).prompts.length, 2);
      assert.equal((await client.listResourceTemplates()).resourceTemplates.length, 2);
    });
    await withClient(server.url, clients[0]!.connect, async (client) => {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listPrompts(cursor === undefined ? {} : { cursor });
        assert.equal(page.prompts.length, 1);
        names.push(page.prompts[0].name);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      assert.deepEqual(names, ['summarize_folder', 'draft_note']);
    });
  });

  it('pages tools/list in declaration order, accepts an empty cursor and refuses bad or expired ones', async () => {
    const first = ((await modernRpc(server.url, 'tools/list', { cursor: '' })).json as Json).result;
    assert.deepEqual(
      first.tools.map((t: Json) => t.name),
      ['add_note'],
    );
    assert.equal(typeof first.nextCursor, 'string');
    assert.equal(first.cacheScope, 'public');
    const second = ((await modernRpc(server.url, 'tools/list', { cursor: first.nextCursor })).json as Json).result;
    assert.deepEqual(
      second.tools.map((t: Json) => t.name),
      ['pin_note'],
    );
    assert.equal('nextCursor' in second, false);
    assert.equal(second.cacheScope, first.cacheScope);

    const bad = (await modernRpc(server.url, 'tools/list', { cursor: 'not-a-cursor' })).json as Json;
    assert.equal(bad.error.code, -32602);
    assert.match(bad.error.message, /Invalid cursor for tools\/list/);
    const foreign = (await modernRpc(server.url, 'prompts/list', { cursor: first.nextCursor })).json as Json;
    assert.equal(foreign.error.code, -32602);

    // A registry change (pin_note adds a resource) expires every cursor issued before it.
    const resources = ((await modernRpc(server.url, 'resources/list')).json as Json).result;
    await modernRpc(server.url, 'tools/call', { name: 'pin_note', arguments: { id: 'n1' } });
    const expired = (await modernRpc(server.url, 'tools/list', { cursor: first.nextCursor })).json as Json;
    assert.equal(expired.error.code, -32602);
    assert.match(expired.error.message, /Expired cursor for tools\/list/);
    const after = ((await modernRpc(server.url, 'resources/list')).json as Json).result;
    assert.equal(resources.nextCursor, undefined);
    assert.deepEqual(
      after.resources.map((r: Json) => r.uri),
      ['notes://index'],
    );
    const last = ((await modernRpc(server.url, 'resources/list', { cursor: after.nextCursor })).json as Json).result;
    assert.deepEqual(
      last.resources.map((r: Json) => r.uri),
      ['pinned://n1'],
    );
  });
});
