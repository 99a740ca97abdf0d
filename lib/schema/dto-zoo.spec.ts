/**
 * The DTO zoo: for each DTO, the DtoCaster (class-validator, then the emitted schema) and Ajv on
 * the emitted schema alone must agree on hand-listed valid values and on valid/invalid values
 * generated from the schema (wrong type per property, bounds, missing required, extra property,
 * bad enum member, item types, nested objects, arrays for objects and objects for arrays). The
 * caster never accepts what the schema refuses; where class-validator refuses what the schema
 * allows (formats, which are annotations), the case is listed as a gap, with the reason.
 */
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  ArrayNotEmpty,
  ArrayUnique,
  Equals,
  IsArray,
  IsBoolean,
  IsDate,
  IsDateString,
  IsDefined,
  IsDivisibleBy,
  IsEmail,
  IsEnum,
  IsIn,
  IsInt,
  IsNegative,
  IsNotEmpty,
  IsNotEmptyObject,
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
  NotEquals,
  ValidateNested,
} from 'class-validator';
import { DtoCaster, type ClassConstructor } from './dto-caster.js';
import { JsonSchemaFactory } from './json-schema.factory.js';
import type { JsonSchema } from './json-schema.types.js';
import { compileJsonSchema } from './json-schema.validator.js';
import { SchemaProperty } from './schema-property.decorator.js';

// ---------------------------------------------------------------------------------------------
// The zoo
// ---------------------------------------------------------------------------------------------

enum Status {
  Open = 'open',
  Done = 'done',
}
enum Rank {
  Low = 1,
  Mid = 2,
  High = 3,
}

class PrimitivesDto {
  @IsString() name!: string;
  @IsInt() count!: number;
  @IsNumber() ratio!: number;
  @IsBoolean() flag!: boolean;
}

class OptionalNullableDto {
  @IsOptional() @IsString() note?: string | null;
  @IsOptional() @IsInt() limit?: number | null;
  @IsOptional() @IsBoolean() archived?: boolean | null;
  @IsOptional() @IsEnum(Status) status?: Status | null;
  @IsString() id!: string;
}

class NumericRangeDto {
  @IsInt() @Min(1) @Max(10) stars!: number;
  @IsNumber() @Min(-5.5) @Max(5.5) offset!: number;
  @IsPositive() price!: number;
  @IsNegative() debt!: number;
  @IsInt() @IsDivisibleBy(5) step!: number;
}

class StringLengthDto {
  @IsString() @MinLength(2) @MaxLength(6) code!: string;
  @IsString() @Length(3, 5) pin!: string;
  @IsString() @IsNotEmpty() label!: string;
  @IsString() @MaxLength(4, { message: 'too long: $value' }) short!: string;
}

class PatternDto {
  @Matches(/^[a-z0-9-]+$/) slug!: string;
  @IsString() @Matches(/^sku-\d{4}$/i) sku!: string;
  @Matches('^\\d{3}$') area!: string;
  @IsString() @Matches(/^[A-Z]/) @Matches(/\d$/) both!: string;
  @IsString() @NotEquals('admin') user!: string;
}

class FormatsDto {
  @IsEmail() email!: string;
  @IsUUID() id!: string;
  @IsUrl() site!: string;
  @IsRFC3339() at!: string;
  @IsDateString() day!: string;
}

class EnumDto {
  @IsEnum(Status) status!: Status;
  @IsEnum(Rank) rank!: Rank;
  @IsIn(['s', 'm', 'l']) size!: string;
  @IsIn([10, 20]) pct!: number;
  @IsArray() @IsEnum(Status, { each: true }) history!: Status[];
  @Equals('v1') version!: string;
}

class ArrayPrimitivesDto {
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(3) @IsString({ each: true }) tags!: string[];
  @IsArray() @ArrayUnique() @IsInt({ each: true }) ids!: number[];
  @ArrayNotEmpty() @IsNumber({}, { each: true }) @Min(0, { each: true }) weights!: number[];
  @IsOptional() @IsArray() @IsBoolean({ each: true }) @ArrayMaxSize(2) bits?: boolean[];
}

class AddressDto {
  @IsString() street!: string;
  @IsString() @Matches(/^\d{5}$/) zip!: string;
  @IsOptional() @IsString() city?: string;
}

class NestedDto {
  @IsString() name!: string;
  @IsDefined() @ValidateNested() @Type(() => AddressDto) home!: AddressDto;
  @IsOptional() @ValidateNested() @Type(() => AddressDto) work?: AddressDto | null;
}

class LineDto {
  @IsString() @MinLength(1) sku!: string;
  @IsInt() @Min(1) qty!: number;
}

class ArrayOfDtosDto {
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(4) @ValidateNested({ each: true }) @Type(() => LineDto) lines!: LineDto[];
}

class LevelThree {
  @IsBoolean() leaf!: boolean;
}
class LevelTwo {
  @IsInt() n!: number;
  @IsDefined() @ValidateNested() @Type(() => LevelThree) three!: LevelThree;
}
class DeepNestedDto {
  @IsDefined() @ValidateNested() @Type(() => LevelTwo) two!: LevelTwo;
}

class BaseEntityDto {
  @IsString() id!: string;
  @IsOptional() @IsString() @MaxLength(20) name?: string;
  @IsInt() @Min(0) version!: number;
}
class ChildEntityDto extends BaseEntityDto {
  @IsEnum(Status) status!: Status;
  // Replaces the parent's string rules on `name`; the parent's @IsOptional stays.
  @IsString() @MaxLength(5) declare name?: string;
}

class TreeNodeDto {
  @IsString() label!: string;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => TreeNodeDto) children?: TreeNodeDto[];
}

class ChainLinkDto {
  @IsInt() value!: number;
  @IsOptional() @ValidateNested() @Type(() => ChainLinkDto) next?: ChainLinkDto;
}
class ChainDto {
  @IsString() name!: string;
  @IsDefined() @ValidateNested() @Type(() => ChainLinkDto) head!: ChainLinkDto;
}

class DateDto {
  @IsDate() @Type(() => Date) at!: Date;
  @IsOptional() @IsDate() @Type(() => Date) until?: Date;
}

class DefaultsDto {
  @IsInt() @Min(1) @Max(100) limit: number = 20;
  @IsOptional() @IsString() sort: string = 'asc';
  @IsString() query!: string;
}

class DocumentedDto {
  @SchemaProperty({ description: 'Display name', examples: ['Ada'] }) @IsString() @MaxLength(10) name!: string;
  @SchemaProperty({ enum: Status, description: 'Lifecycle state' }) @IsEnum(Status) state!: Status;
  @SchemaProperty({ type: ['string', 'integer'] }) @Allow() key!: string | number;
  @SchemaProperty({ format: 'date' }) @IsOptional() @IsString() day?: string;
}

class EachWithoutIsArrayDto {
  @IsString({ each: true }) tags!: string[];
}

class UntypedOptionalDto {
  @IsString() id!: string;
  // Known to class-validator only through @IsOptional: the schema takes the type from design:type.
  @IsOptional() nickname?: string;
}

class ObjectDto {
  @IsObject() meta!: Record<string, unknown>;
  @IsNotEmptyObject() extra!: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Case generation
// ---------------------------------------------------------------------------------------------

interface Case {
  label: string;
  value: unknown;
  valid: boolean;
}

interface ZooEntry {
  dto: ClassConstructor<object>;
  valid: unknown[];
  invalid?: { label: string; value: unknown }[];
  /** Values the schema allows and class-validator knowingly refuses. */
  gaps?: { label: string; value: unknown; acceptedBy: 'schema'; why: string }[];
}

const CANDIDATES: readonly unknown[] = ['str', 123, 1.5, true, null, {}, []];

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function deref(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (ref === '#') return root;
  if (typeof ref === 'string' && ref.startsWith('#/$defs/')) {
    return (root.$defs as Record<string, JsonSchema>)[ref.slice('#/$defs/'.length)]!;
  }
  return schema;
}

/** The non-null alternative of `anyOf: [X, {type: 'null'}]`, dereferenced. */
function core(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const anyOf = schema.anyOf as JsonSchema[] | undefined;
  const branch = anyOf?.find((s) => s.type !== 'null');
  return deref(branch ?? schema, root);
}

function allowedTypes(schema: JsonSchema, root: JsonSchema): Set<string> | undefined {
  const resolved = deref(schema, root);
  if (Array.isArray(resolved.anyOf)) {
    const union = new Set<string>();
    for (const branch of resolved.anyOf as JsonSchema[]) {
      const types = allowedTypes(branch, root);
      if (!types) return undefined;
      types.forEach((t) => union.add(t));
    }
    return union;
  }
  const types = new Set<string>();
  if (resolved.type !== undefined) {
    for (const t of [resolved.type].flat() as string[]) types.add(t);
  } else if (Array.isArray(resolved.enum)) {
    for (const v of resolved.enum) types.add(jsonType(v));
  } else if (resolved.properties) types.add('object');
  else return undefined;
  if (types.has('number')) types.add('integer');
  return types;
}

function valueCases(schema: JsonSchema, current: unknown, root: JsonSchema, depth: number): Case[] {
  const cases: Case[] = [];
  const types = allowedTypes(schema, root);
  const s = core(schema, root);
  if (types?.has('null')) cases.push({ label: 'null', value: null, valid: true });
  if (types) {
    for (const candidate of CANDIDATES) {
      if (!types.has(jsonType(candidate))) {
        const where = s.properties && Array.isArray(candidate) ? ' for a nested DTO' : '';
        cases.push({ label: `wrong type ${JSON.stringify(candidate)}${where}`, value: candidate, valid: false });
      }
    }
  }
  if (Array.isArray(s.enum)) {
    if (types?.has('string'))
      cases.push({ label: 'bad enum member "zz-not-a-member"', value: 'zz-not-a-member', valid: false });
    if (types?.has('integer')) cases.push({ label: 'bad enum member 987654', value: 987654, valid: false });
    for (const member of s.enum)
      if (member !== null) cases.push({ label: `member ${JSON.stringify(member)}`, value: member, valid: true });
    return cases;
  }
  const numeric = types?.has('integer') && !types.has('string');
  if (numeric) {
    const step = types!.has('number') && s.type !== 'integer' ? 0.5 : 1;
    const free = s.multipleOf === undefined;
    if (typeof s.minimum === 'number') {
      cases.push({ label: 'below minimum', value: s.minimum - step, valid: false });
      if (free) cases.push({ label: 'at minimum', value: s.minimum, valid: true });
    }
    if (typeof s.maximum === 'number') {
      cases.push({ label: 'above maximum', value: s.maximum + step, valid: false });
      if (free) cases.push({ label: 'at maximum', value: s.maximum, valid: true });
    }
    if (typeof s.exclusiveMinimum === 'number') {
      cases.push({ label: 'at exclusiveMinimum', value: s.exclusiveMinimum, valid: false });
      cases.push({ label: 'above exclusiveMinimum', value: s.exclusiveMinimum + 1, valid: true });
    }
    if (typeof s.exclusiveMaximum === 'number') {
      cases.push({ label: 'at exclusiveMaximum', value: s.exclusiveMaximum, valid: false });
      cases.push({ label: 'below exclusiveMaximum', value: s.exclusiveMaximum - 1, valid: true });
    }
    if (typeof s.multipleOf === 'number') {
      cases.push({ label: 'not a multiple', value: s.multipleOf * 3 + 1, valid: false });
      cases.push({ label: 'a multiple', value: s.multipleOf * 3, valid: true });
    }
  }
  if (types?.has('string') && types.size <= 2) {
    const free = s.pattern === undefined && s.format === undefined && s.allOf === undefined && s.not === undefined;
    if (typeof s.minLength === 'number' && s.minLength > 0) {
      cases.push({ label: 'shorter than minLength', value: 'a'.repeat(s.minLength - 1), valid: false });
      if (free) cases.push({ label: 'at minLength', value: 'a'.repeat(s.minLength), valid: true });
    }
    if (typeof s.maxLength === 'number') {
      cases.push({ label: 'longer than maxLength', value: 'a'.repeat(s.maxLength + 1), valid: false });
      if (free) cases.push({ label: 'at maxLength', value: 'a'.repeat(s.maxLength), valid: true });
    }
  }
  if (Array.isArray(current) && s.type !== undefined && [s.type].flat().includes('array')) {
    const items = s.items as JsonSchema;
    if (typeof s.minItems === 'number' && s.minItems > 0) {
      cases.push({ label: 'fewer than minItems', value: current.slice(0, s.minItems - 1), valid: false });
      if (current.length >= s.minItems)
        cases.push({ label: 'at minItems', value: current.slice(0, s.minItems), valid: true });
    }
    if (typeof s.maxItems === 'number' && current.length > 0) {
      cases.push({ label: 'more than maxItems', value: Array(s.maxItems + 1).fill(current[0]), valid: false });
    }
    if (s.uniqueItems === true && current.length > 0) {
      cases.push({ label: 'duplicate items', value: [current[0], ...current], valid: false });
    }
    if (current.length > 0) {
      for (const c of valueCases(items, current[0], root, depth + 1)) {
        cases.push({ label: `[0] ${c.label}`, value: [c.value, ...current.slice(1)], valid: c.valid });
      }
    }
  }
  if (s.properties && current && typeof current === 'object' && !Array.isArray(current) && depth < 4) {
    cases.push(...objectCases(s, current as Record<string, unknown>, root, depth + 1));
  }
  return cases;
}

function objectCases(schema: JsonSchema, value: Record<string, unknown>, root: JsonSchema, depth: number): Case[] {
  const cases: Case[] = [];
  const required = (schema.required ?? []) as string[];
  const omit = (key: string) => Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));
  for (const key of Object.keys(value)) {
    cases.push({ label: `without ${key}`, value: omit(key), valid: !required.includes(key) });
  }
  for (const key of required) {
    if (!(key in value)) cases.push({ label: `base lacks required ${key}`, value, valid: false });
  }
  if (schema.additionalProperties === false) {
    cases.push({ label: 'extra property', value: { ...value, zzExtra: 1 }, valid: false });
  }
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    for (const c of valueCases(property, value[key], root, depth)) {
      cases.push({ label: `${key}: ${c.label}`, value: { ...value, [key]: c.value }, valid: c.valid });
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------------------

const ZOO: ZooEntry[] = [
  {
    dto: PrimitivesDto,
    valid: [
      { name: 'a', count: 1, ratio: 0.5, flag: true },
      { name: '', count: -3, ratio: 2, flag: false },
    ],
  },
  {
    dto: OptionalNullableDto,
    valid: [
      { id: 'x', note: 'n', limit: 3, archived: false, status: 'open' },
      { id: 'x' },
      { id: 'x', note: null, limit: null },
    ],
  },
  {
    dto: NumericRangeDto,
    valid: [{ stars: 5, offset: 0, price: 0.01, debt: -1, step: 10 }],
    invalid: [{ label: 'price 0', value: { stars: 5, offset: 0, price: 0, debt: -1, step: 10 } }],
  },
  {
    dto: StringLengthDto,
    valid: [{ code: 'abc', pin: '1234', label: 'x', short: 'abcd' }],
    invalid: [{ label: 'empty label', value: { code: 'abc', pin: '1234', label: '', short: 'a' } }],
  },
  {
    dto: PatternDto,
    valid: [
      { slug: 'my-post-1', sku: 'SKU-1234', area: '212', both: 'A1', user: 'bob' },
      { slug: 'x', sku: 'sku-0000', area: '000', both: 'Zz9', user: 'ADMIN' },
    ],
    invalid: [
      { label: 'slug with uppercase', value: { slug: 'My-Post', sku: 'SKU-1234', area: '212', both: 'A1', user: 'b' } },
      { label: 'sku wrong prefix', value: { slug: 'x', sku: 'SKV-1234', area: '212', both: 'A1', user: 'b' } },
      { label: 'sku too few digits', value: { slug: 'x', sku: 'sku-123', area: '212', both: 'A1', user: 'b' } },
      { label: 'area letters', value: { slug: 'x', sku: 'sku-1234', area: 'abc', both: 'A1', user: 'b' } },
      {
        label: 'both: second pattern fails',
        value: { slug: 'x', sku: 'sku-1234', area: '212', both: 'Ab', user: 'b' },
      },
      { label: 'both: first pattern fails', value: { slug: 'x', sku: 'sku-1234', area: '212', both: 'a1', user: 'b' } },
      { label: 'user is admin', value: { slug: 'x', sku: 'sku-1234', area: '212', both: 'A1', user: 'admin' } },
    ],
  },
  {
    dto: FormatsDto,
    valid: [
      {
        email: 'ada@example.com',
        id: '123e4567-e89b-42d3-a456-426614174000',
        site: 'https://example.com/x',
        at: '2024-05-01T10:00:00Z',
        day: '2024-05-01',
      },
    ],
    gaps: [
      // Formats are annotations in JSON Schema 2020-12 (and in our Ajv): only class-validator checks them.
      ...[
        ['email', 'not-an-email'],
        ['id', 'not-a-uuid'],
        ['site', 'not a url'],
        ['at', '2024-05-01'],
        ['day', 'yesterday'],
      ].map(([key, bad]) => ({
        label: `${key}: ${bad}`,
        value: {
          email: 'ada@example.com',
          id: '123e4567-e89b-42d3-a456-426614174000',
          site: 'https://example.com/x',
          at: '2024-05-01T10:00:00Z',
          day: '2024-05-01',
          [key!]: bad,
        },
        acceptedBy: 'schema' as const,
        why: 'format is an annotation; the schema cannot refuse a malformed string',
      })),
    ],
  },
  {
    dto: EnumDto,
    valid: [{ status: 'open', rank: 1, size: 'm', pct: 10, history: ['open', 'done'], version: 'v1' }],
    invalid: [
      // @IsEnum alone also accepts the reverse-mapping names of a numeric enum; the schema does not.
      {
        label: 'numeric enum by key name',
        value: { status: 'open', rank: 'Low', size: 'm', pct: 10, history: [], version: 'v1' },
      },
    ],
  },
  {
    dto: ArrayPrimitivesDto,
    valid: [
      { tags: ['a', 'b'], ids: [1, 2, 3], weights: [0, 1.5], bits: [true] },
      { tags: ['a'], ids: [], weights: [2] },
    ],
    invalid: [{ label: 'negative weight', value: { tags: ['a'], ids: [], weights: [1, -1] } }],
  },
  {
    dto: NestedDto,
    valid: [
      { name: 'n', home: { street: 's', zip: '12345', city: 'c' }, work: { street: 'w', zip: '54321' } },
      { name: 'n', home: { street: 's', zip: '12345' }, work: null },
    ],
    invalid: [
      { label: 'bad nested zip', value: { name: 'n', home: { street: 's', zip: '1234' } } },
      // @ValidateNested alone walks an array as a list of nested objects.
      { label: 'home: an array of one valid address', value: { name: 'n', home: [{ street: 's', zip: '12345' }] } },
      {
        label: 'work: an array of two valid addresses',
        value: {
          name: 'n',
          home: { street: 's', zip: '12345' },
          work: [
            { street: 'a', zip: '12345' },
            { street: 'b', zip: '54321' },
          ],
        },
      },
      { label: 'work: an empty array', value: { name: 'n', home: { street: 's', zip: '12345' }, work: [] } },
      { label: 'home: a string', value: { name: 'n', home: '12345' } },
    ],
  },
  {
    dto: ArrayOfDtosDto,
    valid: [
      {
        lines: [
          { sku: 'a', qty: 1 },
          { sku: 'b', qty: 2 },
        ],
      },
    ],
    invalid: [
      {
        label: 'third item invalid',
        value: {
          lines: [
            { sku: 'a', qty: 1 },
            { sku: 'b', qty: 1 },
            { sku: 'c', qty: 0 },
          ],
        },
      },
      { label: 'lines: one object instead of an array', value: { lines: { sku: 'a', qty: 1 } } },
      { label: 'lines: an index-keyed object', value: { lines: { 0: { sku: 'a', qty: 1 } } } },
      { label: 'lines[0]: an array of one valid line', value: { lines: [[{ sku: 'a', qty: 1 }]] } },
      { label: 'lines[0]: an empty array', value: { lines: [[]] } },
    ],
  },
  {
    dto: DeepNestedDto,
    valid: [{ two: { n: 1, three: { leaf: true } } }],
    invalid: [
      { label: 'two.three: an array of one valid leaf', value: { two: { n: 1, three: [{ leaf: true }] } } },
      { label: 'two: an array of one valid level', value: { two: [{ n: 1, three: { leaf: true } }] } },
    ],
  },
  {
    dto: ChildEntityDto,
    valid: [
      { id: 'a', version: 0, status: 'done', name: 'abcde' },
      { id: 'a', version: 3, status: 'open', name: null },
    ],
    invalid: [{ label: 'name too long for the child', value: { id: 'a', version: 0, status: 'done', name: 'abcdef' } }],
  },
  {
    dto: BaseEntityDto,
    valid: [{ id: 'a', version: 0, name: 'abcdefghij' }],
  },
  {
    dto: TreeNodeDto,
    valid: [
      {
        label: 'root',
        children: [
          { label: 'a', children: [{ label: 'a1' }] },
          { label: 'b', children: [] },
        ],
      },
      { label: 'leaf' },
    ],
    invalid: [
      { label: 'deep bad label', value: { label: 'r', children: [{ label: 'a', children: [{ label: 7 }] }] } },
      { label: 'children: one node instead of an array', value: { label: 'r', children: { label: 'a' } } },
      {
        label: 'deep children: an array of arrays',
        value: { label: 'r', children: [{ label: 'a', children: [[{ label: 'a1' }]] }] },
      },
    ],
  },
  {
    dto: ChainDto,
    valid: [{ name: 'c', head: { value: 1, next: { value: 2, next: { value: 3 } } } }],
    invalid: [
      { label: 'deep extra', value: { name: 'c', head: { value: 1, next: { value: 2, oops: 1 } } } },
      {
        label: 'head.next: an array of one valid link',
        value: { name: 'c', head: { value: 1, next: [{ value: 2 }] } },
      },
    ],
  },
  {
    dto: DateDto,
    valid: [{ at: '2024-05-01T10:00:00Z', until: '2024-06-01T00:00:00.000Z' }],
    // @Type(() => Date) alone turns numbers and booleans into Dates; the schema asks for a string.
    invalid: [{ label: 'at: a number', value: { at: 123 } }],
    gaps: [
      {
        label: 'unparseable date string',
        value: { at: 'someday' },
        acceptedBy: 'schema',
        why: 'format is an annotation; class-validator refuses the Invalid Date',
      },
    ],
  },
  {
    dto: DefaultsDto,
    valid: [{ query: 'q' }, { query: 'q', limit: 5, sort: 'desc' }],
  },
  {
    dto: DocumentedDto,
    valid: [
      { name: 'Ada', state: 'open', key: 'k', day: '2024-01-01' },
      { name: 'A', state: 'done', key: 7 },
    ],
    // @Allow() validates nothing: the type comes from @SchemaProperty, and the schema check holds it.
  },
  {
    dto: EachWithoutIsArrayDto,
    valid: [{ tags: ['a', 'b'] }, { tags: [] }],
    // An each-validator alone applies to a bare value itself; the schema (design:type Array) refuses it.
    invalid: [{ label: 'tags: a bare string', value: { tags: 'str' } }],
  },
  {
    dto: UntypedOptionalDto,
    valid: [{ id: 'a', nickname: 'n' }, { id: 'a', nickname: null }, { id: 'a' }],
    // No validator checks the type of `nickname`; the schema (from design:type) does.
    invalid: [{ label: 'nickname: a number', value: { id: 'a', nickname: 5 } }],
  },
  {
    dto: ObjectDto,
    valid: [
      { meta: {}, extra: { a: 1 } },
      { meta: { x: [1] }, extra: { b: null } },
    ],
    invalid: [{ label: 'empty extra', value: { meta: {}, extra: {} } }],
  },
];

// ---------------------------------------------------------------------------------------------
// Runner
// ---------------------------------------------------------------------------------------------

/** Whether a JSON value holds a `null` anywhere (what the portable schemas refuse for optionals). */
function holdsNull(value: unknown): boolean {
  if (value === null) return true;
  if (Array.isArray(value)) return value.some(holdsNull);
  return typeof value === 'object' && value !== undefined && Object.values(value as object).some(holdsNull);
}

// With nullableOptionals the schema says exactly what class-validator accepts. The default,
// portable schemas leave `null` out of optional properties: they may then refuse what
// class-validator accepts (a null), never accept what it refuses.
for (const nullableOptionals of [true, false]) {
  const factory = new JsonSchemaFactory({ nullableOptionals });
  const caster = new DtoCaster(factory);
  const strict = nullableOptionals;

  describe(`DTO zoo: class-validator and the emitted JSON Schema agree (${strict ? 'nullableOptionals: exactly' : 'portable default: never looser'})`, () => {
    for (const entry of ZOO) {
      it(entry.dto.name, async (t) => {
        const schema = factory.create(entry.dto);
        assert.equal('$schema' in schema, false);
        const check = compileJsonSchema(schema);
        const cast = caster.compile(entry.dto);
        const problems: string[] = [];
        let checked = 0;

        const verdicts = async (value: unknown) => {
          const schemaIssues = check(value);
          const result = await cast(value);
          return {
            schema: schemaIssues === null,
            validator: result.ok,
            detail: `schema: ${JSON.stringify(schemaIssues)} / caster: ${JSON.stringify(result.ok ? 'ok' : result.issues)}`,
          };
        };
        const expectBoth = async (label: string, value: unknown, valid: boolean) => {
          checked += 1;
          const v = await verdicts(value);
          if (!strict) {
            if (v.schema && !v.validator) problems.push(`looser: "${label}" ${JSON.stringify(value)}\n    ${v.detail}`);
            else if (valid && !holdsNull(value) && !v.schema)
              problems.push(`valid case "${label}" refused ${JSON.stringify(value)}\n    ${v.detail}`);
            return;
          }
          if (v.schema !== valid || v.validator !== valid) {
            problems.push(`${valid ? 'valid' : 'invalid'} case "${label}" ${JSON.stringify(value)}\n    ${v.detail}`);
          }
        };

        for (const [index, value] of entry.valid.entries()) {
          await expectBoth(`valid[${index}]`, value, true);
        }
        for (const bad of [null, [], 'args', 42]) await expectBoth(`root ${JSON.stringify(bad)}`, bad, false);
        for (const c of objectCases(schema, entry.valid[0] as Record<string, unknown>, schema, 0)) {
          await expectBoth(c.label, c.value, c.valid);
        }
        for (const bad of entry.invalid ?? []) await expectBoth(bad.label, bad.value, false);
        for (const gap of strict ? (entry.gaps ?? []) : []) {
          checked += 1;
          const v = await verdicts(gap.value);
          if (!v.schema || v.validator) {
            problems.push(`gap "${gap.label}" (${gap.why}) no longer behaves as documented\n    ${v.detail}`);
          }
        }
        t.diagnostic(`${checked} cases checked`);
        assert.ok(checked > 10, `too few cases for ${entry.dto.name}`);
        assert.deepEqual(
          problems,
          [],
          `${entry.dto.name}: ${problems.length} disagreement(s)\n  ${problems.join('\n  ')}`,
        );
      });
    }
  });
}

describe('DTO zoo', () => {
  it('names the field of a type confusion on a nested DTO, in the style of the other messages', async () => {
    // Optional properties may or may not list "null" as a type; the message follows the schema.
    const cases: Array<[ClassConstructor<object>, unknown, string, RegExp]> = [
      [NestedDto, { name: 'n', home: [{ street: 's', zip: '12345' }] }, 'home', /^must be an object$/],
      [
        NestedDto,
        { name: 'n', home: { street: 's', zip: '12345' }, work: [] },
        'work',
        /^must be an object( or null)?$/,
      ],
      [ArrayOfDtosDto, { lines: [[{ sku: 'a', qty: 1 }]] }, 'lines[0]', /^must be an object$/],
      [ArrayOfDtosDto, { lines: { sku: 'a', qty: 1 } }, 'lines', /^must be an array/],
      [DeepNestedDto, { two: { n: 1, three: [{ leaf: true }] } }, 'two.three', /^must be an object$/],
      [UntypedOptionalDto, { id: 'a', nickname: 5 }, 'nickname', /^must be a string( or null)?$/],
    ];
    const caster = new DtoCaster(new JsonSchemaFactory());
    for (const [dto, value, path, message] of cases) {
      const result = await caster.compile(dto)(value);
      const issues = result.ok ? [] : result.issues;
      const label = `${dto.name} ${JSON.stringify(value)}: ${JSON.stringify(issues)}`;
      assert.ok(issues.length > 0 && issues.every((issue) => issue.path === path), label);
      assert.ok(
        issues.some((issue) => message.test(issue.message)),
        label,
      );
    }
  });

  it('covers every mapping with at least 20 DTOs', () => {
    assert.ok(ZOO.length >= 20);
  });
});
