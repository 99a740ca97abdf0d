import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { joinIssuePath, type JsonSchema, type ValidationIssue } from './json-schema.types.js';

/**
 * Checks one value; returns `null` when it is valid, else the issues (never containing the value).
 *
 * @publicApi
 */
export type JsonSchemaCheck = (value: unknown) => ValidationIssue[] | null;

const DRAFT_2020_12 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

let ajv: Ajv2020 | undefined;
const compiled = new WeakMap<object, JsonSchemaCheck>();
let documents = 0;

function sharedAjv(): Ajv2020 {
  // One instance for the process: compiled code is cached per schema object, and the options
  // are fixed. Formats are annotations (as in the 2020-12 default vocabulary); `addUsedSchema`
  // is off so two schemas declaring the same `$id` do not clash.
  ajv ??= new Ajv2020({ allErrors: true, strict: false, validateFormats: false, addUsedSchema: false });
  return ajv;
}

/**
 * Compiles a JSON Schema 2020-12 document with Ajv, once per schema object.
 * `$defs`, `$ref`, `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else` are supported; references to
 * other documents are refused instead of fetched.
 *
 * @throws Error when the schema is invalid, declares another dialect, or has a remote `$ref`.
 * @publicApi
 */
export function compileJsonSchema(schema: JsonSchema): JsonSchemaCheck {
  const cached = compiled.get(schema);
  if (cached) return cached;
  assertSelfContained(schema);
  let validate: ValidateFunction;
  try {
    // Without `addUsedSchema`, Ajv resolves `$ref: "#"` only against a root that has an `$id`;
    // give id-less documents a private base URI (on a copy: the caller's schema is not touched).
    validate = sharedAjv().compile(
      typeof schema.$id === 'string' ? schema : { ...schema, $id: `mcp-schema:///${++documents}` },
    );
  } catch (error) {
    throw new Error(
      `Invalid JSON Schema: ${(error as Error).message}. Fix the schema so it is valid JSON Schema 2020-12.`,
    );
  }
  const check: JsonSchemaCheck = (value) => (validate(value) ? null : toIssues(validate.errors ?? [], value));
  compiled.set(schema, check);
  return check;
}

function assertSelfContained(schema: JsonSchema): void {
  const dialect = schema.$schema;
  if (dialect !== undefined && (typeof dialect !== 'string' || !DRAFT_2020_12.test(dialect))) {
    throw new Error(
      `Unsupported JSON Schema dialect "${String(dialect)}". Use JSON Schema 2020-12 (omit "$schema" or set it to "https://json-schema.org/draft/2020-12/schema").`,
    );
  }
  const ids = new Set<string>();
  const refs: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if ((key === '$ref' || key === '$dynamicRef') && typeof value === 'string') refs.push(value);
        else if (key === '$id' && typeof value === 'string') ids.add(value.replace(/#$/, ''));
        walk(value);
      }
    }
  };
  walk(schema);
  for (const ref of refs) {
    if (ref.startsWith('#')) continue;
    const document = ref.split('#')[0]!;
    if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(document) && !ids.has(document)) {
      throw new Error(
        `The JSON Schema references "${ref}", which is not part of the schema; remote references are not fetched. Copy the referenced schema under "$defs" and point "$ref" at "#/$defs/<name>".`,
      );
    }
  }
}

function toIssues(errors: readonly ErrorObject[], root: unknown): ValidationIssue[] {
  // `anyOf: [X, {type: 'null'}]` (a nullable reference) fails both branches; the null branch and
  // the anyOf summary only add noise next to the errors that explain X.
  const relevant = errors.filter(
    (error) =>
      !(
        error.keyword === 'type' &&
        (error.params as { type?: unknown }).type === 'null' &&
        /\/anyOf\/\d+\/type$/.test(error.schemaPath)
      ),
  );
  const issues = relevant.map((error) => toIssue(error, root));
  return issues.filter(
    (issue, index) =>
      !(
        relevant[index]!.keyword === 'anyOf' &&
        issues.some((other) => other !== issue && isWithin(other.path, issue.path))
      ),
  );
}

function isWithin(path: string, parent: string): boolean {
  return path === parent || parent === '' || path.startsWith(`${parent}.`) || path.startsWith(`${parent}[`);
}

const TYPE_NAMES: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  null: 'null',
});

function toIssue(error: ErrorObject, root: unknown): ValidationIssue {
  let path = pointerToPath(error.instancePath, root);
  const params = error.params as Record<string, unknown>;
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    path = joinIssuePath(path, params.missingProperty);
    message = 'is required';
  } else if (
    (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') &&
    typeof params.additionalProperty === 'string'
  ) {
    path = joinIssuePath(path, params.additionalProperty);
    message = 'is not an allowed property';
  } else if (error.keyword === 'unevaluatedProperties' && typeof params.unevaluatedProperty === 'string') {
    path = joinIssuePath(path, params.unevaluatedProperty);
    message = 'is not an allowed property';
  } else if (error.keyword === 'type' && (typeof params.type === 'string' || Array.isArray(params.type))) {
    // Ajv says "must be object,null"; say it as class-validator's messages do.
    message = `must be ${String(params.type)
      .split(',')
      .map((type) => TYPE_NAMES[type] ?? type)
      .join(' or ')}`;
  }
  return { path, rule: error.keyword, message };
}

/** `/items/2/qty` → `items[2].qty`, walking the value to tell array indexes from numeric keys. */
function pointerToPath(pointer: string, root: unknown): string {
  if (!pointer) return '';
  let path = '';
  let node = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(key)) {
      path = joinIssuePath(path, Number(key));
      node = node[Number(key)];
    } else {
      path = joinIssuePath(path, key);
      node = node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return path;
}
