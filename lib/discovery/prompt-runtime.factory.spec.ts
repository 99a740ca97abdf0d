import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from 'class-transformer';
import { IsArray, IsEnum, IsInt, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { of } from 'rxjs';
import { SchemaProperty } from '../schema/schema-property.decorator.js';
import { PromptRuntimeFactory } from './prompt-runtime.factory.js';

enum Language {
  TypeScript = 'typescript',
  Python = 'python',
}

class ReviewArgs {
  @SchemaProperty({ description: 'The code to review.', title: 'Code' })
  @IsString()
  code!: string;

  @SchemaProperty({ description: 'Its language.' })
  @IsOptional()
  @IsEnum(Language)
  language?: Language;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10)
  depth?: number;
}

class Inner {
  @IsString()
  x!: string;
}

class NestedArgs {
  @ValidateNested()
  @Type(() => Inner)
  inner!: Inner;
}

class ListArgs {
  @IsArray()
  @IsString({ each: true })
  tags!: string[];
}

const factory = new PromptRuntimeFactory();
const noop = () => of('x');

describe('PromptRuntimeFactory', () => {
  it('advertises the DTO properties as arguments, in order, with descriptions and required flags', () => {
    const runtime = factory.build({ name: 'review', description: 'Review code', args: ReviewArgs }, noop, 'T#review');
    assert.deepEqual(runtime.descriptor, {
      name: 'review',
      description: 'Review code',
      arguments: [
        { name: 'code', title: 'Code', description: 'The code to review.', required: true },
        { name: 'language', description: 'Its language.', required: false },
        { name: 'depth', required: false },
      ],
    });
    assert.deepEqual(runtime.arguments, [
      { name: 'code' },
      { name: 'language', enumValues: ['typescript', 'python'] },
      { name: 'depth' },
    ]);
    assert.ok(Object.isFrozen(runtime.descriptor));
  });

  it('casts string arguments through the DTO and names what is wrong', async () => {
    const runtime = factory.build({ name: 'review', description: 'Review code', args: ReviewArgs }, noop, 'T#review');
    const ok = await runtime.parseArguments({ code: 'x = 1', depth: '3' });
    assert.ok(ok.ok);
    assert.ok(ok.value instanceof ReviewArgs);
    assert.equal((ok.value as ReviewArgs).depth, 3);
    const missing = await runtime.parseArguments({ depth: '3' });
    assert.deepEqual(missing, {
      ok: false,
      message: 'Missing required argument "code" for prompt "review". Call prompts/list to see its arguments.',
    });
    const bad = await runtime.parseArguments({ code: 'x', depth: '11', language: 'cobol', extra: 'y' });
    assert.equal(bad.ok, false);
    const message = (bad as { message: string }).message;
    assert.match(message, /^Invalid arguments for prompt "review":/);
    assert.match(message, /depth: must not be greater than 10/);
    assert.match(message, /language: /);
    assert.match(message, /extra: is not an allowed property/);
  });

  it('refuses arguments when the prompt declares none', async () => {
    const runtime = factory.build({ name: 'simple', description: 'Simple' }, noop, 'T#simple');
    assert.equal(runtime.descriptor.arguments, undefined);
    assert.deepEqual(await runtime.parseArguments({}), { ok: true, value: {} });
    assert.match(
      ((await runtime.parseArguments({ a: '1' })) as { message: string }).message,
      /takes no arguments, but got "a"/,
    );
  });

  it('fails the bootstrap for bad names, missing descriptions and non-flat arguments', () => {
    assert.throws(
      () => factory.build({ name: 'has space', description: 'x' }, noop, 'T#a'),
      /Prompt name "has space" declared by "T#a" does not match/,
    );
    assert.throws(
      () => factory.build({ name: 'ok', description: ' ' }, noop, 'T#b'),
      /Prompt "ok" declared by "T#b" has no description/,
    );
    assert.throws(
      () => factory.build({ name: 'n', description: 'x', args: NestedArgs }, noop, 'T#c'),
      /"NestedArgs\.inner" as an argument: prompt arguments arrive as flat strings/,
    );
    assert.throws(
      () => factory.build({ name: 'l', description: 'x', args: ListArgs }, noop, 'T#d'),
      /"ListArgs\.tags"/,
    );
  });
});
