/**
 * A JSON Schema 2020-12 document or subschema, as a plain JSON object.
 *
 * @publicApi
 */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * The JSON Schema primitive type names (`type` keyword values).
 *
 * @publicApi
 */
export type JsonTypeName = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

/**
 * One reason why a value was refused, in a form that can be shown to a model.
 *
 * @publicApi
 */
export interface ValidationIssue {
  /** Where the problem is: `''` for the whole value, else `title`, `address.zip`, `items[2].qty`. */
  path: string;
  /** The failed rule: a class-validator constraint key (`isString`) or a JSON Schema keyword (`minLength`). */
  rule: string;
  /** What is wrong, without the submitted value. */
  message: string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const MAX_KEY_LENGTH = 64;

/**
 * Appends one segment to an issue path: `a` + `b` → `a.b`, `a` + 2 → `a[2]`, odd keys → `a["x y"]`.
 * Keys come from the caller, so overlong ones are cut to keep messages bounded.
 *
 * @internal
 */
export function joinIssuePath(base: string, segment: string | number): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  const key = segment.length > MAX_KEY_LENGTH ? `${segment.slice(0, MAX_KEY_LENGTH)}…` : segment;
  if (IDENTIFIER.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}
