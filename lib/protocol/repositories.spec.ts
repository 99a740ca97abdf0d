import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpError } from './errors.js';
import {
  RepositoryCursors,
  defaultRepositoryLimits,
  hasDotSegment,
  repositoryPrompt,
  repositoryResource,
  type PromptRepositoryRuntime,
  type ResourceRepositoryRuntime,
} from './repositories.js';
import { UriTemplate } from './uri-template.js';

const LABELS = ['Docs ("docs://kb/")', 'Notes ("notes://")'];
const expected = {
  kind: 'resources',
  method: 'resources/list',
  version: 7,
  holder: 'principal:alice',
  repository: (index: number): string | undefined => LABELS[index],
};
const encode = (
  cursors: RepositoryCursors,
  kind: string,
  version: number,
  position: { repository: number; inner?: string },
  holder = 'principal:alice',
) => cursors.encode(kind, version, position, holder, LABELS[position.repository]!);

function refusal(fn: () => unknown): { code: number; message: string } {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof McpError, String(error));
    return { code: error.code, message: error.message };
  }
  assert.fail('expected an McpError');
}

describe('repository cursors', () => {
  const cursors = new RepositoryCursors(defaultRepositoryLimits());

  it('round-trip the repository and its own cursor, and are told apart from static cursors', () => {
    const cursor = encode(cursors, 'resources', 7, { repository: 1, inner: 'row:42' });
    assert.deepEqual(cursors.decode(cursor, expected), { repository: 1, inner: 'row:42' });
    assert.deepEqual(cursors.decode(encode(cursors, 'resources', 7, { repository: 0 }), expected), { repository: 0 });
    assert.equal(RepositoryCursors.isRepositoryCursor(cursor), true);
    assert.equal(RepositoryCursors.isRepositoryCursor('eyJrIjoidG9vbHMifQ'), false);
  });

  it("are bound to the caller: another principal's, a session's, or an anonymous caller's, is refused", () => {
    const cursor = encode(cursors, 'resources', 7, { repository: 0, inner: '500' });
    for (const holder of ['principal:bob', 'session:alice', '']) {
      const { code, message } = refusal(() => cursors.decode(cursor, { ...expected, holder }));
      assert.equal(code, -32602);
      assert.match(message, /Invalid cursor for resources\/list/);
    }
  });

  it('are bound to the list, the secret and the catalog version', () => {
    const cursor = encode(cursors, 'prompts', 7, { repository: 0 });
    assert.equal(refusal(() => cursors.decode(cursor, expected)).code, -32602);
    const foreign = encode(new RepositoryCursors(defaultRepositoryLimits()), 'resources', 7, { repository: 0 });
    assert.equal(refusal(() => cursors.decode(foreign, expected)).code, -32602);
    const old = encode(cursors, 'resources', 6, { repository: 0 });
    const expired = refusal(() => cursors.decode(old, expected));
    assert.equal(expired.code, -32602);
    assert.match(expired.message, /Expired cursor/);
  });

  it("are bound to the repository they point into: another module's repository at that index, or none, refuses them", () => {
    const cursor = encode(cursors, 'resources', 7, { repository: 0, inner: 'p2' });
    assert.equal(
      refusal(() => cursors.decode(cursor, { ...expected, repository: () => 'Records ("hr://")' })).code,
      -32602,
    );
    assert.equal(refusal(() => cursors.decode(cursor, { ...expected, repository: () => undefined })).code, -32602);
  });

  it('refuse an edited body and anything longer than a cursor this server could issue, before any HMAC', () => {
    const cursor = encode(cursors, 'resources', 7, { repository: 0, inner: '500' });
    const [body, signature] = cursor.split('.');
    const edited = Buffer.from(Buffer.from(body!, 'base64url').toString().replace('500', '900')).toString('base64url');
    assert.equal(refusal(() => cursors.decode(`${edited}.${signature}`, expected)).code, -32602);
    assert.equal(refusal(() => cursors.decode(`${'A'.repeat(cursors.maxLength)}.x`, expected)).code, -32602);
    assert.equal(refusal(() => cursors.decode('.', expected)).code, -32602);
  });
});

describe('hasDotSegment', () => {
  it('finds a dot segment however it is written, and only a whole segment', () => {
    for (const uri of [
      'docs://kb/../x',
      'docs://kb/./x',
      'docs://kb/%2e%2E/x',
      'docs://kb/.%2e/x',
      'docs://kb/..%2Fx',
      'docs://kb/..%5cx',
      'docs://kb/..\\x',
      'docs://kb/..',
      'docs://kb/..?q',
      'docs://kb/a/..#f',
    ]) {
      assert.equal(hasDotSegment(uri), true, uri);
    }
    for (const uri of [
      'docs://kb/x',
      'docs://kb/.hidden',
      'docs://kb/a..b',
      'docs://kb/v1.2',
      'docs://kb/x?q=..',
      'docs://kb/%E0%A4%A',
      'https://example.com/a.b',
    ]) {
      assert.equal(hasDotSegment(uri), false, uri);
    }
  });
});

describe('repository pages', () => {
  const docs = { uriPrefix: 'docs://kb/', mimeType: 'text/markdown' } as ResourceRepositoryRuntime;
  const prompts = { namePrefix: 'kb_' } as PromptRepositoryRuntime;

  it('keep listed resources under the prefix, copying only descriptor fields', () => {
    assert.deepEqual(repositoryResource({ uri: 'docs://kb/1', name: 'one', extra: 'dropped' }, docs), {
      uri: 'docs://kb/1',
      name: 'one',
      mimeType: 'text/markdown',
    });
    assert.throws(
      () => repositoryResource({ uri: 'docs://other/1', name: 'x' }, docs),
      /not under the repository's prefix "docs:\/\/kb\/"/,
    );
    assert.throws(() => repositoryResource({ uri: 'docs://kb/a b', name: 'x' }, docs), /whitespace/);
    assert.throws(() => repositoryResource({ uri: 'docs://kb/1' }, docs), /"name"/);
    assert.throws(() => repositoryResource({ uri: 'docs://kb/1', name: 'x', size: -1 }, docs), /"size"/);
  });

  it('keep listed prompts under the prefix with well-formed arguments', () => {
    assert.deepEqual(repositoryPrompt({ name: 'kb_1', arguments: [{ name: 'topic', required: true }] }, prompts), {
      name: 'kb_1',
      arguments: [{ name: 'topic', required: true }],
    });
    assert.throws(() => repositoryPrompt({ name: 'other' }, prompts), /prefix "kb_"/);
    assert.throws(() => repositoryPrompt({ name: 'kb_1', arguments: [{}] }, prompts), /arguments\[0\]/);
  });
});

describe('UriTemplate.mayMatchUnder', () => {
  const cases: Array<[string, string, boolean]> = [
    ['docs://kb/{+path}', 'docs://kb/', true],
    ['docs://{+path}', 'docs://kb/', true],
    ['docs://kb/{id}', 'docs://', true],
    ['docs://{id}', 'docs://kb/', false],
    ['docs://{id}/raw', 'docs://kb/', true],
    ['docs://{id}.md', 'docs://kb/', false],
    ['docs://{id}{/rest*}', 'docs://kb/', true],
    ['docs://kb', 'docs://kb/', false],
    ['docs://kb{?q}', 'docs://kb?', true],
    ['notes://{id}', 'docs://', false],
  ];
  for (const [template, prefix, overlaps] of cases) {
    it(`${template} ${overlaps ? 'reaches' : 'does not reach'} under ${prefix}`, () => {
      assert.equal(UriTemplate.parse(template).mayMatchUnder(prefix), overlaps);
    });
  }
});
