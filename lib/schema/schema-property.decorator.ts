import 'reflect-metadata';
import type { JsonSchema, JsonTypeName } from './json-schema.types.js';

/** Reflect metadata key holding the options of one property. */
export const SCHEMA_PROPERTY_METADATA = 'mcp:schema-property';
/** Reflect metadata key holding the names a class itself decorated (not its ancestors). */
export const SCHEMA_PROPERTY_NAMES_METADATA = 'mcp:schema-property-names';

type EnumLike = Readonly<Record<string, string | number>>;

/**
 * What `@SchemaProperty()` adds to or overrides in the schema generated from class-validator
 * metadata.
 *
 * @publicApi
 */
export interface SchemaPropertyOptions {
  /** Shown to the model; say what the value means and how it is used. */
  description?: string;
  title?: string;
  /** JSON values that illustrate the property. */
  examples?: readonly unknown[];
  /** Annotation only: the value the handler assumes when the property is absent. */
  default?: unknown;
  /** A JSON Schema `format` (annotation), e.g. `'date'` or `'hostname'`. */
  format?: string;
  deprecated?: boolean;
  /**
   * Force (`true`) or hide (`false`) `null` as an accepted value. By default `null` is accepted
   * exactly when class-validator accepts it, i.e. with `@IsOptional()`.
   */
  nullable?: boolean;
  /** Override whether the property is listed in `required`. */
  required?: boolean;
  /** Replace the allowed values: a list, or a TypeScript enum object. */
  enum?: readonly (string | number | boolean | null)[] | EnumLike;
  /** The item type of an array: a class thunk (`() => Tag`, `() => String`) or a JSON Schema. */
  items?: (() => Function) | JsonSchema;
  /** Override the value type: JSON type name(s), or a class thunk (`() => Address`, `() => Number`). */
  type?: JsonTypeName | readonly JsonTypeName[] | (() => Function);
  /** A raw JSON Schema fragment merged last, over everything generated. */
  schema?: JsonSchema;
}

/**
 * Describes a DTO property beyond what class-validator can say: documentation, examples, formats,
 * or an explicit type where TypeScript metadata is ambiguous (unions, `unknown[]`).
 * It does not validate anything; keep the class-validator decorators.
 *
 * @example
 * class CreateTaskDto {
 *   @SchemaProperty({ description: 'Short title shown in lists', examples: ['Buy milk'] })
 *   @IsString() @MaxLength(80)
 *   title!: string;
 * }
 *
 * @publicApi
 */
export function SchemaProperty(options: SchemaPropertyOptions = {}): PropertyDecorator {
  const snapshot: SchemaPropertyOptions = Object.freeze({ ...options });
  return (prototype: object, propertyKey: string | symbol) => {
    if (typeof propertyKey !== 'string') return;
    // Stacked decorators merge; the one written on top runs last and wins.
    const previous = Reflect.getOwnMetadata(SCHEMA_PROPERTY_METADATA, prototype, propertyKey) as
      SchemaPropertyOptions | undefined;
    const merged = previous ? Object.freeze({ ...previous, ...snapshot }) : snapshot;
    Reflect.defineMetadata(SCHEMA_PROPERTY_METADATA, merged, prototype, propertyKey);
    const names = (Reflect.getOwnMetadata(SCHEMA_PROPERTY_NAMES_METADATA, prototype) as string[] | undefined) ?? [];
    if (!names.includes(propertyKey)) {
      // A new array per class, so a subclass never writes into its parent's list.
      Reflect.defineMetadata(SCHEMA_PROPERTY_NAMES_METADATA, [...names, propertyKey], prototype);
    }
  };
}

/**
 * The effective options of one property: ancestors first, then each subclass over them.
 *
 * @internal
 */
export function getSchemaPropertyOptions(type: Function, propertyName: string): SchemaPropertyOptions | undefined {
  let merged: SchemaPropertyOptions | undefined;
  for (const prototype of prototypeChain(type)) {
    const own = Reflect.getOwnMetadata(SCHEMA_PROPERTY_METADATA, prototype, propertyName) as
      SchemaPropertyOptions | undefined;
    if (own) merged = { ...merged, ...own };
  }
  return merged;
}

/**
 * Names of the properties decorated with `@SchemaProperty()` on the class or its ancestors,
 * ancestors first.
 *
 * @internal
 */
export function getSchemaPropertyNames(type: Function): string[] {
  const names: string[] = [];
  for (const prototype of prototypeChain(type)) {
    const own = Reflect.getOwnMetadata(SCHEMA_PROPERTY_NAMES_METADATA, prototype) as string[] | undefined;
    for (const name of own ?? []) if (!names.includes(name)) names.push(name);
  }
  return names;
}

function prototypeChain(type: Function): object[] {
  const chain: object[] = [];
  for (let proto = type.prototype as object | null; proto && proto !== Object.prototype;) {
    chain.unshift(proto);
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return chain;
}
