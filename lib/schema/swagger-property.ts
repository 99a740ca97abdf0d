import 'reflect-metadata';
import type { JsonSchema } from './json-schema.types.js';
import { SchemaGenerationError } from './schema-generation.error.js';
import { enumValuesOf, typesOfValues } from './validation-rules.js';
import { droppedOnInput } from './dto-metadata.js';
import { finish, type PropertyModel } from './property-model.js';
import { getSchemaPropertyOptions, type SchemaPropertyOptions } from './schema-property.decorator.js';

// What @nestjs/swagger's @ApiProperty() says about a DTO property, read without importing the
// package: its decorators store their options as reflect-metadata under these keys
// (nestjs/swagger lib/constants.ts), and its CLI plugin gives each class a static factory of the
// same options (lib/plugin/plugin-constants.ts). An app without Swagger simply has none of them.
const MODEL_PROPERTIES = 'swagger/apiModelProperties';
const MODEL_PROPERTIES_ARRAY = 'swagger/apiModelPropertiesArray';
const METADATA_FACTORY = '_OPENAPI_METADATA_FACTORY';

/** The options @ApiProperty() stored for one property: OpenAPI 3.0 keywords plus Swagger's own (`isArray`, `required`...). */
export type SwaggerProperty = Readonly<Record<string, unknown>>;

/**
 * The properties @ApiProperty() (or the Swagger CLI plugin) declares on a class and its ancestors,
 * in declaration order. Decorator options win over the plugin's, as in Swagger itself.
 */
export function swaggerProperties(type: Function, dto: string): Map<string, SwaggerProperty> {
  const prototype = type.prototype as Record<string, unknown> | undefined;
  const found = new Map<string, SwaggerProperty>();
  if (!prototype) return found;
  const listed = Reflect.getMetadata(MODEL_PROPERTIES_ARRAY, prototype) as unknown;
  for (const entry of Array.isArray(listed) ? listed : []) {
    // Swagger lists ':name'; decorated methods and accessors are not model properties.
    if (typeof entry !== 'string' || !entry.startsWith(':') || isMethod(prototype, entry.slice(1))) continue;
    const meta = swaggerPropertyOf(type, entry.slice(1));
    if (meta) found.set(entry.slice(1), meta);
  }
  for (const [name, generated] of pluginProperties(type, dto)) {
    found.set(name, { ...generated, ...found.get(name) });
  }
  return found;
}

/** The @ApiProperty() options of one property, if any (inherited ones included). */
export function swaggerPropertyOf(type: Function, name: string): SwaggerProperty | undefined {
  const meta = Reflect.getMetadata(MODEL_PROPERTIES, type.prototype as object, name) as unknown;
  return meta && typeof meta === 'object' ? (meta as SwaggerProperty) : undefined;
}

function pluginProperties(type: Function, dto: string): Map<string, SwaggerProperty> {
  const chain: Function[] = [];
  for (let t: unknown = type; typeof t === 'function' && t !== Function.prototype; t = Object.getPrototypeOf(t))
    chain.unshift(t as Function);
  const merged = new Map<string, SwaggerProperty>();
  for (const ctor of chain) {
    if (!Object.hasOwn(ctor, METADATA_FACTORY)) continue;
    let generated: unknown;
    try {
      generated = (ctor as unknown as Record<string, () => unknown>)[METADATA_FACTORY]!();
    } catch (error) {
      throw new SchemaGenerationError(
        dto,
        undefined,
        `the ${METADATA_FACTORY}() that the Swagger CLI plugin generated for "${ctor.name}" threw (${(error as Error).message})`,
        'Rebuild the app so the plugin output matches the sources, or describe the properties with @ApiProperty().',
      );
    }
    for (const [name, meta] of Object.entries((generated ?? {}) as Record<string, unknown>)) {
      if (meta && typeof meta === 'object') merged.set(name, { ...merged.get(name), ...(meta as SwaggerProperty) });
    }
  }
  return merged;
}

function isMethod(prototype: Record<string, unknown>, name: string): boolean {
  for (let p: object | null = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    const descriptor = Object.getOwnPropertyDescriptor(p, name);
    if (descriptor) return typeof descriptor.value === 'function' || descriptor.get !== undefined;
  }
  return false;
}

/** The annotation keywords of @ApiProperty() that say nothing about validity. */
export function swaggerAnnotations(meta: SwaggerProperty | undefined): JsonSchema {
  const out: JsonSchema = {};
  if (!meta) return out;
  for (const keyword of ['title', 'description', 'deprecated', 'readOnly', 'writeOnly'] as const) {
    if (meta[keyword] !== undefined && isJson(meta[keyword])) out[keyword] = meta[keyword];
  }
  if (Array.isArray(meta.examples) && isJson(meta.examples)) out.examples = meta.examples;
  else if (meta.example !== undefined && isJson(meta.example)) out.examples = [meta.example];
  return out;
}

/** One property as @ApiProperty() describes it, ready to render once nested classes resolve. */
interface SwaggerShape {
  readonly required: boolean;
  readonly nullable: boolean;
  /** DTO classes this property embeds. */
  readonly nested: readonly Function[];
  build(resolve: (type: Function) => JsonSchema): JsonSchema;
}

const BUILT_IN = new Map<unknown, JsonSchema>([
  [String, { type: 'string' }],
  [Number, { type: 'number' }],
  [Boolean, { type: 'boolean' }],
  [Date, { type: 'string', format: 'date-time' }],
  [Object, { type: 'object' }],
]);
const TYPE_NAMES = new Set<unknown>(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);
const NOT_JSON = new Set<unknown>([Array, BigInt, Symbol, Function, Promise, Map, Set, Buffer, Uint8Array]);
// Keywords of the value itself: on an array they describe its items, as Swagger moves them there.
const ITEM_KEYWORDS = [
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minProperties',
  'maxProperties',
];
const ARRAY_KEYWORDS = ['minItems', 'maxItems', 'uniqueItems'];
const COMBINATORS = ['oneOf', 'anyOf', 'allOf', 'not'];

/**
 * Turns @ApiProperty() options into a JSON Schema 2020-12 property: `type` (a class, a built-in,
 * a lazy `() => X` or `() => [X]`, a type name), `isArray`, `enum`, `items`, `format`, `nullable`,
 * `required` (Swagger's default: required), constraints, combinators and annotations.
 *
 * @throws SchemaGenerationError when the options do not say what the value is (a bare `Array`, a
 *   `$ref` to a Swagger component, `type: 'file'`, no type at all).
 */
function swaggerShape(dto: string, name: string, meta: SwaggerProperty): SwaggerShape {
  const fail = (what: string, fix: string) => SchemaGenerationError.unsupported(dto, name, what, fix);
  let type = meta.type;
  let isArray = meta.isArray === true;
  if (isLazy(type)) {
    try {
      type = type();
    } catch (error) {
      throw fail(
        `its @ApiProperty() type function threw (${(error as Error).message})`,
        'Return the class from the thunk, as in @ApiProperty({ type: () => AddressDto }).',
      );
    }
  }
  if (Array.isArray(type)) {
    if (type.length !== 1)
      throw fail(
        'its @ApiProperty() type is an array of several types',
        'Give one item type, as in @ApiProperty({ type: [String] }).',
      );
    type = type[0] as unknown;
    isArray = true;
  }
  const nested: Function[] = [];
  const convert = (value: unknown, where: string): JsonSchema =>
    openApiToJsonSchema(value, (what) =>
      fail(
        `its @ApiProperty() ${where} ${what}`,
        'Describe the class with @ApiProperty({ type: () => X }) instead of a Swagger $ref, or the whole value with @SchemaProperty({ schema }).',
      ),
    );

  let item: (resolve: (type: Function) => JsonSchema) => JsonSchema;
  const combinator = COMBINATORS.find((keyword) => meta[keyword] !== undefined);
  if (combinator) {
    const schema = convert({ [combinator]: meta[combinator] }, combinator);
    item = () => schema;
  } else if (type === 'array') {
    // Swagger's own normal form of enum arrays and nested arrays: the element schema is in `items`.
    if (meta.items === undefined) throw arrayWithoutItems(fail);
    const schema = { type: 'array', items: convert(meta.items, 'items') };
    return shape(meta, nested, () => withKeywords(schema, meta, ARRAY_KEYWORDS), fail);
  } else if (meta.enum !== undefined) {
    const values = enumValuesOf(
      (typeof meta.enum === 'function' ? (meta.enum as () => unknown)() : meta.enum) as never,
    );
    if (values.length === 0)
      throw fail(
        'its @ApiProperty() enum has no JSON value',
        'List the values, or pass the TypeScript enum itself: @ApiProperty({ enum: Status }).',
      );
    item = constant(enumSchema(values));
  } else if (typeof type === 'string') {
    if (!TYPE_NAMES.has(type)) {
      throw fail(
        `its @ApiProperty() type "${type}" has no JSON Schema counterpart`,
        'Use a JSON type ("string", "number", "integer", "boolean", "object", "array") or a class.',
      );
    }
    item = constant({ type, ...(type === 'object' ? objectKeywords(meta, convert) : {}) });
  } else if (BUILT_IN.has(type)) {
    item = constant({ ...BUILT_IN.get(type)!, ...(type === Object ? objectKeywords(meta, convert) : {}) });
  } else if (type === Array) {
    throw arrayWithoutItems(fail);
  } else if (NOT_JSON.has(type)) {
    throw fail(
      `its type ${(type as Function).name} has no JSON form`,
      'Say the JSON type in @ApiProperty({ type: ... }), for example type: String for a BigInt sent as text.',
    );
  } else if (typeof type === 'function') {
    const target = type;
    nested.push(target);
    item = (resolve) => resolve(target);
  } else if (type && typeof type === 'object') {
    // A TypeScript enum or an `as const` object given as the type, as Swagger accepts.
    const values = enumValuesOf(type as never);
    if (values.length === 0)
      throw fail(
        'its @ApiProperty() type is an object that is neither a class nor an enum',
        'Pass a class (type: () => X), a built-in (type: String) or enum: MyEnum.',
      );
    item = constant(enumSchema(values));
  } else {
    throw fail(
      '@ApiProperty() gives no type and TypeScript emitted no design:type for it',
      'Give the type, as in @ApiProperty({ type: String }) or type: () => AddressDto, and compile with "emitDecoratorMetadata": true.',
    );
  }
  const primitive = nested.length === 0;
  return shape(
    meta,
    nested,
    (resolve) => {
      const value = primitive ? withKeywords(item(resolve), meta, ITEM_KEYWORDS) : item(resolve);
      return isArray ? withKeywords({ type: 'array', items: value }, meta, ARRAY_KEYWORDS) : value;
    },
    fail,
  );
}

function constant(schema: JsonSchema): () => JsonSchema {
  return () => schema;
}

function enumSchema(values: ReturnType<typeof enumValuesOf>): JsonSchema {
  const types = typesOfValues(values)!;
  return { type: types.length === 1 ? types[0] : types, enum: values };
}

function shape(
  meta: SwaggerProperty,
  nested: Function[],
  render: SwaggerShape['build'],
  fail: (what: string, fix: string) => Error,
): SwaggerShape {
  if (meta.pattern !== undefined && typeof meta.pattern !== 'string' && !(meta.pattern instanceof RegExp)) {
    throw fail(
      'its @ApiProperty() pattern is neither a string nor a RegExp',
      'Give the pattern as a string or a RegExp.',
    );
  }
  const required = typeof meta.selfRequired === 'boolean' ? meta.selfRequired : meta.required !== false;
  return {
    required,
    nullable: meta.nullable === true,
    nested,
    build: (resolve) => ({
      ...swaggerAnnotations(meta),
      ...render(resolve),
      ...(meta.default !== undefined && isJson(meta.default) ? { default: meta.default } : {}),
    }),
  };
}

function arrayWithoutItems(fail: (what: string, fix: string) => Error): Error {
  return fail(
    'it is an array but @ApiProperty() does not say of what (TypeScript records only "Array")',
    'Give the item type, as in @ApiProperty({ type: [String] }) or @ApiProperty({ type: () => [LineDto] }).',
  );
}

function objectKeywords(meta: SwaggerProperty, convert: (value: unknown, where: string) => JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  if (meta.properties !== undefined)
    out.properties = convert({ type: 'object', properties: meta.properties }, 'properties').properties;
  if (Array.isArray(meta.required)) out.required = [...(meta.required as string[])];
  if (typeof meta.additionalProperties === 'boolean') out.additionalProperties = meta.additionalProperties;
  else if (meta.additionalProperties !== undefined)
    out.additionalProperties = convert(meta.additionalProperties, 'additionalProperties');
  return out;
}

function withKeywords(schema: JsonSchema, meta: SwaggerProperty, keywords: readonly string[]): JsonSchema {
  const out = { ...schema };
  for (const keyword of keywords) {
    const value = meta[keyword];
    if (value === undefined) continue;
    if (keyword === 'pattern') out.pattern = value instanceof RegExp ? value.source : value;
    else if ((keyword === 'exclusiveMinimum' || keyword === 'exclusiveMaximum') && typeof value === 'boolean') {
      // OpenAPI 3.0's boolean form: the bound itself sits in minimum/maximum.
      const bound = keyword === 'exclusiveMinimum' ? 'minimum' : 'maximum';
      if (value && typeof meta[bound] === 'number') {
        out[keyword] = meta[bound];
        delete out[bound];
      }
    } else if (isJson(value)) out[keyword] = value;
  }
  return out;
}

/**
 * An OpenAPI 3.0 schema object (as Swagger options hold them in `items`, `properties` and
 * combinators) as JSON Schema 2020-12: `nullable` becomes a `null` type, `example` becomes
 * `examples`, boolean exclusive bounds become numbers.
 */
function openApiToJsonSchema(value: unknown, fail: (what: string) => Error): JsonSchema {
  const walk = (node: unknown, path: string): unknown => {
    if (Array.isArray(node)) return node.map((child, index) => walk(child, `${path}[${index}]`));
    if (node instanceof RegExp) return node.source;
    if (typeof node === 'function') {
      const builtIn = BUILT_IN.get(node);
      if (builtIn) return builtIn.type;
      throw fail(
        `holds a class or function (${node.name || 'anonymous'}) at ${path || 'its root'}, which an OpenAPI schema object cannot carry there`,
      );
    }
    if (!node || typeof node !== 'object') return node;
    const source = node as Record<string, unknown>;
    if (typeof source.$ref === 'string')
      throw fail(`refers to the Swagger component "${source.$ref}", which is not part of the tool's schema`);
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(source)) {
      if (key === 'nullable' || key === 'example' || key === 'isArray') continue;
      out[key] =
        key === 'enum' || key === 'default' || key === 'examples' || key === 'const'
          ? child
          : walk(child, path ? `${path}.${key}` : key);
    }
    if (source.example !== undefined && out.examples === undefined) out.examples = [source.example];
    for (const [keyword, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      if (typeof out[keyword] === 'boolean') {
        if (out[keyword] && typeof out[bound] === 'number') {
          out[keyword] = out[bound];
          delete out[bound];
        } else delete out[keyword];
      }
    }
    if (source.nullable === true && out.type !== undefined) {
      const types = Array.isArray(out.type) ? (out.type as unknown[]) : [out.type];
      if (!types.includes('null')) out.type = [...types, 'null'];
    }
    return out;
  };
  return walk(value, '') as JsonSchema;
}

function isLazy(type: unknown): type is () => unknown {
  // `type: () => X` is an arrow (no prototype); Swagger itself tells it by the name `type`.
  return (
    typeof type === 'function' &&
    !BUILT_IN.has(type) &&
    !NOT_JSON.has(type) &&
    (type.prototype === undefined || type.name === 'type')
  );
}

function isJson(value: unknown): boolean {
  try {
    return JSON.stringify(value) !== undefined && !(value instanceof Date);
  } catch {
    return false;
  }
}

/** A property class-validator says nothing about, described by its @ApiProperty() options. */
export function swaggerProperty(
  type: Function,
  name: string,
  meta: SwaggerProperty,
  defaults: ReadonlyMap<string, unknown>,
): PropertyModel | undefined {
  const dto = type.name || 'AnonymousDto';
  const options: SchemaPropertyOptions = getSchemaPropertyOptions(type, name) ?? {};
  const shape = swaggerShape(dto, name, meta);
  const required = options.required ?? shape.required;
  if (droppedOnInput(type, name)) {
    if (required) {
      throw SchemaGenerationError.unsupported(
        dto,
        name,
        'class-transformer drops it (@Exclude or an excludeAll strategy) yet @ApiProperty() marks it required, so no value could match',
        'Remove @Exclude(), or use @ApiPropertyOptional() (or @ApiHideProperty() to leave it out).',
      );
    }
    return undefined;
  }
  return finish(
    name,
    required,
    shape.nested,
    shape.build,
    options,
    options.nullable ?? shape.nullable,
    defaults.get(name),
    {},
  );
}
