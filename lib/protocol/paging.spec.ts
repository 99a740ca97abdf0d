import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpError } from './errors.js';
import { PagedList, decodeCursor, encodeCursor } from './paging.js';

const expected = { kind: 'tools', method: 'tools/list', version: 3, pageSize: 2, total: 5 };

function codeOf(fn: () => unknown): { code: number; message: string } {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof McpError);
    return { code: error.code, message: error.message };
  }
  assert.fail('expected an McpError');
}

describe('cursors', () => {
  it('round-trips and treats absent, null and empty cursors as the first page', () => {
    assert.equal(decodeCursor(encodeCursor('tools', 3, 4), expected), 4);
    assert.equal(decodeCursor(undefined, expected), 0);
    assert.equal(decodeCursor(null, expected), 0);
    assert.equal(decodeCursor('', expected), 0);
    assert.match(encodeCursor('tools', 3, 4), /^[A-Za-z0-9_-]+$/);
  });

  it('refuses cursors it did not issue with -32602', () => {
    for (const bad of [
      42,
      'not base64!',
      'abc',
      Buffer.from('{"k":"tools","v":3}').toString('base64url'),
      Buffer.from('{"k":"tools","v":3,"o":-2}').toString('base64url'),
      encodeCursor('prompts', 3, 2), // another list's cursor
      encodeCursor('tools', 3, 3), // not on a page boundary
      encodeCursor('tools', 3, 6), // past the end
      'A'.repeat(300),
    ]) {
      const { code, message } = codeOf(() => decodeCursor(bad, expected));
      assert.equal(code, -32602, String(bad));
      assert.match(message, /Invalid cursor for tools\/list/);
    }
  });

  it('expires cursors of an older catalog version with -32602', () => {
    const { code, message } = codeOf(() => decodeCursor(encodeCursor('tools', 2, 2), expected));
    assert.equal(code, -32602);
    assert.match(message, /Expired cursor for tools\/list: the list changed/);
  });
});

describe('PagedList', () => {
  function list(items: string[], state = { version: 1, builds: 0 }) {
    return new PagedList<string>({
      key: 'things',
      method: 'things/list',
      pageSize: 2,
      version: () => state.version,
      items: () => {
        state.builds++;
        return items;
      },
      describe: (item, era) => `${era}:${item}`,
      finishModern: (page) => ({ ...page, resultType: 'complete' }),
    });
  }

  it('pages in order, with nextCursor on every page but the last', () => {
    const pages = list(['a', 'b', 'c', 'd', 'e']);
    const first = pages.page(undefined, 'legacy');
    assert.deepEqual(first.things, ['legacy:a', 'legacy:b']);
    const second = pages.page(first.nextCursor, 'legacy');
    assert.deepEqual(second.things, ['legacy:c', 'legacy:d']);
    const last = pages.page(second.nextCursor, 'legacy');
    assert.deepEqual(last.things, ['legacy:e']);
    assert.equal('nextCursor' in last, false);
  });

  it('has no nextCursor when everything fits, and serves an empty list', () => {
    assert.equal('nextCursor' in list(['a', 'b']).page('', 'legacy'), false);
    assert.deepEqual(list([]).page(undefined, 'modern'), { things: [], resultType: 'complete' });
  });

  it('builds each page once per catalog version and era', () => {
    const state = { version: 1, builds: 0 };
    const pages = list(['a', 'b', 'c'], state);
    const a = pages.page(undefined, 'modern');
    assert.equal(pages.page(undefined, 'modern'), a);
    assert.notEqual(pages.page(undefined, 'legacy'), a);
    assert.equal(state.builds, 1);
    const cursor = a.nextCursor;
    state.version = 2;
    assert.notEqual(pages.page(undefined, 'modern'), a);
    assert.equal(state.builds, 2);
    assert.equal(codeOf(() => pages.page(cursor, 'modern')).code, -32602);
  });
});
