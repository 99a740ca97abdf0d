import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Exclude, Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDate,
  IsDateString,
  IsDefined,
  IsEmail,
  IsEnum,
  IsIn,
  IsInt,
  IsNegative,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsPositive,
  IsRFC3339,
  IsString,
  IsUrl,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { JsonSchemaFactory } from './json-schema.factory.js';
import { regExpToPattern } from './regexp-pattern.js';
import { SchemaProperty, type SchemaPropertyOptions } from './schema-property.decorator.js';
import type { JsonSchema } from './json-schema.types.js';
import { generationError } from '../../test/utils/schema.js';

const props = (schema: JsonSchema) => schema.properties as Record<string, JsonSchema>;

enum Priority {
  Low = 'low',
  High = 'high',
}
enum Level {
  One = 1,
  Two = 2,
}

/** These cases pin the nullable mapping (`nullableOptionals`); the portable default is pinned below. */
const nullableFactory = () => new JsonSchemaFactory({ nullableOptionals: true });

describe('JsonSchemaFactory', () => {
  it('by default emits one type per optional property (portable), null only on request', () => {
    class Portable {
      @IsString() title!: string;
      @IsOptional() @IsString() note?: string;
      @IsOptional() @IsInt() @Min(1) page?: number;
      @IsOptional() @IsEnum(Level) level?: Level;
      @IsOptional() @SchemaProperty({ nullable: true }) @IsString() cleared?: string | null;
    }
    assert.deepEqual(new JsonSchemaFactory().create(Portable), {
      type: 'object',
      properties: {
        title: { type: 'string' },
        note: { type: 'string' },
        page: { type: 'integer', minimum: 1 },
        level: { type: 'integer', enum: [1, 2] },
        cleared: { type: ['string', 'null'] },
      },
      required: ['title'],
      additionalProperties: false,
    });
    assert.deepEqual(nullableFactory().create(Portable).properties, {
      title: { type: 'string' },
      note: { type: ['string', 'null'] },
      page: { type: ['integer', 'null'], minimum: 1 },
      level: { type: ['integer', 'null'], enum: [1, 2, null] },
      cleared: { type: ['string', 'null'] },
    });
  });

  it('emits a closed 2020-12 object root without $schema', () => {
    class CreateTaskDto {
      @IsString() title!: string;
      @IsOptional() @IsString() note?: string;
    }
    const schema = nullableFactory().create(CreateTaskDto);
    assert.deepEqual(schema, {
      type: 'object',
      properties: { title: { type: 'string' }, note: { type: ['string', 'null'] } },
      required: ['title'],
      additionalProperties: false,
    });
    assert.equal('$schema' in schema, false);
  });

  it('omits `required` when nothing is required', () => {
    class OnlyOptional {
      @IsOptional() @IsInt() page?: number;
    }
    assert.equal('required' in nullableFactory().create(OnlyOptional), false);
  });

  it('maps type validators and numeric bounds', () => {
    class Numbers {
      @IsInt() @Min(1) @Max(10) count!: number;
      @IsNumber() ratio!: number;
      @IsPositive() positive!: number;
      @IsNegative() negative!: number;
      @IsBoolean() flag!: boolean;
      @IsInt() @IsNumber() both!: number;
    }
    const p = props(nullableFactory().create(Numbers));
    assert.deepEqual(p.count, { type: 'integer', minimum: 1, maximum: 10 });
    assert.deepEqual(p.ratio, { type: 'number' });
    assert.deepEqual(p.positive, { type: 'number', exclusiveMinimum: 0 });
    assert.deepEqual(p.negative, { type: 'number', exclusiveMaximum: 0 });
    assert.deepEqual(p.flag, { type: 'boolean' });
    assert.deepEqual(p.both, { type: 'integer' });
  });

  it('maps string lengths, IsNotEmpty, patterns and formats', () => {
    class Strings {
      @IsString() @MinLength(2) @MaxLength(5) name!: string;
      @IsString() @Length(3, 4) code!: string;
      @IsString() @IsNotEmpty() label!: string;
      @Matches(/^[a-z]+$/) slug!: string;
      @IsEmail() email!: string;
      @IsUUID() id!: string;
      @IsUrl() site!: string;
      @IsRFC3339() at!: string;
      @IsDateString() day!: string;
    }
    const p = props(nullableFactory().create(Strings));
    assert.deepEqual(p.name, { type: 'string', minLength: 2, maxLength: 5 });
    assert.deepEqual(p.code, { type: 'string', minLength: 3, maxLength: 4 });
    assert.deepEqual(p.label, { type: 'string', minLength: 1 });
    assert.deepEqual(p.slug, { type: 'string', pattern: '^[a-z]+$' });
    assert.deepEqual(p.email, { type: 'string', format: 'email' });
    assert.deepEqual(p.id, { type: 'string', format: 'uuid' });
    assert.deepEqual(p.site, { type: 'string', format: 'uri' });
    assert.deepEqual(p.at, { type: 'string', format: 'date-time' });
    // IsDateString also accepts "2024-01-01" and week dates: claiming date-time would be false.
    assert.deepEqual(p.day, { type: 'string' });
  });

  it('maps enums: string, numeric (without reverse mappings) and IsIn', () => {
    class Enums {
      @IsEnum(Priority) priority!: Priority;
      @IsEnum(Level) level!: Level;
      @IsIn(['a', 'b']) letter!: string;
      @IsIn([1, 'x']) mixed!: string | number;
      @IsInt() @IsIn([1, 2, 'three']) filtered!: number;
    }
    const p = props(nullableFactory().create(Enums));
    assert.deepEqual(p.priority, { type: 'string', enum: ['low', 'high'] });
    assert.deepEqual(p.level, { type: 'integer', enum: [1, 2] });
    assert.deepEqual(p.letter, { type: 'string', enum: ['a', 'b'] });
    assert.deepEqual(p.mixed, { type: ['integer', 'string'], enum: [1, 'x'] });
    assert.deepEqual(p.filtered, { type: 'integer', enum: [1, 2] });
  });

  it('maps arrays of primitives with sizes, uniqueness and each-validators', () => {
    class Arrays {
      @IsArray()
      @ArrayMinSize(1)
      @ArrayMaxSize(3)
      @ArrayUnique()
      @IsString({ each: true })
      @MaxLength(8, { each: true })
      tags!: string[];
      @ArrayNotEmpty() @IsInt({ each: true }) ids!: number[];
      @IsArray() @Type(() => Number) scores!: number[];
      @IsArray() @IsEnum(Priority, { each: true }) priorities!: Priority[];
    }
    const p = props(nullableFactory().create(Arrays));
    assert.deepEqual(p.tags, {
      type: 'array',
      minItems: 1,
      maxItems: 3,
      uniqueItems: true,
      items: { type: 'string', maxLength: 8 },
    });
    assert.deepEqual(p.ids, { type: 'array', minItems: 1, items: { type: 'integer' } });
    assert.deepEqual(p.scores, { type: 'array', items: { type: 'number' } });
    assert.deepEqual(p.priorities, { type: 'array', items: { type: 'string', enum: ['low', 'high'] } });
  });

  it('inlines nested DTOs and arrays of DTOs, dropping uniqueItems for object items', () => {
    class Address {
      @IsString() zip!: string;
    }
    class Line {
      @IsInt() qty!: number;
    }
    class Order {
      @IsDefined() @ValidateNested() @Type(() => Address) address!: Address;
      @IsArray() @ArrayUnique() @ValidateNested({ each: true }) @Type(() => Line) lines!: Line[];
      @IsOptional() @ValidateNested() @Type(() => Address) billing?: Address;
    }
    const schema = nullableFactory().create(Order);
    const address = {
      type: 'object',
      properties: { zip: { type: 'string' } },
      required: ['zip'],
      additionalProperties: false,
    };
    const p = props(schema);
    assert.deepEqual(p.address, address);
    assert.deepEqual(p.lines, {
      type: 'array',
      items: {
        type: 'object',
        properties: { qty: { type: 'integer' } },
        required: ['qty'],
        additionalProperties: false,
      },
    });
    assert.deepEqual(p.billing, { ...address, type: ['object', 'null'] });
    assert.deepEqual(schema.required, ['address', 'lines']);
    assert.equal('$defs' in schema, false);
  });

  it('treats @ValidateNested alone as optional, as class-validator skips undefined', () => {
    class Inner {
      @IsString() a!: string;
    }
    class Outer {
      @ValidateNested() @Type(() => Inner) inner!: Inner;
    }
    assert.equal('required' in nullableFactory().create(Outer), false);
  });

  it('puts only cyclic DTOs in $defs, a recursive root included', () => {
    class TreeNode {
      @IsString() name!: string;
      @IsOptional() @ValidateNested({ each: true }) @Type(() => TreeNode) children?: TreeNode[];
    }
    class Forest {
      @IsString() owner!: string;
      @IsDefined() @ValidateNested() @Type(() => TreeNode) tree!: TreeNode;
    }
    const root = nullableFactory().create(TreeNode);
    const node = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        children: { type: ['array', 'null'], items: { $ref: '#/$defs/TreeNode' } },
      },
      required: ['name'],
      additionalProperties: false,
    };
    assert.deepEqual(root, { ...node, $defs: { TreeNode: node } });

    const forest = nullableFactory().create(Forest);
    assert.deepEqual(props(forest).tree, { $ref: '#/$defs/TreeNode' });
    const defs = forest.$defs as Record<string, JsonSchema>;
    assert.deepEqual(props(defs.TreeNode!).children, { type: ['array', 'null'], items: { $ref: '#/$defs/TreeNode' } });
  });

  it('disambiguates two distinct cyclic classes with the same name', () => {
    const makeNode = () => {
      class Node {
        @IsString() v!: string;
        @IsOptional() @ValidateNested() @Type(() => Node) next?: Node;
      }
      return Node;
    };
    const A = makeNode();
    const B = makeNode();
    class Pair {
      @IsDefined() @ValidateNested() @Type(() => A) a!: InstanceType<typeof A>;
      @IsDefined() @ValidateNested() @Type(() => B) b!: InstanceType<typeof B>;
    }
    const schema = nullableFactory().create(Pair);
    assert.deepEqual(Object.keys(schema.$defs as object), ['Node', 'Node_2']);
    assert.deepEqual(props(schema).a, { $ref: '#/$defs/Node' });
    assert.deepEqual(props(schema).b, { $ref: '#/$defs/Node_2' });
  });

  it('inherits parent properties first; a child validator replaces the parent ones on that property', () => {
    class Base {
      @IsString() id!: string;
      @IsOptional() @IsString() @MaxLength(10) name?: string;
    }
    class Child extends Base {
      @IsInt() @Min(0) age!: number;
      @MaxLength(3) declare name?: string;
    }
    const schema = nullableFactory().create(Child);
    assert.deepEqual(Object.keys(props(schema)), ['id', 'name', 'age']);
    // class-validator keeps the parent's IsOptional (another metadata type) but replaces its custom validators.
    assert.deepEqual(props(schema).name, { type: ['string', 'null'], maxLength: 3 });
    assert.deepEqual(schema.required, ['id', 'age']);
    assert.deepEqual(Object.keys(props(nullableFactory().create(Base))), ['id', 'name']);
  });

  it('maps Date with @Type(() => Date) to a date-time string', () => {
    class When {
      @IsDate() @Type(() => Date) at!: Date;
      @IsOptional() @IsDate({ each: true }) @Type(() => Date) also?: Date[];
    }
    const p = props(nullableFactory().create(When));
    assert.deepEqual(p.at, { type: 'string', format: 'date-time' });
    assert.deepEqual(p.also, { type: ['array', 'null'], items: { type: 'string', format: 'date-time' } });
  });

  it('reads defaults from field initialisers and stops requiring those properties', () => {
    class Paging {
      @IsInt() @Min(1) limit: number = 20;
      @IsArray() @IsString({ each: true }) tags: string[] = [];
    }
    const schema = nullableFactory().create(Paging);
    assert.deepEqual(props(schema).limit, { type: 'integer', minimum: 1, default: 20 });
    assert.deepEqual(props(schema).tags, { type: 'array', items: { type: 'string' }, default: [] });
    assert.equal('required' in schema, false);
  });

  it('keeps ValidateIf properties out of `required`', () => {
    class Conditional {
      @IsBoolean() hasNote!: boolean;
      @ValidateIf((o: Conditional) => o.hasNote) @IsString() note?: string;
    }
    assert.deepEqual(nullableFactory().create(Conditional).required, ['hasNote']);
  });

  it('applies @SchemaProperty annotations, overrides and raw schema last', () => {
    class Annotated {
      @SchemaProperty({ description: 'Title', title: 'T', examples: ['x'], deprecated: true, default: 'd' })
      @IsString()
      title!: string;
      @SchemaProperty({ format: 'date' }) @IsString() day!: string;
      @SchemaProperty({ type: ['string', 'number'] }) @Allow() value!: string | number;
      @SchemaProperty({ items: { type: 'object' } }) @IsArray() blobs!: unknown[];
      @SchemaProperty({ enum: Priority }) @IsString() p!: string;
      @SchemaProperty({ nullable: false }) @IsOptional() @IsString() notNull?: string;
      @SchemaProperty({ required: true, schema: { maxLength: 3 } }) @IsOptional() @IsString() raw?: string;
      @SchemaProperty({ items: () => Number }) @IsArray() nums!: number[];
    }
    const schema = nullableFactory().create(Annotated);
    const p = props(schema);
    assert.deepEqual(p.title, {
      title: 'T',
      description: 'Title',
      type: 'string',
      default: 'd',
      examples: ['x'],
      deprecated: true,
    });
    assert.deepEqual(Object.keys(p.title!).slice(0, 2), ['title', 'description']);
    assert.deepEqual(p.day, { type: 'string', format: 'date' });
    assert.deepEqual(p.value, { type: ['string', 'number'] });
    assert.deepEqual(p.blobs, { type: 'array', items: { type: 'object' } });
    assert.deepEqual(p.p, { type: 'string', enum: ['low', 'high'] });
    assert.deepEqual(p.notNull, { type: 'string' });
    assert.deepEqual(p.raw, { type: ['string', 'null'], maxLength: 3 });
    assert.ok((schema.required as string[]).includes('raw'));
    assert.deepEqual(p.nums, { type: 'array', items: { type: 'number' } });
  });

  it('@SchemaProperty never mutates the options object it is given', () => {
    const options: SchemaPropertyOptions = { description: 'shared' };
    const before = JSON.stringify(options);
    class One {
      @SchemaProperty(options) @IsString() a!: string;
    }
    class Two {
      @SchemaProperty(options) @SchemaProperty({ title: 'x' }) @IsString() b!: string;
    }
    nullableFactory().create(One);
    nullableFactory().create(Two);
    assert.equal(JSON.stringify(options), before);
    assert.equal(Object.isFrozen(options), false);
    const fragment = { items: { type: 'string' } };
    class Raw {
      @SchemaProperty({ schema: fragment }) @IsArray() list!: string[];
    }
    const schema = nullableFactory().create(Raw);
    assert.deepEqual(props(schema).list, { type: 'array', items: { type: 'string' } });
    assert.equal(Object.isFrozen(fragment.items), false, "the frozen schema must not share the caller's objects");
  });

  it('drops @Exclude()d properties, and refuses required ones', () => {
    class WithSecret {
      @IsString() name!: string;
      @Exclude() @IsOptional() @IsString() internal?: string;
    }
    assert.deepEqual(Object.keys(props(nullableFactory().create(WithSecret))), ['name']);
    class Broken {
      @Exclude() @IsString() internal!: string;
    }
    const error = generationError(() => nullableFactory().create(Broken));
    assert.match(error.message, /"Broken\.internal"/);
  });

  describe('undescribable properties', () => {
    it('names Dto.property for a union (design:type Object) and says how to fix it', () => {
      class UnionDto {
        @IsOptional() value?: string | number;
      }
      const error = generationError(() => nullableFactory().create(UnionDto));
      assert.equal(error.dtoName, 'UnionDto');
      assert.equal(error.propertyName, 'value');
      assert.match(error.message, /Cannot generate a JSON Schema for "UnionDto\.value"/);
      assert.match(error.message, /@SchemaProperty\(\{ type \}\)/);
    });

    it('refuses an array without an item type', () => {
      class Bag {
        @IsArray() things!: unknown[];
      }
      const error = generationError(() => nullableFactory().create(Bag));
      assert.match(error.message, /"Bag\.things".*item type.*@Type\(\(\) => X\)/);
    });

    it('refuses @ValidateNested without @Type', () => {
      class Address {
        @IsString() zip!: string;
      }
      class NoType {
        @ValidateNested() address!: Address;
      }
      const error = generationError(() => nullableFactory().create(NoType));
      assert.match(error.message, /"NoType\.address".*@Type\(\(\) => Address\)/);
    });

    it('refuses a nested DTO without @ValidateNested', () => {
      class Address {
        @IsString() zip!: string;
      }
      class Forgot {
        @IsDefined() address!: Address;
      }
      const error = generationError(() => nullableFactory().create(Forgot));
      assert.match(error.message, /"Forgot\.address".*@ValidateNested\(\)/);
    });

    it('refuses a nested class that has no validators', () => {
      class Bare {
        x!: string;
      }
      class Holder {
        @ValidateNested() @Type(() => Bare) bare!: Bare;
      }
      assert.match(generationError(() => nullableFactory().create(Holder)).message, /"Holder\.bare".*"Bare"/);
    });

    it('refuses a property class-validator does not know', () => {
      class OnlyDocs {
        @SchemaProperty({ description: 'x' }) note!: string;
      }
      const error = generationError(() => nullableFactory().create(OnlyDocs));
      assert.match(error.message, /"OnlyDocs\.note".*@Allow\(\)/);
    });

    it('refuses @IsDate without @Type(() => Date)', () => {
      class NoDateType {
        @IsDate() at!: Date;
      }
      assert.match(generationError(() => nullableFactory().create(NoDateType)).message, /@Type\(\(\) => Date\)/);
    });

    it('refuses contradictory type validators', () => {
      class Contradiction {
        @IsString() @IsInt() x!: string;
      }
      assert.match(
        generationError(() => nullableFactory().create(Contradiction)).message,
        /"Contradiction\.x".*incompatible/,
      );
    });

    it('accepts a free-form object with @IsObject', () => {
      class Meta {
        @IsObject() meta!: Record<string, unknown>;
      }
      assert.deepEqual(props(nullableFactory().create(Meta)).meta, { type: 'object' });
    });
  });

  describe('caching', () => {
    it('returns the same frozen schema for the same class', () => {
      class Cached {
        @IsString() a!: string;
      }
      const factory = nullableFactory();
      const first = factory.create(Cached);
      assert.equal(factory.create(Cached), first);
      assert.ok(Object.isFrozen(first));
      assert.ok(Object.isFrozen(props(first).a));
    });

    it('keys by class identity: two classes named CreateDto do not collide', () => {
      const makeA = () => {
        class CreateDto {
          @IsString() title!: string;
        }
        return CreateDto;
      };
      const makeB = () => {
        class CreateDto {
          @IsInt() count!: number;
        }
        return CreateDto;
      };
      const A = makeA();
      const B = makeB();
      assert.equal(A.name, B.name);
      const factory = nullableFactory();
      assert.deepEqual(Object.keys(props(factory.create(A))), ['title']);
      assert.deepEqual(Object.keys(props(factory.create(B))), ['count']);
    });
  });

  describe('regExpToPattern', () => {
    const accepts = (pattern: string, value: string) => new RegExp(pattern, 'u').test(value);

    it('keeps plain patterns and removes g/d', () => {
      assert.equal(regExpToPattern(/^a+$/), '^a+$');
      assert.equal(regExpToPattern(/^a+$/g), '^a+$');
    });

    it('expands i for ASCII letters, in and out of classes', () => {
      const pattern = regExpToPattern(/^[a-c_]x\u0041$/i);
      for (const value of ['ax' + 'A', 'BXa', 'cxa']) assert.ok(accepts(pattern, value), `${pattern} ${value}`);
      assert.ok(!accepts(pattern, 'dxa'));
      const named = regExpToPattern(/(?<year>\d{4})-y/i);
      assert.ok(accepts(named, '2024-Y'));
      assert.ok(named.includes('(?<year>'));
    });

    it('makes s, y and non-u syntax explicit', () => {
      assert.ok(accepts(regExpToPattern(/a.b/s), 'a\nb'));
      const sticky = regExpToPattern(/ab/y);
      assert.ok(accepts(sticky, 'abc') && !accepts(sticky, 'cab'));
      const email = regExpToPattern(/^[\w-.]+@x\.io$/);
      assert.ok(accepts(email, 'a-b.c@x.io') && !accepts(email, 'a b@x.io'));
      assert.ok(accepts(regExpToPattern(/^a{$/), 'a{'));
    });

    it('refuses what a flag-less pattern cannot say', () => {
      assert.throws(() => regExpToPattern(/^a$/m), /'m' flag/);
      assert.throws(() => regExpToPattern(/é/i), /ASCII/);
      assert.throws(() => regExpToPattern(/(a)\1/i), /backreference/);
      assert.throws(() => regExpToPattern(new RegExp('\\p{L}')), /Unicode property/);
    });

    it('accepts a flag-less m and string patterns with modifiers through @Matches', () => {
      assert.equal(regExpToPattern(/abc/m), 'abc');
      class Codes {
        @Matches('^ab$', 'i') code!: string;
      }
      const pattern = props(nullableFactory().create(Codes)).code!.pattern as string;
      assert.ok(accepts(pattern, 'AB') && accepts(pattern, 'aB') && !accepts(pattern, 'abc'));
    });

    it('reports an inexpressible @Matches with Dto.property', () => {
      class Lines {
        @Matches(/^x$/m) text!: string;
      }
      assert.match(generationError(() => nullableFactory().create(Lines)).message, /"Lines\.text".*@SchemaProperty/);
    });
  });
});
