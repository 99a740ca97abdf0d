import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { z } from 'zod';
import { ToolRuntimeFactory } from '../tools/tool-runtime.factory.js';
import { of } from 'rxjs';
import { isStandardSchema, standardJsonSchema, validateStandard, withJsonSchema } from './standard-schema.js';

describe('Standard Schema support', () => {
  it('recognises zod and valibot schemas, not DTO classes or JSON Schema objects', () => {
    assert.equal(isStandardSchema(z.string()), true);
    assert.equal(isStandardSchema(v.string()), true);
    assert.equal(isStandardSchema(class Dto {}), false);
    assert.equal(isStandardSchema({ type: 'object' }), false);
    assert.equal(isStandardSchema(null), false);
  });

  it('refuses at bootstrap a schema with no JSON Schema converter, naming the site, the vendor and the fixes', () => {
    const bare = v.object({ a: v.string() });
    assert.throws(
      () => standardJsonSchema(bare, 'Tools#make'),
      (error: Error) =>
        /^Tools#make: the valibot schema offers no Standard JSON Schema converter/.test(error.message) &&
        error.message.includes('toStandardJsonSchema()') &&
        error.message.includes('withJsonSchema('),
    );
  });

  it('withJsonSchema pairs a schema without a converter with the JSON Schema to list', async () => {
    const bare = v.object({ a: v.string() });
    const paired = withJsonSchema(bare, { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
    assert.deepEqual(standardJsonSchema(paired, 'x'), {
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
    assert.deepEqual(await validateStandard(paired, { a: 'ok' }), { ok: true, value: { a: 'ok' } });
  });

  it('names nested fields and array items in issue paths, never the submitted value', async () => {
    const schema = z.object({
      address: z.object({ zip: z.string().length(5) }),
      items: z.array(z.object({ qty: z.int() })),
    });
    const outcome = await validateStandard(schema, {
      address: { zip: 'secret-value' },
      items: [{ qty: 1 }, { qty: 1.5 }],
    });
    assert.equal(outcome.ok, false);
    const issues = (outcome as { issues: { path: string; message: string; rule: string }[] }).issues;
    assert.deepEqual(
      issues.map((i) => i.path),
      ['address.zip', 'items[1].qty'],
    );
    assert.ok(
      issues.every((i) => i.rule === 'zod' && !i.message.includes('secret-value')),
      JSON.stringify(issues),
    );
  });

  it('refuses a tool whose Standard Schema input is not an object schema', () => {
    assert.throws(
      () =>
        new ToolRuntimeFactory().build(
          { name: 't', input: toStandardJsonSchema(v.string()) },
          () => of(null),
          'Tools#t',
        ),
      /Tools#t: a tool's input must be an object schema, but the valibot schema emits "string"/,
    );
  });
});
