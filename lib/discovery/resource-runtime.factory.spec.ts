import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IsEnum, IsInt, IsOptional, IsString, Min } from 'class-validator';
import { lastValueFrom, of, toArray } from 'rxjs';
import { installResources } from '../resources/resources.js';
import { McpDispatcher } from '../protocol/dispatcher.js';
import type { McpRegistryChange } from './dynamic-definitions.js';
import { McpRegistry } from './mcp.registry.js';
import { ResourceRuntimeFactory } from './resource-runtime.factory.js';

enum Folder {
  Work = 'work',
  Home = 'home',
}

class NoteRef {
  @IsEnum(Folder)
  folder!: Folder;

  @IsInt()
  @Min(1)
  id!: number;
}

class TooMuch extends NoteRef {
  @IsString()
  owner!: string;
}

class Optional {
  @IsOptional()
  @IsString()
  q?: string;
}

const factory = new ResourceRuntimeFactory();
const read = () => of('x');

describe('ResourceRuntimeFactory', () => {
  it('builds a resource descriptor and refuses invalid URIs and options, naming the site', () => {
    const runtime = factory.buildResource(
      {
        uri: 'docs://readme',
        name: 'readme',
        mimeType: 'text/markdown',
        size: 10,
        annotations: { audience: ['user'], priority: 0.5 },
      },
      read,
      'Docs#readme',
    );
    assert.deepEqual(runtime.descriptor, {
      uri: 'docs://readme',
      name: 'readme',
      mimeType: 'text/markdown',
      annotations: { audience: ['user'], priority: 0.5 },
      size: 10,
    });
    assert.throws(
      () => factory.buildResource({ uri: 'readme', name: 'r' }, read, 'Docs#a'),
      /Resource URI "readme" declared by "Docs#a" is invalid: it does not start with a scheme/,
    );
    assert.throws(
      () => factory.buildResource({ uri: 'docs://{id}', name: 'r' }, read, 'Docs#b'),
      /use @ResourceTemplate/,
    );
    assert.throws(() => factory.buildResource({ uri: 'docs://a b', name: 'r' }, read, 'Docs#c'), /whitespace/);
    assert.throws(
      () => factory.buildResource({ uri: 'docs://a', name: 'r', mimeType: 'markdown' }, read, 'Docs#d'),
      /"mimeType" "markdown"/,
    );
    assert.throws(
      () => factory.buildResource({ uri: 'docs://a', name: 'r', annotations: { priority: 2 } }, read, 'Docs#e'),
      /priority/,
    );
    assert.throws(
      () =>
        factory.buildResource(
          { uri: 'docs://a', name: 'r', cache: { ttlMs: -1, cacheScope: 'public' } },
          read,
          'Docs#f',
        ),
      /"cache" must be/,
    );
  });

  it('fails the bootstrap for templates with repeated variables or unsupported shapes, naming them', () => {
    assert.throws(
      () => factory.buildTemplate({ uriTemplate: 'n://{id}/{id}', name: 'n' }, read, 'Notes#twice'),
      (error: Error) => {
        assert.match(error.message, /Resource template "n:\/\/\{id\}\/\{id\}" declared by "Notes#twice" is invalid/);
        assert.match(error.message, /id/);
        return true;
      },
    );
    assert.throws(
      () => factory.buildTemplate({ uriTemplate: 'n://{;id}', name: 'n' }, read, 'Notes#shape'),
      /declared by "Notes#shape" is invalid.*Supported expressions/s,
    );
    assert.throws(
      () => factory.buildTemplate({ uriTemplate: '{+uri}', name: 'n' }, read, 'Notes#any'),
      /must start with literal text naming a scheme/,
    );
  });

  it('casts variables through a DTO and exposes its enum values for completion', async () => {
    const runtime = factory.buildTemplate(
      { uriTemplate: 'n://{folder}/{id}', name: 'note', args: NoteRef },
      read,
      'Notes#note',
    );
    assert.deepEqual(runtime.arguments, [{ name: 'folder', enumValues: ['work', 'home'] }, { name: 'id' }]);
    const ok = await runtime.parseVariables(runtime.template.match('n://work/12')!);
    assert.ok(ok.ok && ok.value instanceof NoteRef && ok.value.id === 12);
    const bad = await runtime.parseVariables(runtime.template.match('n://attic/zero')!);
    assert.equal(bad.ok, false);
    assert.match(
      (bad as { message: string }).message,
      /Invalid arguments for resource template "n:\/\/\{folder\}\/\{id\}":\n- folder: .*\n- id: /,
    );
    const plain = factory.buildTemplate({ uriTemplate: 's://{?q}', name: 's' }, read, 'S#s');
    assert.deepEqual(await plain.parseVariables({ q: 'x' }), { ok: true, value: { q: 'x' } });
    factory.buildTemplate({ uriTemplate: 's://search{?q}', name: 's', args: Optional }, read, 'S#q');
  });

  it('refuses a DTO that does not fit the template', () => {
    assert.throws(
      () => factory.buildTemplate({ uriTemplate: 'n://{folder}/{id}/{rev}', name: 'n', args: NoteRef }, read, 'N#a'),
      /variable \{rev\} has no property in NoteRef/,
    );
    assert.throws(
      () => factory.buildTemplate({ uriTemplate: 'n://{folder}/{id}', name: 'n', args: TooMuch }, read, 'N#b'),
      /TooMuch requires "owner", which the template never fills/,
    );
  });
});

describe('McpRegistry resources', () => {
  function registry(): { registry: McpRegistry; changes: McpRegistryChange[] } {
    const r = new McpRegistry();
    const changes: McpRegistryChange[] = [];
    r.changes$.subscribe((c) => changes.push(c));
    return { registry: r, changes };
  }

  it('refuses a resource that a template shadows, in either order, naming both', () => {
    const { registry: a } = registry();
    a.registerResourceTemplate(
      factory.buildTemplate({ uriTemplate: 'n://{id}', name: 't' }, read, 'Notes#byId'),
      'Notes#byId',
    );
    assert.throws(
      () =>
        a.registerResource(factory.buildResource({ uri: 'n://index', name: 'i' }, read, 'Notes#index'), 'Notes#index'),
      /Resource "n:\/\/index" \(declared by "Notes#index"\) is shadowed by resource template "n:\/\/\{id\}" \(declared by "Notes#byId"\)/,
    );
    const { registry: b } = registry();
    b.addResource({ uri: 'n://index', name: 'i', handler: () => 'x' });
    assert.throws(
      () => b.addResourceTemplate({ uriTemplate: 'n://{id}', name: 't', handler: () => 'x' }),
      /shadowed by resource template "n:\/\/\{id\}" \(declared by "McpRegistry.addResourceTemplate\(n:\/\/\{id\}\)"\)/,
    );
    b.addResourceTemplate({ uriTemplate: 'n://{folder}/{id}', name: 't', handler: () => 'x' });
  });

  it('refuses duplicates and emits changes for runtime additions and removals', () => {
    const { registry: r, changes } = registry();
    const before = r.version;
    r.addResource({ uri: 'a://1', name: 'one', handler: () => 'x' });
    assert.throws(
      () => r.addResource({ uri: 'a://1', name: 'again', handler: () => 'x' }),
      /Resource "a:\/\/1" is already registered\. Remove it first with McpRegistry\.removeResource/,
    );
    r.addResourceTemplate({ uriTemplate: 't://{id}', name: 't', handler: () => 'x', complete: { id: () => ['1'] } });
    assert.ok(r.completer({ kind: 'resourceTemplate', uriTemplate: 't://{id}' }, 'id'));
    assert.throws(
      () =>
        r.addResourceTemplate({ uriTemplate: 'u://{id}', name: 'u', handler: () => 'x', complete: { nope: () => [] } }),
      /has no such argument/,
    );
    assert.equal(r.resourceTemplate('u://{id}'), undefined);
    assert.equal(r.removeResourceTemplate('t://{id}'), true);
    assert.equal(r.completer({ kind: 'resourceTemplate', uriTemplate: 't://{id}' }, 'id'), undefined);
    assert.equal(r.removeResource('a://1'), true);
    assert.equal(r.removeResource('a://1'), false);
    r.notifyResourceUpdated('a://2');
    assert.throws(() => r.notifyResourceUpdated(''), /non-empty string/);
    assert.ok(r.version > before);
    assert.deepEqual(changes, [
      { kind: 'resources', type: 'added', name: 'a://1' },
      { kind: 'resources', type: 'added', name: 't://{id}' },
      { kind: 'resources', type: 'removed', name: 't://{id}' },
      { kind: 'resources', type: 'removed', name: 'a://1' },
      { kind: 'resource-updated', uri: 'a://2' },
    ]);
  });

  it('answers -32603 naming both templates when two match one URI at read time', async () => {
    const r = new McpRegistry();
    r.addResourceTemplate({ uriTemplate: 'n://{folder}/{id}', name: 'a', handler: () => 'a' });
    r.addResourceTemplate({ uriTemplate: 'n://work/{id}', name: 'b', handler: () => 'b' });
    const logger = { error: () => undefined, warn: () => undefined };
    const server = new McpDispatcher(
      {
        serverInfo: { name: 's', version: '1' },
        discoverCache: { ttlMs: 1, cacheScope: 'public' },
        listCache: { ttlMs: 1, cacheScope: 'public' },
        exposeInternalErrors: false,
        logger,
      },
      r,
    );
    installResources(server, r, {
      readCache: { ttlMs: 0, cacheScope: 'private' },
      exposeInternalErrors: false,
      logger,
    });
    const read = (uri: string) =>
      lastValueFrom(
        server
          .handle(
            { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } },
            { era: 'legacy', protocolVersion: '2025-11-25', capabilities: {} },
          )
          .pipe(toArray()),
      ).then(
        (m) =>
          m.at(-1) as { result?: { contents: Array<{ text: string }> }; error?: { code: number; message: string } },
      );
    assert.equal((await read('n://home/1')).result?.contents[0]!.text, 'a');
    const ambiguous = await read('n://work/1');
    assert.equal(ambiguous.error?.code, -32603);
    assert.match(
      ambiguous.error!.message,
      /matches two resource templates, "n:\/\/\{folder\}\/\{id\}" and "n:\/\/work\/\{id\}"/,
    );
  });
});
