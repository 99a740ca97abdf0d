import type { JsonSchema } from './json-schema.types.js';
import { copyJson, jsonClone } from './json-copy.js';
import type { SchemaPropertyOptions } from './schema-property.decorator.js';

// One property of a DTO as the emitter models it, whichever decorators described it.

export type Resolve = (type: Function) => JsonSchema;

export interface PropertyModel {
  readonly name: string;
  readonly required: boolean;
  /** DTO classes this property embeds, for cycle detection. */
  readonly nested: readonly Function[];
  /** Builds the property schema once nested classes can be resolved (inline or `$ref`). */
  render(resolve: Resolve): JsonSchema;
}

/** The property as listed: its value schema, then annotations, `@SchemaProperty` overriding the rest. */
export function finish(
  name: string,
  required: boolean,
  nested: readonly Function[],
  build: (resolve: Resolve) => JsonSchema,
  options: SchemaPropertyOptions,
  nullable: boolean,
  initial: unknown,
  annotations: JsonSchema,
): PropertyModel {
  const defaultValue = options.default !== undefined ? options.default : jsonClone(initial);
  return {
    name,
    required,
    nested,
    render(resolve) {
      let schema = build(resolve);
      if (nullable) schema = withNull(schema);
      const out: JsonSchema = { ...annotations };
      if (options.title !== undefined) out.title = options.title;
      if (options.description !== undefined) out.description = options.description;
      Object.assign(out, schema);
      if (options.format !== undefined) out.format = options.format;
      if (defaultValue !== undefined) out.default = copyJson(defaultValue);
      if (options.examples !== undefined) out.examples = copyJson([...options.examples]);
      if (options.deprecated !== undefined) out.deprecated = options.deprecated;
      if (options.schema !== undefined) Object.assign(out, copyJson(options.schema));
      return out;
    },
  };
}

/** Adds `null` to the accepted values without touching keywords that only apply to other types. */
function withNull(schema: JsonSchema): JsonSchema {
  if (['$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'const'].some((keyword) => keyword in schema)) {
    return { anyOf: [schema, { type: 'null' }] };
  }
  if (schema.type === undefined && schema.enum === undefined) return schema;
  const out = { ...schema };
  if (out.type !== undefined) {
    const types = Array.isArray(out.type) ? (out.type as string[]) : [out.type as string];
    if (!types.includes('null')) out.type = [...types, 'null'];
  }
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}
