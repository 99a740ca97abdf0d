/**
 * ISSUE-18 item 3: resource and prompt repositories. A repository over 100k generated documents
 * lists in pages it fetches itself (one page-sized fetch per list request, nothing materialised)
 * and reads any of them; templates and repositories coexist without overlap, and an overlap fails
 * the bootstrap naming both. Both eras, through the official clients.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Type } from '@nestjs/common';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  ClashingPrompt,
  DOCUMENTS,
  GeneratedDocs,
  OverlappingTemplate,
  OversizedRepository,
  PAGE_SIZE,
  PROMPTS,
  PromptLibrary,
  RepositoriesModule,
  SecuredRepositoriesModule,
  StaticDocs,
  VaultDocs,
  VaultGuard,
  WiderRepository,
} from '../fixtures/repositories.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernRpc, rpc } from '../utils/clients.js';
import { clearRedisPrefix, redisAvailable } from '../utils/redis.js';
import { Watched, watchGetStreams } from '../utils/wait.js';
import { AppModule as NotesApp } from '../../sample/04-resources-prompts/app.module.js';

type Json = Record<string, any>;

interface ListingClient {
  listResources(params?: Json): Promise<Json>;
  readResource(params: { uri: string }): Promise<Json>;
  listPrompts(params?: Json): Promise<Json>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<Json>;
}

interface Era {
  label: string;
  connect: (
    url: string,
    headers?: Record<string, string>,
  ) => Promise<{ client: ListingClient; close(): Promise<void> }>;
  /**
   * The params of a first page. The v2 client walks every page itself when no cursor is given,
   * so the modern era asks for the first page with the empty cursor (2026-07-28: "the first page").
   */
  first: Json | undefined;
}

const eras: Era[] = [
  {
    label: 'legacy era (sdk 1.32, 2025-11-25)',
    connect: (url, headers) => connectSdkClient(url, { headers }) as never,
    first: undefined,
  },
  {
    label: 'modern era (client 2.4, 2026-07-28)',
    connect: (url, headers) => connectModernClient(url, { headers }) as never,
    first: { cursor: '' },
  },
];

async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: number; message: string };
    assert.equal(typeof e.code, 'number', `expected a JSON-RPC error, got: ${e.message}`);
    return { code: e.code!, message: e.message };
  }
  assert.fail('the request succeeded');
}

/**
 * Connects a legacy client (its GET stream open) and a modern one (`subscriptions/listen`) to
 * `url`, runs `announce`, and waits until both received `notifications/resources/list_changed`.
 */
async function listChangedOnBothEras(url: string, announce: () => void): Promise<void> {
  const streams = watchGetStreams();
  const legacy = await connectSdkClient(url, { fetch: streams.fetch });
  const modern = await connectModernClient(url);
  try {
    let legacyChanges = 0;
    let modernChanges = 0;
    const changes = new Watched();
    legacy.client.setNotificationHandler(
      ResourceListChangedNotificationSchema,
      () => (legacyChanges++, changes.notify()),
    );
    modern.client.setNotificationHandler(
      'notifications/resources/list_changed',
      () => (modernChanges++, changes.notify()),
    );
    await streams.opened();
    const subscription = await modern.client.listen({ resourcesListChanged: true });
    try {
      announce();
      await changes.until(() => legacyChanges >= 1 && modernChanges >= 1, 'list_changed on both eras');
    } finally {
      await subscription.close();
    }
  } finally {
    await legacy.close();
    await modern.close();
  }
}

describe('resource and prompt repositories (issue 18 item 3)', () => {
  let server: RunningApp;
  let docs: GeneratedDocs;
  let library: PromptLibrary;
  before(async () => {
    server = await startApp(RepositoriesModule.register());
    docs = server.app.get(GeneratedDocs);
    library = server.app.get(PromptLibrary);
  });
  after(() => server.close());

  for (const era of eras) {
    describe(era.label, () => {
      it('lists the static resources first, then pages into the repository, one page-sized fetch per request', async () => {
        const conn = await era.connect(server.url);
        try {
          docs.fetches.length = 0;
          const first = await conn.client.listResources(era.first);
          assert.deepEqual(
            first.resources.map((r: Json) => r.uri),
            ['static://readme', 'static://license'],
          );
          assert.equal(docs.fetches.length, 0, 'the static page asks no repository');
          assert.equal(typeof first.nextCursor, 'string');
          let cursor: string | undefined = first.nextCursor;
          const pages = 20;
          const seen: string[] = [];
          for (let page = 0; page < pages; page++) {
            const result = await conn.client.listResources({ cursor });
            assert.equal(result.resources.length, PAGE_SIZE);
            seen.push(...result.resources.map((r: Json) => r.uri));
            assert.equal(result.resources[0].mimeType, 'text/plain', 'the repository mimeType fills in');
            cursor = result.nextCursor;
            assert.equal(typeof cursor, 'string');
          }
          assert.equal(docs.fetches.length, pages, 'one repository fetch per list request');
          assert.ok(
            docs.fetches.every((f) => f.limit === PAGE_SIZE && f.generated <= PAGE_SIZE),
            JSON.stringify(docs.fetches.slice(0, 3)),
          );
          assert.deepEqual(seen.slice(0, 2), ['gen://docs/0', 'gen://docs/1']);
          assert.equal(seen.at(-1), `gen://docs/${pages * PAGE_SIZE - 1}`);
          assert.equal(new Set(seen).size, pages * PAGE_SIZE);
        } finally {
          await conn.close();
        }
      });

      it('reads documents from the start, the middle and the end, and answers an unknown one as the spec says', async () => {
        const conn = await era.connect(server.url);
        try {
          for (const id of [0, 50_000, DOCUMENTS - 1]) {
            const read = await conn.client.readResource({ uri: `gen://docs/${id}` });
            assert.deepEqual(read.contents, [
              { uri: `gen://docs/${id}`, mimeType: 'text/plain', text: `Document ${id}` },
            ]);
          }
          const missing = await rejection(conn.client.readResource({ uri: `gen://docs/${DOCUMENTS}` }));
          const unknown = await rejection(conn.client.readResource({ uri: 'nowhere://at/all' }));
          assert.equal(missing.code, unknown.code);
          assert.match(missing.message, /Resource not found/);
          // The template beside the repository still serves its own URIs.
          const top = await conn.client.readResource({ uri: 'gen://anything' });
          assert.equal(top.contents[0].text, 'top');
        } finally {
          await conn.close();
        }
      });

      it('hides a guarded repository from a caller without rights and refuses its reads, and shows it to one with them', async () => {
        const vault = await startApp(RepositoriesModule.register({ providers: [StaticDocs, VaultDocs, VaultGuard] }));
        const outsider = await era.connect(vault.url);
        const insider = await era.connect(vault.url, { 'x-vault': 'open' });
        try {
          const listAll = async (conn: { client: ListingClient }): Promise<string[]> => {
            const uris: string[] = [];
            let cursor: string | undefined;
            do {
              const result = await conn.client.listResources(cursor ? { cursor } : era.first);
              uris.push(...result.resources.map((r: Json) => r.uri));
              cursor = result.nextCursor;
            } while (cursor);
            return uris;
          };
          assert.deepEqual(await listAll(outsider), ['static://readme', 'static://license']);
          assert.deepEqual(await listAll(insider), ['static://readme', 'static://license', 'secret://vault/plans']);
          const refused = await rejection(outsider.client.readResource({ uri: 'secret://vault/plans' }));
          assert.match(refused.message, /Forbidden/);
          const granted = await insider.client.readResource({ uri: 'secret://vault/plans' });
          assert.equal(granted.contents[0].text, 'The plans.');
        } finally {
          await outsider.close();
          await insider.close();
          await vault.close();
        }
      });

      it('lists a prompt repository after the declared prompts and gets its prompts', async () => {
        const conn = await era.connect(server.url);
        try {
          library.fetches.length = 0;
          const names: string[] = [];
          let cursor: string | undefined;
          let requests = 0;
          do {
            const result = await conn.client.listPrompts(cursor ? { cursor } : era.first);
            names.push(...result.prompts.map((p: Json) => p.name));
            cursor = result.nextCursor;
            requests++;
          } while (cursor);
          assert.equal(names[0], 'welcome');
          assert.equal(names.length, 1 + PROMPTS);
          assert.equal(names.at(-1), `lib_${PROMPTS - 1}`);
          assert.equal(
            library.fetches.length,
            requests - 1,
            'one repository fetch per request after the declared page',
          );
          const got = await conn.client.getPrompt({ name: 'lib_42', arguments: { topic: 'paging' } });
          assert.equal(got.messages[0].content.text, 'Library prompt 42 about paging.');
          const unknown = await rejection(conn.client.getPrompt({ name: `lib_${PROMPTS}` }));
          const other = await rejection(conn.client.getPrompt({ name: 'no_such_prompt' }));
          assert.equal(unknown.code, other.code);
          assert.match(unknown.message, /Unknown prompt/);
        } finally {
          await conn.close();
        }
      });
    });
  }

  it('walks all 100,000 documents on the modern era, fetching each page once and never more than a page', async () => {
    const conn = await connectModernClient(server.url);
    try {
      docs.fetches.length = 0;
      let cursor: string | undefined;
      let count = 0;
      let requests = 0;
      let last = '';
      do {
        const result: Json = await conn.client.listResources({ cursor: cursor ?? '' });
        for (const resource of result.resources)
          if (resource.uri.startsWith('gen://docs/')) (count++, (last = resource.uri));
        cursor = result.nextCursor;
        requests++;
      } while (cursor);
      assert.equal(count, DOCUMENTS);
      assert.equal(last, `gen://docs/${DOCUMENTS - 1}`);
      // One static page, then DOCUMENTS / PAGE_SIZE repository pages (the guarded vault is hidden).
      assert.equal(requests, 1 + DOCUMENTS / PAGE_SIZE);
      assert.equal(docs.fetches.length, DOCUMENTS / PAGE_SIZE);
      assert.equal(Math.max(...docs.fetches.map((f) => f.generated)), PAGE_SIZE);
    } finally {
      await conn.close();
    }
  });

  it('refuses a tampered cursor, a cursor of another list and an over-long one with -32602', async () => {
    const first = (await modernRpc(server.url, 'resources/list', {})).json as Json;
    const intoRepository = (await modernRpc(server.url, 'resources/list', { cursor: first.result.nextCursor }))
      .json as Json;
    const cursor: string = intoRepository.result.nextCursor;
    const [body, signature] = cursor.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), c: '99999' }),
    ).toString('base64url');
    const prompts = (await modernRpc(server.url, 'prompts/list', {})).json as Json;
    for (const [what, bad, method] of [
      ['forged inner cursor', `${forged}.${signature}`, 'resources/list'],
      [
        'flipped signature',
        `${body}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`,
        'resources/list',
      ],
      ['a prompts cursor on resources/list', prompts.result.nextCursor, 'resources/list'],
      ['a resources cursor on prompts/list', cursor, 'prompts/list'],
      ['over-long', `${'A'.repeat(20_000)}.x`, 'resources/list'],
    ] as const) {
      const answer = (await modernRpc(server.url, method, { cursor: bad })).json as Json;
      assert.equal(answer.error?.code, -32602, `${what}: ${JSON.stringify(answer).slice(0, 300)}`);
      assert.match(answer.error.message, /Invalid cursor/);
    }
    // The legacy era refuses it alike.
    const conn = await connectSdkClient(server.url);
    try {
      const refused = await rejection(conn.client.listResources({ cursor: `${forged}.${signature}` }));
      assert.equal(refused.code, -32602);
    } finally {
      await conn.close();
    }
    assert.ok(
      docs.fetches.every((f) => f.cursor !== '99999'),
      'a forged cursor never reaches the repository',
    );
  });

  it('carries list_changed announced by the repository to clients of both eras', async () => {
    try {
      await listChangedOnBothEras(server.url, () => docs.grow(10));
      const modern = await connectModernClient(server.url);
      try {
        const read = (await modern.client.readResource({ uri: `gen://docs/${DOCUMENTS + 5}` })) as Json;
        assert.equal(read.contents[0].text, `Document ${DOCUMENTS + 5}`);
      } finally {
        await modern.close();
      }
    } finally {
      docs.total = DOCUMENTS;
    }
  });

  it('sends resources/updated for a repository URI to a legacy subscriber', async () => {
    const streams = watchGetStreams();
    const conn = await connectSdkClient(server.url, { fetch: streams.fetch });
    try {
      const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
      const updated: string[] = [];
      const changes = new Watched();
      conn.client.setNotificationHandler(
        ResourceUpdatedNotificationSchema,
        (n) => (updated.push(n.params.uri), changes.notify()),
      );
      await streams.opened();
      await conn.client.subscribeResource({ uri: 'gen://docs/7' });
      server.app.get((await import('nestjs-model-context')).McpRegistry).notifyResourceUpdated('gen://docs/7');
      await changes.until(() => updated.length >= 1, 'resources/updated for the repository URI');
      assert.deepEqual(updated, ['gen://docs/7']);
    } finally {
      await conn.close();
    }
  });

  it('answers a raw legacy list into the repository with cursors that work across requests', async () => {
    const init = await rpc(server.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const sessionId = init.headers.get('mcp-session-id')!;
    const first = (
      await rpc(server.url, { jsonrpc: '2.0', id: 2, method: 'resources/list', params: {} }, { sessionId })
    ).json as Json;
    const second = (
      await rpc(
        server.url,
        { jsonrpc: '2.0', id: 3, method: 'resources/list', params: { cursor: first.result.nextCursor } },
        { sessionId },
      )
    ).json as Json;
    assert.equal(second.result.resources[0].uri, 'gen://docs/0');
  });
});

describe('repositories and templates coexist without overlap (issue 18 item 3)', () => {
  const boot = async (providers: Type<unknown>[]): Promise<string> => {
    try {
      const app = await startApp(RepositoriesModule.register({ providers }));
      await app.close();
    } catch (error) {
      return (error as Error).message;
    }
    assert.fail('the bootstrap succeeded');
  };

  it('fails the bootstrap when a template reaches under a repository prefix, naming both', async () => {
    const message = await boot([GeneratedDocs, OverlappingTemplate]);
    assert.match(message, /"gen:\/\/docs\/\{\+path\}"/);
    assert.match(message, /OverlappingTemplate#doc/);
    assert.match(message, /GeneratedDocs/);
    assert.match(message, /"gen:\/\/docs\/"/);
    assert.match(message, /literal prefix outside/);
  });

  it('fails the bootstrap when two repository prefixes overlap, naming both', async () => {
    const message = await boot([GeneratedDocs, WiderRepository]);
    assert.match(
      message,
      /"gen:\/\/docs\/" \(repository "GeneratedDocs"\) overlaps prefix "gen:\/\/" \(repository "WiderRepository"\)/,
    );
    assert.match(message, /disjoint prefixes/);
  });

  it('fails the bootstrap when a declared prompt sits under a prompt repository prefix', async () => {
    const message = await boot([PromptLibrary, ClashingPrompt]);
    assert.match(message, /Prompt "lib_special".*"lib_".*PromptLibrary/);
  });

  it('boots a template beside a repository when the template cannot reach under the prefix', async () => {
    const app = await startApp(
      RepositoriesModule.register({ providers: [StaticDocs, GeneratedDocs, VaultDocs, VaultGuard] }),
    );
    await app.close();
  });
});

const skip = (await redisAvailable()) ? false : 'no Redis at 127.0.0.1:6379';

describe('repositories across instances sharing Redis (issue 18 item 3)', { skip }, () => {
  const prefix = `mcp-e2e-repositories:${randomBytes(6).toString('hex')}:`;
  let a: RunningApp;
  let b: RunningApp;
  before(async () => {
    a = await startApp(RepositoriesModule.register({ redisPrefix: prefix }));
    b = await startApp(RepositoriesModule.register({ redisPrefix: prefix }));
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await clearRedisPrefix(prefix);
  });

  it('a cursor into the repository issued by A pages on at B', async () => {
    const first = (await modernRpc(a.url, 'resources/list', {})).json as Json;
    const onA = (await modernRpc(a.url, 'resources/list', { cursor: first.result.nextCursor })).json as Json;
    const onB = (await modernRpc(b.url, 'resources/list', { cursor: onA.result.nextCursor })).json as Json;
    assert.equal(onB.result?.resources[0].uri, `gen://docs/${PAGE_SIZE}`, JSON.stringify(onB).slice(0, 300));
  });

  it('list_changed announced by the repository on A reaches clients of both eras on B', async () => {
    await listChangedOnBothEras(b.url, () => a.app.get(GeneratedDocs).grow(1));
  });
});

describe('sample 04: the notes archive repository', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(NotesApp);
  });
  after(() => server.close());

  it('lists the archive after the fixed resources and reads its last note', async () => {
    const conn = await connectSdkClient(server.url);
    try {
      const first = await conn.client.listResources();
      assert.ok(first.resources.some((r) => r.uri === 'notes://index'));
      assert.ok(!first.resources.some((r) => r.uri.startsWith('archive://')));
      const archive = await conn.client.listResources({ cursor: first.nextCursor });
      assert.equal(archive.resources[0].uri, 'archive://notes/0');
      assert.equal(archive.resources.length, 100);
      const read = await conn.client.readResource({ uri: 'archive://notes/999' });
      assert.match(String((read.contents[0] as Json).text), /^# Archived note 999/);
    } finally {
      await conn.close();
    }
  });
});

describe('a repository behind OAuth: scopes, caller-bound cursors, interceptors and filters (issue 18 item 3)', () => {
  let server: RunningApp;
  const as = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });
  before(async () => {
    server = await startApp(SecuredRepositoriesModule.register());
  });
  after(() => server.close());

  const listAll = async (token: string): Promise<string[]> => {
    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const answer = (await modernRpc(server.url, 'resources/list', cursor ? { cursor } : {}, as(token))).json as Json;
      assert.ok(answer.result, JSON.stringify(answer));
      uris.push(...answer.result.resources.map((r: Json) => r.uri));
      cursor = answer.result.nextCursor;
    } while (cursor);
    return uris;
  };

  it('leaves the repository out of the list of a caller without its scope, and answers its reads with 403', async () => {
    assert.deepEqual(await listAll('bob'), ['static://readme', 'static://license']);
    const read = await modernRpc(server.url, 'resources/read', { uri: 'ledger://entries/1' }, as('bob'));
    assert.equal(read.status, 403);
    assert.match(read.headers.get('www-authenticate') ?? '', /insufficient_scope/);
  });

  it('lists and reads it for a caller with the scope, through its interceptor and filter, with private pages', async () => {
    const uris = await listAll('alice');
    assert.deepEqual(uris.slice(2), [
      'ledger://entries/0',
      'ledger://entries/1',
      'ledger://entries/2',
      'ledger://entries/3',
      'ledger://entries/4',
    ]);
    const first = (await modernRpc(server.url, 'resources/list', {}, as('alice'))).json as Json;
    const page = (await modernRpc(server.url, 'resources/list', { cursor: first.result.nextCursor }, as('alice')))
      .json as Json;
    assert.equal(page.result.cacheScope, 'private');
    const read = (await modernRpc(server.url, 'resources/read', { uri: 'ledger://entries/3' }, as('alice')))
      .json as Json;
    assert.equal(read.result.contents[0].text, 'Entry 3 [stamped]');
    const locked = (await modernRpc(server.url, 'resources/read', { uri: 'ledger://entries/locked' }, as('alice')))
      .json as Json;
    assert.equal(locked.result?.contents[0].text, 'Entry locked.', JSON.stringify(locked));
  });

  it('refuses a cursor issued to another caller with -32602, though that caller may list the repository', async () => {
    const first = (await modernRpc(server.url, 'resources/list', {}, as('alice'))).json as Json;
    const alices = (await modernRpc(server.url, 'resources/list', { cursor: first.result.nextCursor }, as('alice')))
      .json as Json;
    const stolen = (await modernRpc(server.url, 'resources/list', { cursor: alices.result.nextCursor }, as('carol')))
      .json as Json;
    assert.equal(stolen.error?.code, -32602, JSON.stringify(stolen));
    assert.match(stolen.error.message, /Invalid cursor/);
    const own = (await modernRpc(server.url, 'resources/list', { cursor: alices.result.nextCursor }, as('alice')))
      .json as Json;
    assert.equal(own.result.resources[0].uri, 'ledger://entries/2');
  });
});

describe('the bounds of repository pages (issue 18 item 3)', () => {
  const logged: string[] = [];
  const logger = {
    log() {},
    warn() {},
    debug() {},
    verbose() {},
    error: (message: unknown) => void logged.push(String(message)),
  };
  let server: RunningApp;
  before(async () => {
    server = await startApp(
      RepositoriesModule.register({
        providers: [OversizedRepository],
        pageSize: 3,
        limits: { repositoryPageItems: 5, repositoryCursorLength: 16 },
      }),
      { logger },
    );
  });
  after(() => server.close());

  it('answers a page within limits.repositoryPageItems, and refuses a larger one with -32603 naming the limit in the log', async () => {
    OversizedRepository.items = 5;
    OversizedRepository.cursor = 'short';
    const ok = (await modernRpc(server.url, 'resources/list', {})).json as Json;
    assert.equal(ok.result?.resources.length, 5, JSON.stringify(ok));
    OversizedRepository.items = 6;
    const refused = (await modernRpc(server.url, 'resources/list', {})).json as Json;
    assert.equal(refused.error?.code, -32603, JSON.stringify(refused));
    assert.ok(
      logged.some((m) =>
        /OversizedRepository \("big:\/\/items\/"\).*6 items; the limit is 5 \(limits\.repositoryPageItems\)/.test(m),
      ),
      logged.join('\n'),
    );
  });

  it('refuses an own cursor over limits.repositoryCursorLength, and client cursors too long to be one before any work', async () => {
    OversizedRepository.items = 1;
    OversizedRepository.cursor = 'x'.repeat(17);
    const refused = (await modernRpc(server.url, 'resources/list', {})).json as Json;
    assert.equal(refused.error?.code, -32603, JSON.stringify(refused));
    assert.ok(
      logged.some((m) => /17 characters long; the limit is 16 \(limits\.repositoryCursorLength\)/.test(m)),
      logged.join('\n'),
    );
    const long = (await modernRpc(server.url, 'resources/list', { cursor: `${'A'.repeat(400)}.x` })).json as Json;
    assert.equal(long.error?.code, -32602);
  });
});
