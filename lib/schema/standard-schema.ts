import type { JsonSchema, ValidationIssue } from './json-schema.types.js';
import { joinIssuePath } from './json-schema.types.js';

/**
 * The Standard Schema v1 interface (https://standardschema.dev), declared here structurally so
 * that no schema library becomes a dependency: zod 4, valibot, arktype and others implement it.
 *
 * @publicApi
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}

/** @publicApi */
export declare namespace StandardSchemaV1 {
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    /** The Standard JSON Schema converter, offered by libraries that implement it (zod ≥ 4.2). */
    readonly jsonSchema?: StandardJsonSchemaConverter;
  }
  type Result<Output> =
    { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<Issue> };
  interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
  }
}

/**
 * The Standard JSON Schema converter (`~standard.jsonSchema`): one function per direction.
 *
 * @publicApi
 */
export interface StandardJsonSchemaConverter {
  readonly input: (options: { readonly target: string }) => Record<string, unknown>;
  readonly output?: (options: { readonly target: string }) => Record<string, unknown>;
}

/**
 * The validated (output) type of a Standard Schema: what the method's `@Args()` receives.
 *
 * @example
 * ```ts
 * const CreateTask = z.object({ title: z.string().min(1) });
 * @Tool({ input: CreateTask })
 * create(@Args() input: InferArgs<typeof CreateTask>) {}
 * ```
 * @publicApi
 */
export type InferArgs<S> = S extends { readonly '~standard': { readonly types?: infer T } }
  ? NonNullable<T> extends { readonly output: infer O }
    ? O
    : unknown
  : never;

/**
 * A Standard Schema paired with the JSON Schema it is listed with, for libraries that do not offer
 * `~standard.jsonSchema` (or to override what they emit).
 *
 * @example
 * ```ts
 * @Tool({ input: withJsonSchema(MySchema, toJsonSchema(MySchema)) })
 * ```
 * @publicApi
 */
export function withJsonSchema<S extends StandardSchemaV1>(schema: S, jsonSchema: Record<string, unknown>): S {
  const converter: StandardJsonSchemaConverter = { input: () => jsonSchema };
  const props = { ...schema['~standard'], jsonSchema: converter };
  // The wrapper keeps the original as its prototype so library methods still work on it.
  return Object.create(schema, { '~standard': { value: Object.freeze(props), enumerable: true } }) as S;
}

/** Whether a value implements Standard Schema v1 (a `~standard` object with a `validate` function). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return (
    typeof props === 'object' && props !== null && typeof (props as { validate?: unknown }).validate === 'function'
  );
}

/**
 * The JSON Schema 2020-12 a Standard Schema is listed with, computed once at bootstrap through the
 * library's own Standard JSON Schema converter. The `$schema` key is dropped, as the DTO path
 * emits none (2020-12 is the MCP default).
 *
 * @throws Error naming the site and the vendor when the schema offers no converter or its
 *   converter fails, or when the result is not an object schema.
 */
export function standardJsonSchema(
  schema: StandardSchemaV1,
  site: string,
  direction: 'input' | 'output' = 'input',
): JsonSchema {
  const props = schema['~standard'];
  const vendor = String(props.vendor ?? 'unknown');
  const convert = props.jsonSchema?.[direction];
  if (typeof convert !== 'function') {
    throw new Error(
      `${site}: the ${vendor} schema offers no Standard JSON Schema converter (~standard.jsonSchema), so its JSON Schema cannot be listed. ` +
        'Use a library version that implements it (zod >= 4.2; valibot through toStandardJsonSchema() of @valibot/to-json-schema), ' +
        'or pair it with its JSON Schema: withJsonSchema(schema, jsonSchema).',
    );
  }
  let emitted: unknown;
  try {
    emitted = convert({ target: 'draft-2020-12' });
  } catch (error) {
    throw new Error(
      `${site}: the ${vendor} schema could not be converted to JSON Schema 2020-12: ${(error as Error).message}`,
    );
  }
  if (typeof emitted !== 'object' || emitted === null || Array.isArray(emitted)) {
    throw new Error(`${site}: the ${vendor} schema's JSON Schema converter returned no object.`);
  }
  const { $schema: _dropped, ...rest } = JSON.parse(JSON.stringify(emitted)) as JsonSchema;
  return rest;
}

/** The outcome of validating with a Standard Schema. */
export type StandardOutcome = { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] };

/**
 * Validates through `~standard.validate` and turns the library's issues into field-named ones
 * (`address.zip`, `items[2]`), the form the DTO path reports. Only the issue's path and message
 * are kept: libraries attach the submitted input to issues, which must not be echoed back.
 *
 * @throws what the schema's own code threw (a refinement or transform that failed): it is the
 *   application's error, not the caller's, and takes the path of a handler's exception (a
 *   reference id for the caller, the message in the log).
 */
export async function validateStandard(schema: StandardSchemaV1, value: unknown): Promise<StandardOutcome> {
  const props = schema['~standard'];
  const result = await props.validate(value);
  if (!result.issues) return { ok: true, value: (result as { value: unknown }).value };
  const rule = String(props.vendor);
  return {
    ok: false,
    issues: result.issues.map((issue) => ({ path: issuePath(issue.path), rule, message: String(issue.message) })),
  };
}

function issuePath(path: StandardSchemaV1.Issue['path']): string {
  let out = '';
  for (const segment of path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    out = joinIssuePath(out, typeof key === 'number' ? key : String(key));
  }
  return out;
}
