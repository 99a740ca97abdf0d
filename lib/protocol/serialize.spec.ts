import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failure, success } from './json-rpc.js';
import { freezeResult, serializeMessage } from './serialize.js';

describe('serializeMessage', () => {
  it('produces exactly what JSON.stringify does, cached or not', () => {
    const result = freezeResult({ tools: [{ name: 'a', inputSchema: { type: 'object' } }], nextCursor: 'x' });
    for (const id of [1, 'abc', 'quo"te', 0]) {
      const message = success(id, result);
      assert.equal(serializeMessage(message), JSON.stringify(message));
      assert.deepEqual(JSON.parse(serializeMessage(message)), message);
    }
    const plain = success(2, { a: 1 });
    assert.equal(serializeMessage(plain), JSON.stringify(plain));
    const error = failure(3, -32602, 'bad');
    assert.equal(serializeMessage(error), JSON.stringify(error));
  });
});
