import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsInt,
  IsOptional,
  IsString,
  Min,
  MinLength,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { DtoCaster, formatIssues, type CastResult } from './dto-caster.js';
import type { ValidationIssue } from './json-schema.types.js';

class Address {
  @IsString() zip!: string;
}
class Line {
  @IsInt() @Min(1) qty!: number;
}
class OrderDto {
  @IsString() title!: string;
  @IsDefined() @ValidateNested() @Type(() => Address) address!: Address;
  @IsArray() @ValidateNested({ each: true }) @Type(() => Line) items!: Line[];
}

function issuesOf<T>(result: CastResult<T>): ValidationIssue[] {
  assert.equal(result.ok, false, 'expected the arguments to be refused');
  return (result as { issues: ValidationIssue[] }).issues;
}

describe('DtoCaster', () => {
  it('returns a DTO instance with nested instances', async () => {
    const cast = new DtoCaster().compile(OrderDto);
    const result = await cast({ title: 't', address: { zip: '1' }, items: [{ qty: 1 }] });
    assert.equal(result.ok, true);
    const value = (result as { value: OrderDto }).value;
    assert.ok(value instanceof OrderDto);
    assert.ok(value.address instanceof Address);
    assert.ok(value.items[0] instanceof Line);
  });

  it('reports dotted and indexed paths with rule names', async () => {
    const cast = new DtoCaster().compile(OrderDto);
    const issues = issuesOf(await cast({ title: 5, address: { zip: 9 }, items: [{ qty: 1 }, { qty: 1 }, { qty: 0 }] }));
    assert.deepEqual(
      issues.map(({ path, rule }) => `${path}:${rule}`),
      ['title:isString', 'address.zip:isString', 'items[2].qty:min'],
    );
    assert.equal(issues[0]!.message, 'must be a string');
  });

  it('refuses unknown properties at every level', async () => {
    const cast = new DtoCaster().compile(OrderDto);
    const issues = issuesOf(
      await cast({ title: 't', address: { zip: '1', city: 'x' }, items: [], extra: true, constructor: 1 }),
    );
    const paths = issues.map((issue) => `${issue.path}:${issue.rule}`).sort();
    assert.deepEqual(paths, [
      'address.city:whitelistValidation',
      'constructor:whitelistValidation',
      'extra:whitelistValidation',
    ]);
  });

  it('refuses non-object arguments and treats missing arguments as {}', async () => {
    const cast = new DtoCaster().compile(OrderDto);
    for (const args of [null, [], 'x', 3]) {
      assert.deepEqual(issuesOf(await cast(args)), [{ path: '', rule: 'type', message: 'must be an object' }]);
    }
    assert.ok(issuesOf(await cast(undefined)).some((issue) => issue.path === 'title'));
  });

  it('accepts {} for a DTO without properties and refuses anything else', async () => {
    class NoArgs {}
    const cast = new DtoCaster().compile(NoArgs);
    assert.equal((await cast({})).ok, true);
    assert.equal((await cast(undefined)).ok, true);
    assert.deepEqual(issuesOf(await cast({ a: 1 })), [
      { path: 'a', rule: 'whitelistValidation', message: 'is not an allowed property' },
    ]);
  });

  it('compiles once per class', () => {
    const caster = new DtoCaster();
    assert.equal(caster.compile(OrderDto), caster.compile(OrderDto));
    assert.notEqual(caster.compile(OrderDto), caster.compile(OrderDto, { coerceStrings: true }));
  });

  describe('never echoes submitted values', () => {
    const SECRET = 'sk-live-4242-secret';

    @ValidatorConstraint({ name: 'isSku' })
    class IsSku implements ValidatorConstraintInterface {
      validate(value: unknown) {
        return typeof value === 'string' && value.startsWith('SKU-');
      }
      defaultMessage(args: ValidationArguments) {
        return `${String(args.value)} is not a SKU`;
      }
    }

    class Leaky {
      @IsString({ message: '$property got "$value"' }) a!: string;
      @MinLength(100, { message: (args: ValidationArguments) => `too short: ${String(args.value)}` }) b!: string;
      @Validate(IsSku) c!: string;
      @IsString({
        message: (args: ValidationArguments) => `peeked ${String((args.object as Record<string, unknown>).b)}`,
      })
      d!: string;
      @MinLength(100) e!: string;
    }

    it('re-renders custom messages with a placeholder', async () => {
      const cast = new DtoCaster().compile(Leaky);
      const issues = issuesOf(await cast({ a: 12345678, b: SECRET, c: SECRET, d: 42424242, e: SECRET }));
      assert.equal(issues.length, 5);
      for (const issue of issues) {
        assert.ok(!issue.message.includes(SECRET), issue.message);
        assert.ok(!issue.message.includes('12345678') && !issue.message.includes('42424242'), issue.message);
      }
      const byPath = Object.fromEntries(issues.map((issue) => [issue.path, issue.message]));
      assert.equal(byPath.a, 'got "[value]"'); // the leading $property is tidied away, as the path names it
      assert.equal(byPath.b, 'too short: [value]');
      assert.equal(byPath.c, '[value] is not a SKU');
      assert.equal(byPath.d, 'peeked undefined');
      assert.equal(byPath.e, 'must be longer than or equal to 100 characters');
    });
  });

  describe('coerceStrings', () => {
    class PromptArgs {
      @IsInt() count!: number;
      @IsBoolean() loud!: boolean;
      @IsString() name!: string;
      @IsOptional() @IsInt({ each: true }) ids?: number[];
    }

    it('converts exact spellings of the declared primitive type', async () => {
      const cast = new DtoCaster().compile(PromptArgs, { coerceStrings: true });
      const input = { count: '42', loud: 'false', name: '7', ids: ['1', '2'] };
      const result = await cast(input);
      assert.equal(result.ok, true);
      assert.deepEqual(
        { ...(result as { value: PromptArgs }).value },
        { count: 42, loud: false, name: '7', ids: [1, 2] },
      );
      assert.deepEqual(input, { count: '42', loud: 'false', name: '7', ids: ['1', '2'] }, 'input must stay untouched');
    });

    it('leaves other strings for validation to refuse', async () => {
      const cast = new DtoCaster().compile(PromptArgs, { coerceStrings: true });
      const issues = issuesOf(await cast({ count: '4.5', loud: 'yes', name: 'x' }));
      assert.deepEqual(
        issues.map((issue) => `${issue.path}:${issue.rule}`),
        ['count:isInt', 'loud:isBoolean'],
      );
    });

    it('is off by default', async () => {
      const cast = new DtoCaster().compile(PromptArgs);
      assert.equal((await cast({ count: '42', loud: true, name: 'x' })).ok, false);
    });
  });
});

describe('formatIssues', () => {
  it('lists each issue with its path and rule', () => {
    const text = formatIssues(
      [
        { path: 'title', rule: 'isString', message: 'must be a string' },
        { path: '', rule: 'type', message: 'must be an object' },
      ],
      'tool "create_task"',
    );
    assert.equal(
      text,
      'Invalid arguments for tool "create_task":\n- title: must be a string (isString)\n- (root): must be an object (type)',
    );
  });

  it('caps long lists', () => {
    const issues = Array.from({ length: 25 }, (_, i) => ({ path: `p${i}`, rule: 'r', message: 'm' }));
    const lines = formatIssues(issues, 'prompt "x"', 20).split('\n');
    assert.equal(lines.length, 22);
    assert.equal(lines.at(-1), '- … and 5 more');
  });
});
