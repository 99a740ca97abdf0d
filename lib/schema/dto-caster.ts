import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate, type ValidationError, type ValidatorOptions } from 'class-validator';
import { JsonSchemaFactory } from './json-schema.factory.js';
import { getEffectiveValidationMetadata, isBuiltInRule, validationRuleName } from './validation-rules.js';
import { joinIssuePath, type JsonSchema, type ValidationIssue } from './json-schema.types.js';
import { compileJsonSchema, type JsonSchemaCheck } from './json-schema.validator.js';
import { planSchemaDecidedCast } from './schema-decided.js';

type ValidationMetadata = ReturnType<typeof getEffectiveValidationMetadata>[number];

/**
 * A class that class-transformer can instantiate.
 *
 * @publicApi
 */
export type ClassConstructor<T> = new (...args: any[]) => T;

/**
 * The outcome of casting arguments: a validated DTO instance, or the issues found.
 *
 * @publicApi
 */
export type CastResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/**
 * Casts and validates one call's arguments. Compiled once per DTO class.
 *
 * @publicApi
 */
export type CompiledCaster<T> = (args: unknown) => Promise<CastResult<T>>;

/**
 * A caster that answers at once when it can (no class-transformer or class-validator work was
 * needed), else with a promise.
 *
 * @internal
 */
export type Caster<T> = (args: unknown) => CastResult<T> | Promise<CastResult<T>>;

interface Casters {
  cast: Caster<object>;
  compiled: CompiledCaster<object>;
}

/**
 * @publicApi
 */
export interface DtoCasterOptions {
  /**
   * Convert string values of top-level properties (and of their array items) to the number,
   * integer or boolean type the schema declares, when the string spells such a value exactly
   * (`"42"`, `"-1.5"`, `"true"`). For prompt arguments and URI-template variables, which arrive as
   * strings. Anything else is left for validation to refuse.
   * @default false
   */
  coerceStrings?: boolean;
}

const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  validationError: { target: true, value: true },
};
/** class-transformer silently skips these keys, so class-validator never sees them. */
const RESERVED_KEYS = ['__proto__', 'constructor'];
const REDACTED = '[value]';
const NUMBER = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * Turns raw tool/prompt arguments into validated DTO instances: `plainToInstance` (no implicit
 * conversion, so `"5"` is not silently a number) then class-validator with unknown properties
 * refused, matching the `additionalProperties: false` of the generated schema; then the generated
 * schema itself (Ajv), so that what is accepted is never more than what is listed.
 *
 * Issues never repeat the submitted value: custom messages are re-rendered with `$value` (and any
 * value a message function reads) replaced by `[value]`.
 *
 * @publicApi
 */
export class DtoCaster {
  private readonly plain = new WeakMap<Function, Casters>();
  private readonly coercing = new WeakMap<Function, Casters>();

  constructor(private readonly schemaFactory: JsonSchemaFactory = new JsonSchemaFactory()) {}

  /**
   * The caster for a DTO class, built on first use and cached per class identity. Arguments must
   * pass both class-validator and the JSON Schema this DTO is listed with (compiled here, once),
   * so a handler never receives arguments the listed schema refuses.
   *
   * @throws SchemaGenerationError when the DTO cannot be described as a JSON Schema.
   */
  compile<T extends object>(type: ClassConstructor<T>, options: DtoCasterOptions = {}): CompiledCaster<T> {
    return this.casters(type, options).compiled as CompiledCaster<T>;
  }

  /**
   * The same caster, answering without a promise when the DTO's schema decides the arguments
   * (see schema-decided.ts): the call path's.
   *
   * @internal
   */
  caster<T extends object>(type: ClassConstructor<T>, options: DtoCasterOptions = {}): Caster<T> {
    return this.casters(type, options).cast as Caster<T>;
  }

  private casters(type: ClassConstructor<object>, options: DtoCasterOptions): Casters {
    const cache = options.coerceStrings ? this.coercing : this.plain;
    let casters = cache.get(type);
    if (!casters) {
      const schema = this.schemaFactory.create(type);
      const cast = buildCaster(
        type,
        schema,
        compileJsonSchema(schema),
        options.coerceStrings ? buildCoercion(schema) : undefined,
      );
      casters = { cast, compiled: async (args) => cast(args) };
      cache.set(type, casters);
    }
    return casters;
  }
}

/**
 * Renders issues as one text block for a tool result or a JSON-RPC error message.
 *
 * @example
 * formatIssues(issues, 'tool "create_task"');
 * // Invalid arguments for tool "create_task":
 * // - title: must be a string (isString)
 *
 * @publicApi
 */
export function formatIssues(issues: readonly ValidationIssue[], subject: string, limit = 20): string {
  const lines = issues.slice(0, limit).map((issue) => `- ${issue.path || '(root)'}: ${issue.message} (${issue.rule})`);
  if (issues.length > limit) lines.push(`- … and ${issues.length - limit} more`);
  return `Invalid arguments for ${subject}:\n${lines.join('\n')}`;
}

function buildCaster(
  type: ClassConstructor<object>,
  schema: JsonSchema,
  matchesSchema: JsonSchemaCheck,
  coerce: ((input: Record<string, unknown>) => Record<string, unknown>) | undefined,
): Caster<object> {
  // class-validator refuses an instance of a class it has no rules for (forbidUnknownValues),
  // even when nothing was sent: such a class (argument-less, or described by @ApiProperty alone)
  // is checked by its schema only.
  const hasRules = getEffectiveValidationMetadata(type).length > 0;
  const decided = hasRules ? planSchemaDecidedCast(type, schema, matchesSchema) : undefined;
  const listed = Object.keys((schema.properties ?? {}) as object);
  const messages = new MessageRenderer();
  const validated = async (
    record: Record<string, unknown>,
    plain: Record<string, unknown>,
    issues: ValidationIssue[],
  ): Promise<CastResult<object>> => {
    // class-transformer and class-validator themselves trip over some shapes (a nested
    // "constructor" key): arguments the listed schema refuses are the caller's fault, and get its
    // issues. Arguments it accepts met the application's own code (a @Transform or a custom
    // constraint that threw): that goes on as a handler's exception would, an HttpException with
    // its message, anything else with a reference id and its text in the log only.
    const refusedOrThrow = (error: unknown): CastResult<object> => {
      const schemaIssues = matchesSchema(plain);
      if (schemaIssues) return { ok: false, issues: [...issues, ...schemaIssues] };
      throw error;
    };
    let instance: object;
    try {
      instance = plainToInstance(type, plain);
    } catch (error) {
      return refusedOrThrow(error);
    }
    if (!hasRules) {
      // An argument-less class: every key is unknown. Otherwise the schema says it all, below.
      for (const key of listed.length === 0 ? Object.keys(record) : []) {
        issues.push({
          path: joinIssuePath('', key),
          rule: 'whitelistValidation',
          message: 'is not an allowed property',
        });
      }
    } else {
      let errors: ValidationError[];
      try {
        errors = await validate(instance, VALIDATOR_OPTIONS);
      } catch (error) {
        return refusedOrThrow(error);
      }
      collectIssues(errors, '', messages, issues);
    }
    if (issues.length > 0) return { ok: false, issues };
    // class-validator lets some shapes through that the listed schema refuses: @ValidateNested
    // walks an array given for a single nested object, @Type(() => Date) accepts numbers,
    // @IsEnum accepts a numeric enum's key names. The schema has the last word. It runs after
    // class-validator so that its (field-named) messages stay the ones clients usually see.
    const schemaIssues = matchesSchema(plain);
    return schemaIssues ? { ok: false, issues: schemaIssues } : { ok: true, value: instance };
  };
  return (args) => {
    const input = args === undefined ? {} : args;
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return { ok: false, issues: [{ path: '', rule: 'type', message: 'must be an object' }] };
    }
    const record = input as Record<string, unknown>;
    // A loop, not filter/map: this runs on every call, and these keys are almost never sent.
    const issues: ValidationIssue[] = [];
    for (const key of RESERVED_KEYS) {
      if (Object.hasOwn(record, key))
        issues.push({
          path: joinIssuePath('', key),
          rule: 'whitelistValidation',
          message: 'is not an allowed property',
        });
    }
    const plain = coerce ? coerce(record) : record;
    const value = decided && issues.length === 0 ? decided(plain) : undefined;
    return value ? { ok: true, value } : validated(record, plain, issues);
  };
}

function collectIssues(
  errors: readonly ValidationError[],
  base: string,
  messages: MessageRenderer,
  out: ValidationIssue[],
) {
  for (const error of errors) {
    const path =
      error.property === undefined
        ? base
        : joinIssuePath(base, Array.isArray(error.target) ? Number(error.property) : error.property);
    for (const [rule, message] of Object.entries(error.constraints ?? {})) {
      out.push({ path, rule, message: messages.render(error, rule, message) });
    }
    if (error.children && error.children.length > 0) collectIssues(error.children, path, messages, out);
  }
}

/** Produces value-free messages, looking up the metadata behind each failed constraint. */
class MessageRenderer {
  private readonly index = new WeakMap<Function, Map<string, ValidationMetadata[]>>();

  render(error: ValidationError, rule: string, original: string): string {
    switch (rule) {
      case 'whitelistValidation':
        return 'is not an allowed property';
      case 'nestedValidation':
        return 'must be an object';
      case 'unknownValue':
        return 'is not an accepted value';
    }
    const ctor = (error.target as object | undefined)?.constructor;
    const meta = ctor ? this.find(ctor, error.property, rule) : undefined;
    let message = original;
    if (meta && ctor && (meta.message !== undefined || !isBuiltInRule(rule))) {
      message = scrub(renderRedacted(meta, rule, ctor, error.property), error.value);
    } else if (!meta) {
      message = scrub(original, error.value);
    }
    return tidy(message, error.property);
  }

  private find(ctor: Function, property: string, rule: string): ValidationMetadata | undefined {
    let byProperty = this.index.get(ctor);
    if (!byProperty) {
      byProperty = new Map();
      for (const meta of getEffectiveValidationMetadata(ctor)) {
        const list = byProperty.get(meta.propertyName);
        if (list) list.push(meta);
        else byProperty.set(meta.propertyName, [meta]);
      }
      this.index.set(ctor, byProperty);
    }
    return byProperty.get(property)?.find((meta) => validationRuleName(meta) === rule);
  }
}

/**
 * Renders a message the way class-validator does, but from arguments that carry no submitted
 * data: `value` is a placeholder and `object` a blank instance, so a message function cannot
 * read the input either.
 */
function renderRedacted(meta: ValidationMetadata, rule: string, ctor: Function, property: string): string {
  const constraints = meta.constraints ?? [];
  const args = {
    value: REDACTED,
    constraints,
    targetName: ctor.name,
    object: Object.create(ctor.prototype as object) as object,
    property,
  };
  let template: string | undefined;
  try {
    if (typeof meta.message === 'function') template = meta.message(args);
    else if (typeof meta.message === 'string') template = meta.message;
    else {
      const constraint = getMetadataStorage().getTargetValidatorConstraints(meta.constraintCls)[0];
      template = constraint?.instance?.defaultMessage?.(args);
    }
  } catch {
    template = undefined;
  }
  if (!template) return `failed the "${rule}" check`;
  constraints.forEach((constraint: unknown, index: number) => {
    template = template!.replace(new RegExp(`\\$constraint${index + 1}`, 'g'), constraintText(constraint));
  });
  return template
    .replace(/\$value/g, REDACTED)
    .replace(/\$property/g, property)
    .replace(/\$target/g, ctor.name);
}

function constraintText(constraint: unknown): string {
  if (Array.isArray(constraint)) return constraint.join(', ');
  if (typeof constraint === 'symbol') return constraint.description ?? '';
  return String(constraint);
}

/** Last line of defence for hand-written messages: cut the submitted text out if it shows up anyway. */
function scrub(message: string, value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number') return message;
  const text = String(value);
  return text.length >= 4 && message.includes(text) ? message.split(text).join(REDACTED) : message;
}

function tidy(message: string, property: string): string {
  if (message.startsWith(`${property} `)) return message.slice(property.length + 1);
  if (message.startsWith(`each value in ${property} `))
    return `each value ${message.slice(`each value in ${property} `.length)}`;
  return message;
}

type Coercer = (value: unknown) => unknown;

/**
 * The string-to-scalar conversion of `coerceStrings`, planned once from a schema's top-level
 * properties. Undefined when no property needs one.
 *
 * @internal
 */
export function buildCoercion(
  schema: JsonSchema,
): ((input: Record<string, unknown>) => Record<string, unknown>) | undefined {
  const plan = new Map<string, Coercer>();
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, property] of Object.entries(properties)) {
    const scalar = scalarCoercer(property);
    if (scalar) {
      plan.set(name, scalar);
      continue;
    }
    const items = typesOf(property).has('array') ? scalarCoercer((property.items ?? {}) as JsonSchema) : undefined;
    if (items) plan.set(name, (value) => (Array.isArray(value) ? value.map(items) : value));
  }
  if (plan.size === 0) return undefined;
  return (input) => {
    let output: Record<string, unknown> | undefined;
    for (const [name, coerce] of plan) {
      if (!Object.hasOwn(input, name)) continue;
      const value = input[name];
      const coerced = coerce(value);
      if (coerced !== value) {
        output ??= { ...input }; // never write into the caller's object
        output[name] = coerced;
      }
    }
    return output ?? input;
  };
}

function scalarCoercer(schema: JsonSchema): Coercer | undefined {
  const types = typesOf(schema);
  if (types.has('string')) return undefined;
  const numeric = types.has('number') || types.has('integer');
  const boolean = types.has('boolean');
  if (!numeric && !boolean) return undefined;
  return (value) => {
    if (typeof value !== 'string') return value;
    if (numeric && NUMBER.test(value)) return Number(value);
    if (boolean && (value === 'true' || value === 'false')) return value === 'true';
    return value;
  };
}

function typesOf(schema: JsonSchema): Set<string> {
  const types = new Set<string>();
  const type = schema.type;
  if (typeof type === 'string') types.add(type);
  else if (Array.isArray(type)) for (const t of type) types.add(String(t));
  else if (Array.isArray(schema.enum)) {
    for (const value of schema.enum) types.add(value === null ? 'null' : typeof value);
  }
  return types;
}
