import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { join, resolve, sep } from 'node:path';
import { MAX_SAFE_PATH_LENGTH, resolveSafePath, UnsafePathError, type UnsafePathReason } from './safe-path.util.js';
import { UriTemplate } from './uri-template.js';

const ROOT = resolve('/srv/data');

describe('resolveSafePath', () => {
  const ACCEPTED: ReadonlyArray<readonly [string, string]> = [
    ['a.txt', join(ROOT, 'a.txt')],
    ['docs/guide.md', join(ROOT, 'docs', 'guide.md')],
    ['./docs//guide.md', join(ROOT, 'docs', 'guide.md')],
    ['..hidden', join(ROOT, '..hidden')],
    ['a..b/c...', join(ROOT, 'a..b', 'c...')],
    ['%2e%2e/x', join(ROOT, '%2e%2e', 'x')],
    ['caf\u00e9 \u20ac.txt', join(ROOT, 'caf\u00e9 \u20ac.txt')],
  ];
  for (const [relative, expected] of ACCEPTED) {
    it(`accepts ${JSON.stringify(relative)}`, () => {
      assert.equal(resolveSafePath(ROOT, relative), expected);
    });
  }

  const REFUSED: ReadonlyArray<readonly [string, string, UnsafePathReason, RegExp]> = [
    ['empty', '', 'empty', /empty/],
    ['NUL byte', 'a\0.txt', 'nul-byte', /"a\\u0000\.txt" contains a NUL byte/],
    ['parent', '..', 'traversal', /"\.\." contains a "\.\." segment/],
    ['leading parent', '../etc/passwd', 'traversal', /"\.\." segment/],
    ['inner parent', 'a/../../b', 'traversal', /"\.\." segment/],
    ['inner parent that stays inside', 'a/../b', 'traversal', /"\.\." segment/],
    ['trailing parent', 'a/..', 'traversal', /"\.\." segment/],
    ['backslash parent', '..\\windows', 'traversal', /"\.\." segment/],
    ['mixed separators', 'a\\..\\..\\b', 'traversal', /"\.\." segment/],
    ['POSIX absolute', '/etc/passwd', 'absolute', /"\/etc\/passwd" is absolute/],
    ['root-relative backslash', '\\windows', 'absolute', /is absolute/],
    ['drive with backslash', 'C:\\Windows', 'absolute', /is absolute/],
    ['drive with slash', 'c:/Windows', 'absolute', /is absolute/],
    ['drive-relative', 'C:foo', 'absolute', /is absolute/],
    ['UNC', '\\\\server\\share\\x', 'absolute', /is absolute/],
    ['forward-slash UNC', '//server/share', 'absolute', /is absolute/],
    ['device path', '\\\\?\\C:\\x', 'absolute', /is absolute/],
    ['the root itself', '.', 'outside-root', /the root itself/],
    ['the root itself, dotted', './.', 'outside-root', /the root itself/],
  ];
  for (const [label, relative, reason, pattern] of REFUSED) {
    it(`refuses ${label}: ${JSON.stringify(relative)}`, () => {
      assert.throws(
        () => resolveSafePath(ROOT, relative),
        (error: unknown) => {
          assert.ok(error instanceof UnsafePathError);
          assert.equal(error.name, 'UnsafePathError');
          assert.equal(error.reason, reason);
          assert.match(error.message, pattern);
          return true;
        },
      );
    });
  }

  it('refuses non-strings', () => {
    assert.throws(() => resolveSafePath(ROOT, null as unknown as string), {
      name: 'UnsafePathError',
      message: /got null/,
    });
  });

  it('refuses over-long values without echoing them', () => {
    const huge = 'a/'.repeat(MAX_SAFE_PATH_LENGTH);
    assert.throws(
      () => resolveSafePath(ROOT, huge),
      (error: unknown) => {
        assert.ok(error instanceof UnsafePathError);
        assert.equal(error.reason, 'too-long');
        assert.ok(error.message.length < 300, `message is ${error.message.length} characters`);
        return true;
      },
    );
    const hugeTraversal = '../' + 'a'.repeat(100_000);
    assert.throws(
      () => resolveSafePath(ROOT, hugeTraversal),
      (error: unknown) => {
        assert.ok(error instanceof UnsafePathError);
        assert.ok(error.message.length < 300);
        return true;
      },
    );
  });

  it('handles a filesystem root and a relative root', () => {
    const fsRoot = resolve(sep);
    assert.equal(resolveSafePath(fsRoot, 'etc/hosts'), join(fsRoot, 'etc', 'hosts'));
    assert.equal(resolveSafePath('some/dir', 'x'), resolve('some/dir', 'x'));
    assert.equal(resolveSafePath(ROOT + sep, 'x'), join(ROOT, 'x'));
  });

  it('does not treat a sibling with a common prefix as inside', () => {
    // "/srv/data-evil" starts with "/srv/data" as a string; the ".." check refuses it first, and
    // the containment check would too.
    assert.throws(() => resolveSafePath(ROOT, '../data-evil/x'), { name: 'UnsafePathError' });
  });

  it('refuses traversal that arrives percent-encoded in a matched URI', () => {
    const t = UriTemplate.parse('file:///{+path}');
    for (const uri of [
      'file:///%2e%2e/etc/passwd',
      'file:///a/%2E%2E%2F%2E%2E/x',
      'file:///a%5C..%5Cb',
      'file:///%2Fetc',
      'file:///a%00b',
    ]) {
      const match = t.match(uri);
      assert.ok(match, `${uri} should match the template`);
      assert.throws(() => resolveSafePath(ROOT, match.path as string), { name: 'UnsafePathError' }, uri);
    }
    const segs = UriTemplate.parse('file:///root{/p*}').match('file:///root/a/%2E%2E/b');
    assert.deepEqual(segs, { p: ['a', '..', 'b'] });
    assert.throws(() => resolveSafePath(ROOT, (segs!.p as string[]).join('/')), { name: 'UnsafePathError' });
  });
});
