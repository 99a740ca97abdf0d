import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Exclude, Transform, Type } from 'class-transformer';
import {
  IsBoolean,
  IsEnum,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
  registerDecorator,
  validate,
} from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { DtoCaster } from './dto-caster.js';
import { JsonSchemaFactory } from './json-schema.factory.js';
import { compileJsonSchema } from './json-schema.validator.js';
import { SchemaProperty } from './schema-property.decorator.js';
import { planSchemaDecidedCast } from './schema-decided.js';

enum Level {
  Low = 'low',
  High = 'high',
}
enum Rank {
  First = 1,
  Second = 2,
}

class FlatDto {
  @IsString() @MaxLength(5) name!: string;
  @IsInt() @Min(1) @Max(10) count!: number;
  @IsOptional() @IsNumber() ratio?: number;
  @IsOptional() @IsBoolean() on?: boolean;
  @IsOptional() @IsEnum(Level) level?: Level;
  @IsOptional() @IsEnum(Rank) rank?: Rank;
  @IsOptional() @IsIn(['a', 'b', 3]) pick?: string | number;
}

class DefaultsDto {
  @IsString() name!: string;
  @IsOptional() @IsInt() @Max(5) limit?: number = 10; // a default its own rule refuses
}

function planOf(type: new () => object, factory = new JsonSchemaFactory()) {
  const schema = factory.create(type);
  return planSchemaDecidedCast(type, schema, compileJsonSchema(schema));
}

function IsStringTooNamed(kind: 'sync' | 'async') {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isString',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) =>
          kind === 'async' ? Promise.resolve(value === 'ok') : typeof value === 'string' && value.startsWith('ok'),
      },
    });
}

// Values of every JSON kind, and ones near each rule's edge.
const SAMPLES: unknown[] = [
  undefined,
  null,
  true,
  false,
  0,
  1,
  -1,
  5,
  10,
  11,
  2.5,
  1e21,
  '',
  'a',
  'abcde',
  'abcdef',
  '5',
  'low',
  'high',
  'Low',
  'First',
  'a',
  'b',
  3,
  {},
  [],
  ['a'],
];

describe('schema-decided cast', () => {
  it('builds the instance class-transformer would, for arguments class-validator accepts', async () => {
    const decide = planOf(FlatDto);
    assert.ok(decide, 'a flat DTO of built-in rules is decided by its schema');
    const args = { name: 'abc', count: 3, ratio: 0.5, on: true, level: 'high', rank: 2, pick: 3 };
    const built = decide(args);
    assert.ok(built instanceof FlatDto);
    assert.deepEqual({ ...built }, { ...plainToInstance(FlatDto, args) });
  });

  it('never accepts what class-validator refuses (every sample, in every property)', async () => {
    const decide = planOf(FlatDto)!;
    const base: Record<string, unknown> = { name: 'abc', count: 3 };
    let accepted = 0;
    let refused = 0;
    for (const key of ['name', 'count', 'ratio', 'on', 'level', 'rank', 'pick', 'extra']) {
      for (const value of SAMPLES) {
        const args = { ...base, [key]: value };
        if (value === undefined) delete args[key];
        const built = decide(args);
        const errors = await validate(plainToInstance(FlatDto, args), {
          whitelist: true,
          forbidNonWhitelisted: true,
          forbidUnknownValues: true,
        });
        if (built) {
          accepted++;
          assert.deepEqual(errors, [], `${key}=${JSON.stringify(value)} was taken without class-validator's consent`);
        } else refused++;
      }
    }
    assert.ok(accepted > 20 && refused > 20, `both outcomes are exercised (${accepted} taken, ${refused} left)`);
  });

  it('leaves non-JSON numbers to class-validator', () => {
    const decide = planOf(FlatDto)!;
    for (const ratio of [Number.NaN, Infinity, -Infinity])
      assert.equal(decide({ name: 'a', count: 1, ratio }), undefined);
  });

  it("checks a constructor's defaults, which the arguments did not carry", async () => {
    const decide = planOf(DefaultsDto)!;
    assert.equal(decide({ name: 'a' }), undefined, 'limit = 10 breaks @Max(5): the full path reports it');
    assert.ok(decide({ name: 'a', limit: 2 }) instanceof DefaultsDto);
    const outcome = await new DtoCaster().caster(DefaultsDto)({ name: 'a' });
    assert.equal(outcome.ok, false);
  });

  it('is not planned for what the schema cannot decide', () => {
    class Short {
      @IsString() @MinLength(2) name!: string; // class-validator does not count a variation selector
    }
    class Transformed {
      @Transform(({ value }) => String(value).trim()) @IsString() @MaxLength(3) name!: string;
    }
    class Excluded {
      @IsString() name!: string;
      @Exclude() @IsOptional() @IsString() secret?: string;
    }
    class Child {
      @IsString() zip!: string;
    }
    class Nested {
      @ValidateNested() @Type(() => Child) child!: Child;
    }
    class Conditional {
      @ValidateIf((o: { on?: boolean }) => o.on === true) @IsString() name?: string;
      @IsOptional() @IsBoolean() on?: boolean;
    }
    class Grouped {
      @IsString({ groups: ['create'] }) name!: string;
    }
    class Each {
      @IsString({ each: true }) tags!: string[];
    }
    class Decimals {
      @IsNumber({ maxDecimalPlaces: 2 }) price!: number;
    }
    class Getter {
      @IsString() name!: string;
      @IsOptional() @IsString() get label(): string {
        return 'fixed';
      }
    }
    class NamedLikeBuiltInSync {
      @IsStringTooNamed('sync') name!: string;
    }
    class NamedLikeBuiltInAsync {
      @IsStringTooNamed('async') name!: string;
    }
    // The schema may be made looser than the rules by hand: each way is caught.
    class LooserBound {
      @SchemaProperty({ schema: { maximum: 100 } }) @IsInt() @Max(10) count!: number;
    }
    class LooserNull {
      @SchemaProperty({ nullable: true }) @IsString() name!: string;
    }
    class LooserRequired {
      @SchemaProperty({ required: false }) @IsString() name!: string;
    }
    class LooserType {
      @SchemaProperty({ type: ['string', 'integer'] }) @IsString() name!: string;
    }
    class LooserEnum {
      @SchemaProperty({ enum: ['low', 'medium'] }) @IsEnum(Level) level!: Level;
    }
    class LooserLength {
      @SchemaProperty({ schema: { maxLength: 9 } }) @IsString() @MaxLength(5) name!: string;
    }
    for (const type of [
      Short,
      Transformed,
      Excluded,
      Nested,
      Conditional,
      Grouped,
      Each,
      Decimals,
      Getter,
      NamedLikeBuiltInSync,
      NamedLikeBuiltInAsync,
      LooserBound,
      LooserNull,
      LooserRequired,
      LooserType,
      LooserEnum,
      LooserLength,
    ]) {
      let plan: unknown;
      try {
        plan = planOf(type);
      } catch {
        plan = undefined; // a DTO the schema factory refuses has no shortcut either
      }
      assert.equal(plan, undefined, `${type.name} takes the full path`);
    }
  });

  it('keeps the full path for a custom rule that took a built-in name, which then still runs', async () => {
    class NamedLikeBuiltInAsync {
      @IsStringTooNamed('async') name!: string;
    }
    const outcome = await new DtoCaster().caster(NamedLikeBuiltInAsync)({ name: 'not ok' });
    assert.equal(outcome.ok, false);
  });
});
