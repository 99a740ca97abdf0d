/**
 * Resource and prompt repositories from the attacker's side. A signed cursor reaches a
 * repository's code only from the caller it was issued to: another principal, another anonymous
 * session, another list, another McpModule sharing the secret, a tampered, huge or non-string
 * cursor all get -32602 before any `list()` runs. A URI under a repository's prefix reaches
 * `read()` only when it names something under the prefix: dot segments (plain, encoded, with
 * backslashes) are refused, so a sibling repository's guard cannot be walked around. A prompt
 * repository gets string arguments only. Errors of a repository leak nothing.
 */
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  Injectable,
  Module,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
} from '@nestjs/common';
import {
  McpExecutionContext,
  McpModule,
  PromptRepository,
  ResourceRepository,
  type McpPromptPage,
  type McpPromptRepository,
  type McpRepositoryPageRequest,
  type McpResourcePage,
  type McpResourceRepository,
} from 'nestjs-model-context';
import {
  GeneratedDocs,
  PromptLibrary,
  RepositoriesModule,
  StaticDocs,
  VaultDocs,
  VaultGuard,
} from '../fixtures/repositories.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc, rpc } from '../utils/clients.js';
import { ENTRY_PATHS, PathClient, openSession } from '../utils/paths.js';

type Json = Record<string, any>;
const VERSION = '2025-11-25';
const SECRET = 'postgres://kb:REPO-SECRET@db';

/** The first cursor that points into the repository (past the static resources), for this caller. */
async function repositoryCursor(
  paths: PathClient,
  path: 'modern' | 'legacy' | 'batch',
  method: string,
  headers: Record<string, string> = {},
): Promise<string> {
  let cursor: string | undefined;
  for (let page = 0; page < 5; page++) {
    const answer = await paths.call(path, method, cursor === undefined ? {} : { cursor }, headers);
    cursor = answer.body.result?.nextCursor;
    assert.ok(cursor, JSON.stringify(answer.body));
    if (cursor.includes('.')) return cursor;
  }
  assert.fail('no repository cursor');
}

describe('security: repository cursors', () => {
  let server: RunningApp;
  let docs: GeneratedDocs;
  let library: PromptLibrary;

  before(async () => {
    server = await startApp(RepositoriesModule.register({ pageSize: 2 }));
    docs = server.app.get(GeneratedDocs);
    library = server.app.get(PromptLibrary);
  });
  after(() => server.close());

  it('a cursor of one anonymous 2025-11-25 session reaches no repository from another session, nor from the 2026-07-28 era', async () => {
    const one = new PathClient(server.url);
    const cursor = await repositoryCursor(one, 'legacy', 'resources/list', { 'x-client': 'one' });
    const own = await one.call('legacy', 'resources/list', { cursor }, { 'x-client': 'one' });
    assert.ok(own.body.result, 'the session that got it pages on');
    docs.fetches.length = 0;
    const other = await new PathClient(server.url).call('legacy', 'resources/list', { cursor }, { 'x-client': 'two' });
    assert.equal(other.body.error?.code, -32602, JSON.stringify(other.body).slice(0, 300));
    const modern = await one.call('modern', 'resources/list', { cursor });
    assert.equal(modern.body.error?.code, -32602, JSON.stringify(modern.body).slice(0, 300));
    assert.deepEqual(docs.fetches, [], 'the repository never saw the replayed cursor');
  });

  for (const path of ENTRY_PATHS) {
    it(`${path}: a cursor of another list, a tampered, huge or non-string one is -32602 and runs no list()`, async () => {
      const paths = new PathClient(server.url);
      const resources = await repositoryCursor(paths, path, 'resources/list');
      const prompts = await repositoryCursor(paths, path, 'prompts/list');
      const [body, signature] = resources.split('.');
      const forged = Buffer.from(
        JSON.stringify({
          k: 'resources',
          v: JSON.parse(Buffer.from(body!, 'base64url').toString()).v,
          r: 0,
          c: '99990',
        }),
      ).toString('base64url');
      docs.fetches.length = 0;
      library.fetches.length = 0;
      const attempts: Array<[string, unknown]> = [
        ['prompts/list', resources],
        ['resources/list', prompts],
        ['skills/list', resources],
        ['tools/list', resources],
        ['resources/templates/list', resources],
        ['resources/list', `${forged}.${signature}`],
        ['resources/list', `${body}.${signature!.slice(0, -2)}AA`],
        ['resources/list', `${body}.`],
        ['resources/list', `.${signature}`],
        ['resources/list', `${body}.${signature}.${signature}`],
        ['resources/list', `${'A'.repeat(50_000)}.${signature}`],
        ['resources/list', 7],
        ['resources/list', { cursor: resources }],
        ['resources/list', [resources]],
      ];
      for (const [method, cursor] of attempts) {
        const answer = await paths.call(path, method, { cursor });
        assert.ok(
          answer.body.error?.code === -32602 || (method === 'skills/list' && answer.body.error?.code === -32601),
          `${method} ${String(cursor).slice(0, 60)}: ${JSON.stringify(answer.body).slice(0, 300)}`,
        );
      }
      assert.deepEqual(docs.fetches, []);
      assert.deepEqual(library.fetches, []);
    });
  }

  it('a cursor issued before a toggle expires; notifyListChanged keeps it (the repository pages its own changes)', async () => {
    const paths = new PathClient(server.url);
    const cursor = await repositoryCursor(paths, 'modern', 'resources/list');
    docs.grow(1);
    assert.ok((await paths.call('modern', 'resources/list', { cursor })).body.result);
    const registry = server.app.get((await import('nestjs-model-context')).McpRegistry);
    registry.disable('static://license', { kind: 'resource' });
    try {
      const stale = await paths.call('modern', 'resources/list', { cursor });
      assert.match(stale.body.error?.message ?? '', /Expired cursor/);
    } finally {
      registry.enable('static://license', { kind: 'resource' });
    }
  });
});

// Two endpoints of one app, one secret (from the environment, as apps do), a repository each.
@ResourceRepository({ uriPrefix: 'pub://docs/' })
class PublicDocs implements McpResourceRepository {
  list({ cursor }: McpRepositoryPageRequest): McpResourcePage {
    const from = Number(cursor ?? 0);
    return { resources: [{ uri: `pub://docs/${from}`, name: `doc-${from}` }], nextCursor: String(from + 1) };
  }

  read(): string {
    return 'public';
  }
}

@ResourceRepository({ uriPrefix: 'hr://records/' })
class HrRecords implements McpResourceRepository {
  readonly cursors: Array<string | undefined> = [];

  list({ cursor }: McpRepositoryPageRequest): McpResourcePage {
    this.cursors.push(cursor);
    return { resources: [{ uri: 'hr://records/1', name: 'record-1' }], nextCursor: 'hr-2' };
  }

  read(): string {
    return 'record';
  }
}

@Module({ providers: [PublicDocs] })
class PublicModule {}

@Module({ providers: [HrRecords] })
class HrModule {}

describe('security: repository cursors across two McpModules sharing one secret', () => {
  it('a cursor of one endpoint reaches no repository of the other', async () => {
    const secret = 'one-secret-for-both-endpoints-0123456789';
    @Module({
      imports: [
        PublicModule,
        HrModule,
        McpModule.forRoot({
          name: 'public',
          version: '1',
          path: 'public',
          include: [PublicModule],
          requestState: { secret },
        }),
        McpModule.forRoot({ name: 'hr', version: '1', path: 'hr', include: [HrModule], requestState: { secret } }),
      ],
    })
    class TwoEndpoints {}
    const server = await startApp(TwoEndpoints);
    try {
      const first = (await modernRpc(`${server.base}/public`, 'resources/list', { cursor: '' })).json as Json;
      const cursor = first.result.nextCursor as string;
      assert.ok(cursor?.includes('.'), JSON.stringify(first));
      const hr = server.app.get(HrRecords);
      const crossed = (await modernRpc(`${server.base}/hr`, 'resources/list', { cursor })).json as Json;
      assert.equal(crossed.error?.code, -32602, JSON.stringify(crossed));
      assert.deepEqual(hr.cursors, [], "the HR repository never saw the public endpoint's cursor");
    } finally {
      await server.close();
    }
  });
});

/** Files as a path-keyed store would hold them: the public repository reads by path. */
const FILES: Record<string, string> = { 'kb/public/readme': 'Welcome.', 'kb/private/salaries': 'CEO: 1,000,000' };

@ResourceRepository({ uriPrefix: 'files://kb/public/' })
class PublicFiles implements McpResourceRepository {
  readonly reads: string[] = [];

  list(): McpResourcePage {
    return { resources: [{ uri: 'files://kb/public/readme', name: 'readme' }] };
  }

  read(uri: string): string | undefined {
    this.reads.push(uri);
    const key = posix.normalize(
      `kb/public/${decodeURIComponent(uri.slice('files://kb/public/'.length)).replaceAll('\\', '/')}`,
    );
    return FILES[key];
  }
}

@Injectable()
class StaffOnly implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = McpExecutionContext.create(context).getRequest<
      { headers?: Record<string, string | undefined> } | undefined
    >();
    return request?.headers?.['x-staff'] === 'yes';
  }
}

@UseGuards(StaffOnly)
@ResourceRepository({ uriPrefix: 'files://kb/private/' })
class PrivateFiles implements McpResourceRepository {
  list(): McpResourcePage {
    return { resources: [{ uri: 'files://kb/private/salaries', name: 'salaries' }] };
  }

  read(uri: string): string | undefined {
    return FILES[`kb/private/${uri.slice('files://kb/private/'.length)}`];
  }
}

@PromptRepository({ namePrefix: 'kb_' })
class TypedPrompts implements McpPromptRepository {
  readonly seen: unknown[] = [];

  list(): McpPromptPage {
    return { prompts: [{ name: 'kb_search', arguments: [{ name: 'q', required: true }] }] };
  }

  get(_name: string, args: Record<string, unknown>): string {
    this.seen.push(args.q);
    return `Search for ${(args.q as string).toLowerCase()}`;
  }
}

@ResourceRepository({ uriPrefix: 'broken://' })
class BrokenRepository implements McpResourceRepository {
  static mode: 'throw' | 'outside' = 'throw';

  list(): McpResourcePage {
    if (BrokenRepository.mode === 'throw') throw new Error(`could not reach ${SECRET}`);
    return { resources: [{ uri: `elsewhere://${SECRET}`, name: 'x' }] };
  }

  read(): string {
    throw new Error(`could not reach ${SECRET}`);
  }
}

function filesApp(): DynamicModule {
  @Module({
    imports: [McpModule.forRoot({ name: 'abuse-repositories', version: '1.0.0' })],
    providers: [StaffOnly, PublicFiles, PrivateFiles, TypedPrompts, BrokenRepository],
  })
  class FilesApp {}
  return { module: FilesApp };
}

describe('security: repository reads and gets', () => {
  let server: RunningApp;
  let paths: PathClient;

  before(async () => {
    server = await startApp(filesApp());
    paths = new PathClient(server.url);
  });
  after(() => server.close());

  it("a URI with dot segments reaches no repository: a sibling's guard cannot be walked around", async () => {
    const files = server.app.get(PublicFiles);
    const tricks = [
      'files://kb/public/../private/salaries',
      'files://kb/public/%2e%2e/private/salaries',
      'files://kb/public/%2E%2E/private/salaries',
      'files://kb/public/.%2e/private/salaries',
      'files://kb/public/..%2Fprivate%2Fsalaries',
      'files://kb/public/..%5Cprivate%5Csalaries',
      'files://kb/public/..\\private\\salaries',
      'files://kb/public/./../private/salaries',
      'files://kb/public/..?x=1',
      'files://kb/public/readme/../../private/salaries',
    ];
    for (const path of ENTRY_PATHS) {
      for (const uri of tricks) {
        const answer = await paths.call(path, 'resources/read', { uri });
        assert.ok(!JSON.stringify(answer.body).includes('1,000,000'), `${path} ${uri}: ${JSON.stringify(answer.body)}`);
        assert.ok(
          answer.body.error?.code === -32602 || answer.body.error?.code === -32002,
          `${path} ${uri}: ${JSON.stringify(answer.body)}`,
        );
      }
    }
    assert.deepEqual(
      files.reads.filter((uri) => uri.includes('.')),
      [],
      'read() never saw a dot segment',
    );
    const plain = await paths.call('modern', 'resources/read', { uri: 'files://kb/public/readme' });
    assert.equal(plain.body.result?.contents?.[0]?.text, 'Welcome.');
    const refused = await paths.call('modern', 'resources/read', { uri: 'files://kb/private/salaries' });
    assert.ok(!JSON.stringify(refused.body).includes('1,000,000'));
    const staff = await paths.call(
      'modern',
      'resources/read',
      { uri: 'files://kb/private/salaries' },
      { 'x-staff': 'yes' },
    );
    assert.equal(staff.body.result?.contents?.[0]?.text, 'CEO: 1,000,000');
  });

  it('a prompt repository gets only string arguments: anything else is -32602 naming the argument', async () => {
    const prompts = server.app.get(TypedPrompts);
    for (const path of ENTRY_PATHS) {
      for (const q of [7, true, null, ['a'], { toString: 'x' }]) {
        const answer = await paths.call(path, 'prompts/get', { name: 'kb_search', arguments: { q } });
        assert.equal(answer.body.error?.code, -32602, `${path} ${JSON.stringify(q)}: ${JSON.stringify(answer.body)}`);
        assert.match(answer.body.error.message, /"q"/);
      }
      const ok = await paths.call(path, 'prompts/get', { name: 'kb_search', arguments: { q: 'Cats' } });
      assert.equal(ok.body.result?.messages?.[0]?.content?.text, 'Search for cats', JSON.stringify(ok.body));
    }
    assert.ok(
      prompts.seen.every((q) => typeof q === 'string'),
      JSON.stringify(prompts.seen),
    );
  });

  it('what a repository throws, or an invalid page it returns, leaks nothing on either era', async () => {
    for (const mode of ['throw', 'outside'] as const) {
      BrokenRepository.mode = mode;
      for (const path of ENTRY_PATHS) {
        // The broken repository comes last: page until its turn.
        let cursor: string | undefined;
        let answer: Json = {};
        for (let page = 0; page < 6; page++) {
          answer = (await paths.call(path, 'resources/list', cursor === undefined ? {} : { cursor })).body;
          if (answer.error) break;
          cursor = answer.result.nextCursor;
          if (!cursor) break;
        }
        assert.equal(answer.error?.code, -32603, `${mode} ${path}: ${JSON.stringify(answer)}`);
        assert.ok(!JSON.stringify(answer).includes('REPO-SECRET'), JSON.stringify(answer));
        assert.match(answer.error.message, /reference/);
      }
    }
    const read = await paths.call('modern', 'resources/read', { uri: 'broken://x' });
    assert.ok(
      !JSON.stringify(read.body).includes('REPO-SECRET') && read.body.error?.code === -32603,
      JSON.stringify(read.body),
    );
  });
});

describe('security: a guarded repository on every path', () => {
  it('is in no list of a refused caller, and its URIs can be neither read nor watched', async () => {
    const server = await startApp(RepositoriesModule.register({ providers: [StaticDocs, VaultDocs, VaultGuard] }));
    const paths = new PathClient(server.url);
    try {
      for (const path of ENTRY_PATHS) {
        const listed = await paths.call(path, 'resources/list');
        assert.ok(!JSON.stringify(listed.body).includes('secret://vault/'), `${path}: ${JSON.stringify(listed.body)}`);
        const read = await paths.call(path, 'resources/read', { uri: 'secret://vault/plans' });
        assert.ok(
          read.body.error && !JSON.stringify(read.body).includes('The plans.'),
          `${path}: ${JSON.stringify(read.body)}`,
        );
        const watch =
          path === 'modern'
            ? await paths.call(path, 'subscriptions/listen', {
                notifications: { resourceSubscriptions: ['secret://vault/plans'] },
              })
            : await paths.call(path, 'resources/subscribe', { uri: 'secret://vault/plans' });
        assert.ok(watch.body.error, `${path}: ${JSON.stringify(watch.body)}`);
        const opened = await paths.call(path, 'resources/read', { uri: 'secret://vault/plans' }, { 'x-vault': 'open' });
        assert.equal(opened.body.result?.contents?.[0]?.text, 'The plans.');
      }
      const session = await openSession(server.url, VERSION);
      const completion = await rpc(
        server.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'completion/complete',
          params: { ref: { type: 'ref/resource', uri: 'secret://vault/{id}' }, argument: { name: 'id', value: '' } },
        },
        { sessionId: session, headers: { 'MCP-Protocol-Version': VERSION } },
      );
      assert.equal((completion.json as Json).error?.code, -32602, 'a repository offers no completion to probe');
    } finally {
      await server.close();
    }
  });
});
