import { TransformationType } from 'class-transformer';
import {
  ValidationTypes,
  getMetadataStorage,
  isBoolean,
  isEnum,
  isIn,
  isInt,
  isNumber,
  isString,
  max,
  maxLength,
  min,
} from 'class-validator';
import { getTransformerStorage } from './dto-metadata.js';
import type { JsonSchema } from './json-schema.types.js';
import type { JsonSchemaCheck } from './json-schema.validator.js';
import { getEffectiveValidationMetadata, validationRuleName, type ValidationMetadata } from './validation-rules.js';

// Most tool DTOs are flat: strings, numbers, booleans and enums with bounds. For those, the JSON
// Schema the DTO is listed with, which every call's arguments must pass anyway, already decides
// everything class-validator would, and the instance class-transformer would build is the class
// with the arguments copied onto it. This file proves that, per DTO, once at bootstrap: a call
// whose arguments pass the schema then skips class-transformer and class-validator (about a
// tenth of a tools/call's CPU); anything the proof does not cover takes the full path.

/** A DTO instance built from arguments the schema accepted, or undefined: take the full path. */
export type SchemaDecidedCast = (plain: Record<string, unknown>) => object | undefined;

type Predicate = (value: unknown) => boolean;
type Accepted = { kinds: ReadonlySet<string>; values?: readonly unknown[] };

/**
 * What a rule requires, as class-validator's own exported check, and whether a property schema
 * that accepts `accepted` already guarantees it. Only rules whose meaning JSON Schema states
 * exactly are here; each is probed on the DTO (below), so a custom rule that took a built-in's
 * name does not pass for it.
 */
const RULES: Readonly<
  Record<string, (c: readonly unknown[]) => { holds: Predicate; implied: (a: Accepted, s: JsonSchema) => boolean }>
> = {
  isString: () => ({ holds: (v) => isString(v), implied: (a) => only(a, 'string') }),
  isBoolean: () => ({ holds: (v) => isBoolean(v), implied: (a) => only(a, 'boolean') }),
  isInt: () => ({ holds: (v) => isInt(v), implied: (a) => only(a, 'integer') }),
  isNumber: ([options]) => ({
    holds: (v) => isNumber(v, options as object),
    // maxDecimalPlaces has no JSON Schema spelling; NaN and infinities never get here (see cast).
    implied: (a) =>
      (options as { maxDecimalPlaces?: number } | undefined)?.maxDecimalPlaces === undefined &&
      only(a, 'number', 'integer'),
  }),
  min: ([bound]) => ({
    holds: (v) => min(v, bound as number),
    implied: (a, s) =>
      only(a, 'number', 'integer') && (atLeast(s.minimum, bound) || atLeast(s.exclusiveMinimum, bound)),
  }),
  max: ([bound]) => ({
    holds: (v) => max(v, bound as number),
    implied: (a, s) =>
      only(a, 'number', 'integer') && (atLeast(bound, s.maximum) || atLeast(bound, s.exclusiveMaximum)),
  }),
  // class-validator counts a surrogate pair as one character, and a variation selector as none:
  // never more than the code points Ajv counts, so a string within the schema's bound is within its own.
  maxLength: ([bound]) => ({
    holds: (v) => maxLength(v, bound as number),
    implied: (a, s) => only(a, 'string') && atLeast(bound, s.maxLength),
  }),
  isEnum: ([entity]) => ({ holds: (v) => isEnum(v, entity), implied: () => false }),
  isIn: ([values]) => ({ holds: (v) => isIn(v, values as unknown[]), implied: () => false }),
};

/**
 * The shortcut for one DTO class, or undefined when its schema does not decide every rule. The
 * returned function builds the instance when `matchesSchema` accepts the arguments.
 *
 * @internal
 */
export function planSchemaDecidedCast(
  type: new () => object,
  schema: JsonSchema,
  matchesSchema: JsonSchemaCheck,
): SchemaDecidedCast | undefined {
  if (schema.type !== 'object' || schema.additionalProperties !== false) return undefined;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
  const rules = new Map<string, ValidationMetadata[]>();
  for (const meta of getEffectiveValidationMetadata(type)) {
    const list = rules.get(meta.propertyName);
    if (list) list.push(meta);
    else rules.set(meta.propertyName, [meta]);
  }
  const names = Object.keys(properties);
  // Same property list both ways: class-validator refuses a key it has no rule for, and checks
  // a ruled property the schema would let be absent.
  if (rules.size === 0 || names.length !== rules.size || !names.every((name) => rules.has(name))) return undefined;
  if (!transformsNothing(type, names)) return undefined;
  for (const name of names) {
    if (!decided(type, name, properties[name]!, rules.get(name)!, required.has(name))) return undefined;
  }
  return (plain) => {
    let instance: Record<string, unknown>;
    if (matchesSchema(plain) !== null) return undefined;
    try {
      instance = new type() as Record<string, unknown>;
    } catch {
      return undefined; // class-transformer's own construction reports it
    }
    // A constructor that sets fields (defaults) is checked on the instance too: those are values
    // class-validator sees that the arguments did not carry.
    const preset = hasEnumerable(instance);
    for (const key in plain) {
      if (!Object.hasOwn(plain, key)) continue;
      const value = plain[key];
      // Only a caller in the process can send these; JSON has none. class-validator decides them.
      if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
      // class-transformer keeps a function field the constructor set rather than copy over it.
      if (preset && typeof instance[key] === 'function') return undefined;
      instance[key] = value;
    }
    return preset && matchesSchema(instance) !== null ? undefined : instance;
  };
}

function hasEnumerable(object: object): boolean {
  for (const _ in object) return true;
  return false;
}

/** No class-transformer decorator reshapes the copy, and no accessor or method shares a property's name. */
function transformsNothing(type: new () => object, names: readonly string[]): boolean {
  const storage = getTransformerStorage();
  if (storage.getStrategy(type) !== 'none') return false;
  if (storage.getExposedProperties(type, TransformationType.PLAIN_TO_CLASS).length > 0) return false;
  if (storage.getExcludedProperties(type, TransformationType.PLAIN_TO_CLASS).length > 0) return false;
  return names.every(
    (name) =>
      !(name in type.prototype) &&
      storage.findTypeMetadata(type, name) === undefined &&
      storage.findTransformMetadatas(type, name, TransformationType.PLAIN_TO_CLASS).length === 0,
  );
}

/** Whether every value the property's schema accepts passes every class-validator rule on it. */
function decided(
  type: Function,
  name: string,
  schema: JsonSchema,
  metas: readonly ValidationMetadata[],
  required: boolean,
): boolean {
  const accepted = acceptedBy(schema);
  if (!accepted) return false;
  let optional = false;
  const checks: { holds: Predicate; implied: boolean; meta: ValidationMetadata }[] = [];
  for (const meta of metas) {
    if (meta.groups?.length || meta.always || meta.each) return false;
    if (meta.type === ValidationTypes.CONDITIONAL_VALIDATION && meta.name === 'isOptional') {
      optional = skipsOnlyMissing(meta);
      if (!optional) return false;
      continue;
    }
    const rule = validationRuleName(meta);
    if (meta.type !== ValidationTypes.CUSTOM_VALIDATION || !Object.hasOwn(RULES, rule)) return false;
    const { holds, implied } = RULES[rule]!(meta.constraints ?? []);
    checks.push({ holds, implied: implied(accepted, schema), meta });
  }
  // class-validator runs the rules on a missing or null value unless @IsOptional() skips it.
  if ((!required || accepted.kinds.has('null')) && !optional) return false;
  const values = accepted.values?.filter((value) => value !== null);
  return checks.every(
    ({ holds, implied, meta }) =>
      (values ? values.every(holds) : implied) && probedAs(type, name, meta, holds, values ?? []),
  );
}

/** The JSON types a property schema admits, and its values when it lists them; undefined when open. */
function acceptedBy(schema: JsonSchema): Accepted | undefined {
  const listed = Array.isArray(schema.enum)
    ? (schema.enum as unknown[])
    : 'const' in schema
      ? [schema.const]
      : undefined;
  if (listed) {
    if (!listed.every((value) => value === null || ['string', 'number', 'boolean'].includes(typeof value)))
      return undefined;
    return { kinds: new Set(listed.map((value) => (value === null ? 'null' : typeof value))), values: listed };
  }
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type : undefined;
  if (!types || !types.every((t) => ['string', 'number', 'integer', 'boolean', 'null'].includes(t as string)))
    return undefined;
  return { kinds: new Set(types as string[]) };
}

function only(accepted: Accepted, ...kinds: string[]): boolean {
  for (const kind of accepted.kinds) if (kind !== 'null' && !kinds.includes(kind)) return false;
  return true;
}

function atLeast(value: unknown, bound: unknown): boolean {
  return typeof value === 'number' && typeof bound === 'number' && value >= bound;
}

/** @IsOptional() as class-validator ships it: skip a null or missing value, nothing else. */
function skipsOnlyMissing(meta: ValidationMetadata): boolean {
  const condition = meta.constraints?.[0] as ((object: object, value: unknown) => unknown) | undefined;
  if (typeof condition !== 'function') return false;
  const property = meta.propertyName;
  return [null, undefined, 0, '', false, 'x'].every(
    (value) => condition({ [property]: value }, value) === (value !== null && value !== undefined),
  );
}

/**
 * The rule's constraint, run on sample values, answers as class-validator's own check does: a
 * custom constraint registered under a built-in's name (sync or async) is not taken for it.
 */
function probedAs(
  type: Function,
  property: string,
  meta: ValidationMetadata,
  holds: Predicate,
  listed: readonly unknown[],
): boolean {
  const constraint = getMetadataStorage().getTargetValidatorConstraints(meta.constraintCls)[0];
  if (!constraint || constraint.async || typeof constraint.instance?.validate !== 'function') return false;
  const bound = meta.constraints?.[0];
  const near = typeof bound === 'number' && Number.isFinite(bound) ? [bound - 1, bound, bound + 1, bound + 0.5] : [];
  const lengths =
    typeof bound === 'number' && Number.isInteger(bound) && bound >= 0 && bound <= 1024
      ? ['x'.repeat(bound), 'x'.repeat(bound + 1)]
      : [];
  const samples = [
    null,
    true,
    false,
    0,
    1,
    -1,
    2.5,
    '',
    'a',
    'abc',
    '1',
    'true',
    {},
    [],
    ...near,
    ...lengths,
    ...listed,
  ];
  return samples.every((value) => {
    const answer: unknown = constraint.instance.validate(value, {
      value,
      constraints: meta.constraints ?? [],
      targetName: type.name,
      object: {},
      property,
    });
    return answer === holds(value);
  });
}
