import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileJsonSchema } from './json-schema.validator.js';
import type { JsonSchema } from './json-schema.types.js';

describe('compileJsonSchema', () => {
  const order: JsonSchema = {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1 },
      items: {
        type: 'array',
        items: {
          type: 'object',
          properties: { qty: { type: 'integer' } },
          required: ['qty'],
          additionalProperties: false,
        },
      },
      '0': { type: 'object', properties: { a: { type: 'string' } } },
    },
    required: ['title'],
    additionalProperties: false,
  };

  it('compiles once per schema object and returns null for valid values', () => {
    const check = compileJsonSchema(order);
    assert.equal(compileJsonSchema(order), check);
    assert.equal(check({ title: 'x', items: [{ qty: 1 }] }), null);
  });

  it('maps errors to dotted/indexed paths without values', () => {
    const check = compileJsonSchema(order);
    const secret = 'top-secret-value';
    const issues = check({ items: [{ qty: 1 }, { qty: 1 }, { qty: secret, x: 1 }], extra: secret, 0: { a: 5 } });
    assert.ok(issues);
    assert.deepEqual(
      issues.map((issue) => `${issue.path}:${issue.rule}`).sort(),
      [
        '["0"].a:type',
        'extra:additionalProperties',
        'items[2].qty:type',
        'items[2].x:additionalProperties',
        'title:required',
      ].sort(),
    );
    assert.ok(issues.every((issue) => !issue.message.includes(secret)));
    assert.deepEqual(
      issues.find((issue) => issue.rule === 'required'),
      { path: 'title', rule: 'required', message: 'is required' },
    );
  });

  it('compiles raw schemas with $defs, $ref, $anchor, allOf, anyOf and if/then/else', () => {
    const check = compileJsonSchema({
      $defs: {
        positive: { $anchor: 'pos', type: 'integer', minimum: 1 },
        node: { type: 'object', properties: { next: { $ref: '#/$defs/node' }, v: { $ref: '#pos' } } },
      },
      type: 'object',
      properties: {
        kind: { enum: ['a', 'b'] },
        count: { allOf: [{ $ref: '#/$defs/positive' }, { maximum: 10 }] },
        id: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        node: { $ref: '#/$defs/node' },
      },
      if: { properties: { kind: { const: 'a' } } },
      then: { required: ['count'] },
      else: { required: ['id'] },
    });
    assert.equal(check({ kind: 'a', count: 3, node: { v: 1, next: { v: 2 } } }), null);
    assert.equal(check({ kind: 'b', id: 'x' }), null);
    assert.deepEqual(
      check({ kind: 'a' })?.map((issue) => `${issue.path}:${issue.rule}`),
      ['count:required', ':if'],
    );
    assert.ok(check({ kind: 'a', count: 11 })?.some((issue) => issue.path === 'count' && issue.rule === 'maximum'));
    assert.ok(check({ kind: 'b', id: 'x', node: { next: { v: 0 } } })?.some((issue) => issue.path === 'node.next.v'));
  });

  it('resolves "#" with or without a root $id, leaving the schema untouched', () => {
    const tree: JsonSchema = { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#' } } } };
    const check = compileJsonSchema(tree);
    assert.equal(check({ kids: [{ kids: [] }] }), null);
    assert.deepEqual(
      check({ kids: [{ kids: [1] }] })?.map((issue) => issue.path),
      ['kids[0].kids[0]'],
    );
    assert.equal('$id' in tree, false);
    const withId = compileJsonSchema({ $id: 'https://example.com/tree.json', ...tree });
    assert.ok(withId({ kids: [1] }));
  });

  it('reports the real cause of a nullable $ref, not the null branch', () => {
    const check = compileJsonSchema({
      $defs: { Box: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false } },
      type: 'object',
      properties: { box: { anyOf: [{ $ref: '#/$defs/Box' }, { type: 'null' }] } },
    });
    assert.equal(check({ box: null }), null);
    assert.deepEqual(check({ box: { n: 'x' } }), [{ path: 'box.n', rule: 'type', message: 'must be an integer' }]);
  });

  it('treats formats as annotations', () => {
    const check = compileJsonSchema({ type: 'string', format: 'email' });
    assert.equal(check('not an email'), null);
  });

  it('refuses remote $ref instead of fetching it', () => {
    assert.throws(
      () => compileJsonSchema({ type: 'object', properties: { a: { $ref: 'https://example.com/schemas/a.json' } } }),
      /references "https:\/\/example\.com\/schemas\/a\.json".*not fetched.*\$defs/,
    );
  });

  it('accepts absolute references to an $id inside the schema', () => {
    const check = compileJsonSchema({
      $id: 'https://example.com/root.json',
      $defs: { s: { $id: 'https://example.com/s.json', type: 'string' } },
      type: 'object',
      properties: { a: { $ref: 'https://example.com/s.json' } },
    });
    assert.ok(check({ a: 1 }));
    // The same $id compiled again in another schema object must not clash.
    assert.doesNotThrow(() => compileJsonSchema({ $id: 'https://example.com/root.json', type: 'object' }));
  });

  it('refuses other dialects and invalid schemas with a clear error', () => {
    assert.throws(
      () => compileJsonSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }),
      /Unsupported JSON Schema dialect.*2020-12/,
    );
    assert.doesNotThrow(() =>
      compileJsonSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' }),
    );
    assert.throws(() => compileJsonSchema({ type: 'strnig' }), /Invalid JSON Schema/);
  });
});
