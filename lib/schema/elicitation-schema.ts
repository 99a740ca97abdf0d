import { DtoCaster, type ClassConstructor, type CompiledCaster } from './dto-caster.js';
import { JsonSchemaFactory } from './json-schema.factory.js';
import type { JsonSchema } from './json-schema.types.js';
import { compileJsonSchema, type JsonSchemaCheck } from './json-schema.validator.js';
import { isStandardSchema, standardJsonSchema, validateStandard } from './standard-schema.js';

/**
 * Elicitation schemas are a restricted, flat subset of JSON Schema that clients render as forms.
 * A DTO's emitted schema is narrowed to it: one primitive type per property (no `null` unions),
 * no `additionalProperties`.
 */
export function toElicitationSchema(schema: JsonSchema): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, raw] of Object.entries((schema.properties as Record<string, JsonSchema>) ?? {})) {
    const property: JsonSchema = { ...raw };
    if (Array.isArray(property.type)) {
      const types = (property.type as string[]).filter((t) => t !== 'null');
      property.type = types.length === 1 ? types[0] : types;
    }
    if (Array.isArray(property.enum)) property.enum = (property.enum as unknown[]).filter((v) => v !== null);
    properties[name] = property;
  }
  const result: JsonSchema = { type: 'object', properties };
  if (Array.isArray(schema.required) && schema.required.length) result.required = schema.required;
  return result;
}

/** Builds (once per schema) what McpContext needs to elicit with a DTO class or a raw schema. */
export class ElicitationSchemas {
  private readonly factory = new JsonSchemaFactory();
  private readonly caster = new DtoCaster();
  private readonly wire = new WeakMap<object, JsonSchema>();
  private readonly casters = new WeakMap<object, CompiledCaster<object>>();
  private readonly checks = new WeakMap<object, JsonSchemaCheck>();

  requestedSchema(schema: unknown): JsonSchema {
    if (typeof schema !== 'object' && typeof schema !== 'function') {
      throw new TypeError('Elicitation needs a DTO class or a JSON Schema object describing the form.');
    }
    const key = schema as object;
    let wire = this.wire.get(key);
    if (!wire) {
      wire = isStandardSchema(schema)
        ? toElicitationSchema(standardJsonSchema(schema, 'ctx.elicit()'))
        : typeof schema === 'function'
          ? toElicitationSchema(this.factory.create(schema))
          : (schema as JsonSchema);
      this.wire.set(key, wire);
    }
    return wire;
  }

  async validateContent(schema: unknown, content: unknown): Promise<{ ok: true; value: unknown } | { ok: false }> {
    if (typeof content !== 'object' || content === null || Array.isArray(content)) return { ok: false };
    const key = schema as object;
    if (isStandardSchema(schema)) {
      const outcome = await validateStandard(schema, content);
      return outcome.ok ? { ok: true, value: outcome.value } : { ok: false };
    }
    if (typeof schema === 'function') {
      let cast = this.casters.get(key);
      if (!cast) {
        cast = this.caster.compile(schema as ClassConstructor<object>);
        this.casters.set(key, cast);
      }
      const outcome = await cast(content);
      return outcome.ok ? { ok: true, value: outcome.value } : { ok: false };
    }
    let check = this.checks.get(key);
    if (!check) {
      check = compileJsonSchema(schema as JsonSchema);
      this.checks.set(key, check);
    }
    return check(content) === null ? { ok: true, value: content } : { ok: false };
  }
}
