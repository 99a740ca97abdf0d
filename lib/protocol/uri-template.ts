/**
 * A deliberately small RFC 6570 subset for MCP resource templates: parse a template once, then
 * match incoming `resources/read` URIs against it and expand it back into URIs.
 *
 * Matching never backtracks. The part of the template before any query/fragment expression is
 * compiled into a tiny NFA program and run as a Pike VM (all alive threads advance together, one
 * input character at a time), so matching costs O(uri length × program size) whatever the input.
 * The query part (`{?a,b}{&c}`) is parsed separately as `&`-separated pairs, so parameters may come
 * in any order, may be missing, and unknown ones are ignored.
 */

/** Longest template accepted by {@link UriTemplate.parse}, in UTF-16 code units. */
export const MAX_TEMPLATE_LENGTH = 1024;

/** Longest URI that {@link UriTemplate.match} looks at; longer URIs never match. */
export const MAX_URI_LENGTH = 64 * 1024;

const SUPPORTED_SHAPES =
  'Supported expressions: {var} (one path segment), {+var} (reserved, may contain "/"), ' +
  '{/var} (optional "/segment"), {/var*} (zero or more "/segments"), ' +
  '{?a,b} and {&c} (query parameters, at the end), {#var} (fragment, last).';

/** Thrown by {@link UriTemplate.parse} for templates outside the supported subset, and by {@link UriTemplate.expand} for unusable values. */
export class UriTemplateError extends Error {
  override readonly name = 'UriTemplateError';
}

/** Variables captured by {@link UriTemplate.match}: `{/var*}` yields `string[]`, everything else `string`. */
export type UriTemplateMatch = Record<string, string | string[]>;

type Operator = '' | '+' | '/' | '?' | '&' | '#';
type Component = 'path' | 'query' | 'fragment';

interface Expression {
  readonly operator: Operator;
  readonly names: readonly string[];
  readonly explode: boolean;
  /** The expression as written, braces included, for error messages. */
  readonly source: string;
  /** URI component the expression sits in, decided by the literal `?`/`#` before it. */
  readonly component: Component;
}

type Part =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'expression'; readonly expression: Expression };

// Instruction set of the matcher program.
const CHAR = 0; // a = char code to consume
const CLASS = 1; // a = stop mask; consumes one char that is not in the mask
const SPLIT = 2; // try a first, then b (a has priority)
const SAVE = 3; // a = capture slot, records the current position
const MATCH = 4;

// Stop characters as bits, so a character class is a mask over these four.
const STOP_SLASH = 1;
const STOP_QUESTION = 2;
const STOP_HASH = 4;
const STOP_AMP = 8;
const STOP_BITS = new Uint8Array(128);
STOP_BITS[0x2f] = STOP_SLASH;
STOP_BITS[0x3f] = STOP_QUESTION;
STOP_BITS[0x23] = STOP_HASH;
STOP_BITS[0x26] = STOP_AMP;

// Characters a value may not contain, per operator and URI component. `&` separates query
// parameters, so values written inside a query stop at it; `{var}` is one segment everywhere.
const STOP_MASKS: Record<Component, { simple: number; reserved: number }> = {
  path: { simple: STOP_SLASH | STOP_QUESTION | STOP_HASH, reserved: STOP_QUESTION | STOP_HASH },
  query: { simple: STOP_SLASH | STOP_QUESTION | STOP_HASH | STOP_AMP, reserved: STOP_HASH | STOP_AMP },
  fragment: { simple: STOP_SLASH | STOP_QUESTION | STOP_HASH, reserved: STOP_HASH },
};

const VARNAME = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;
const LONE_SURROGATE = /\p{Cs}/u;
const HEX = /^[0-9A-Fa-f]{2}$/;

interface Program {
  readonly op: Int32Array;
  readonly a: Int32Array;
  readonly b: Int32Array;
  /** Characters that may follow the matched head (start of the query/fragment tail). */
  readonly tailStarts: string;
}

/**
 * A parsed URI template restricted to the shapes MCP resource templates need.
 *
 * @example
 * const t = UriTemplate.parse('test://template/{id}/data');
 * t.match('test://template/123/data'); // { id: '123' }
 * t.expand({ id: 'a b' });             // 'test://template/a%20b/data'
 */
export class UriTemplate {
  /** The template text exactly as given to {@link UriTemplate.parse}. */
  readonly template: string;
  /** Variable names in the order they appear in the template. */
  readonly variables: readonly string[];
  /** Literal text before the first expression; every matching URI starts with it. */
  readonly literalPrefix: string;

  readonly #parts: readonly Part[];
  /** Expressions in the head (everything before the query/fragment tail), in capture-slot order. */
  readonly #head: readonly Expression[];
  readonly #queryNames: ReadonlySet<string>;
  readonly #fragmentName: string | undefined;
  /** "?" when the template opens its query with {?…}, "&" when literal text already did. */
  readonly #queryOpener: string;
  readonly #program: Program;

  private constructor(template: string, parts: readonly Part[]) {
    this.template = template;
    this.#parts = parts;
    const expressions = parts.flatMap((p) => (p.kind === 'expression' ? [p.expression] : []));
    this.variables = Object.freeze(expressions.flatMap((e) => e.names));
    this.literalPrefix = parts[0]?.kind === 'literal' ? parts[0].text : '';
    const tailIndex = parts.findIndex((p) => p.kind === 'expression' && isTailOperator(p.expression.operator));
    const headParts = tailIndex === -1 ? parts : parts.slice(0, tailIndex);
    const tail = tailIndex === -1 ? [] : expressions.filter((e) => isTailOperator(e.operator));
    this.#head = expressions.filter((e) => !isTailOperator(e.operator));
    this.#queryNames = new Set(tail.filter((e) => e.operator !== '#').flatMap((e) => e.names));
    this.#fragmentName = tail.find((e) => e.operator === '#')?.names[0];
    this.#queryOpener = tail[0]?.operator === '?' ? '?' : '&';
    let tailStarts = '';
    if (tail[0]) tailStarts += tail[0].operator;
    if (this.#fragmentName !== undefined && tail[0]?.operator !== '#') tailStarts += '#';
    this.#program = compile(headParts, tailStarts);
  }

  /**
   * Parses and validates a template.
   *
   * @throws UriTemplateError naming the offending expression and listing the supported shapes when
   *   the template is empty, longer than {@link MAX_TEMPLATE_LENGTH}, has unbalanced braces, uses an
   *   unsupported operator or modifier, repeats a variable, or places expressions ambiguously.
   */
  static parse(template: string): UriTemplate {
    if (typeof template !== 'string') {
      throw new UriTemplateError(
        `URI template must be a string, got ${typeof template}. Pass the template text, e.g. "file:///{+path}".`,
      );
    }
    if (template.length === 0) {
      throw new UriTemplateError('URI template is empty. Pass the template text, e.g. "file:///{+path}".');
    }
    if (template.length > MAX_TEMPLATE_LENGTH) {
      throw new UriTemplateError(
        `URI template ${preview(template)} is ${template.length} characters long; the limit is ${MAX_TEMPLATE_LENGTH}. Shorten the template.`,
      );
    }
    return new UriTemplate(template, parseParts(template));
  }

  /**
   * Matches a URI against the template.
   *
   * Values are percent-decoded exactly once. Returns `null` when the URI does not match, is longer
   * than {@link MAX_URI_LENGTH}, contains invalid percent-encoding or encodes something that is not
   * UTF-8, or repeats a query parameter the template names. Optional variables (`{/var}`, query
   * parameters, `{#var}`) that are absent from the URI are absent from the result; `{/var*}` is
   * always an array (empty when there are no segments).
   */
  match(uri: string): UriTemplateMatch | null {
    if (typeof uri !== 'string' || uri.length > MAX_URI_LENGTH) return null;
    if (!uri.startsWith(this.literalPrefix)) return null;
    // JS strings can carry unpaired surrogates, which have no UTF-8 form.
    if (LONE_SURROGATE.test(uri)) return null;
    const run = runProgram(this.#program, uri, this.#head.length * 2);
    if (run === null) return null;

    const result: UriTemplateMatch = {};
    for (let k = 0; k < this.#head.length; k++) {
      const expression = this.#head[k]!;
      const name = expression.names[0]!;
      const start = run.captures[2 * k]!;
      const end = run.captures[2 * k + 1]!;
      if (expression.operator === '/' && expression.explode) {
        const segments = start === end ? [] : uri.slice(start + 1, end).split('/');
        const decoded: string[] = [];
        for (const segment of segments) {
          const value = decodeOnce(segment);
          if (value === null) return null;
          decoded.push(value);
        }
        result[name] = decoded;
      } else if (start !== -1) {
        const value = decodeOnce(uri.slice(start, end));
        if (value === null) return null;
        result[name] = value;
      }
    }
    return this.#matchTail(uri, run.end, result);
  }

  /**
   * Expands the template with the given values, percent-encoding them per RFC 6570: `{var}`,
   * `{/var}` and query values encode everything except unreserved characters; `{+var}` and
   * `{#var}` keep reserved characters and existing `%XX` triplets.
   *
   * Values may be strings, numbers, booleans, bigints or arrays of those (arrays join with `,`,
   * except `{/var*}` which writes one segment per item). `{var}` and `{+var}` are required; the
   * other shapes are omitted when their value is `undefined` or `null`.
   *
   * @throws UriTemplateError when a required value is missing or empty, a path segment is empty,
   *   a value has an unsupported type, or a string is not well-formed Unicode.
   */
  expand(values: Record<string, unknown>): string {
    let out = '';
    // The query tail is written as one query: the first pair gets "?" when the template opens the
    // query with {?…}, even if that expression itself had no values (RFC 6570 would emit a bare
    // "&" there, which no query parser, including match(), reads as the start of a query).
    const query = { separator: this.#queryOpener };
    for (const part of this.#parts) {
      out += part.kind === 'literal' ? part.text : this.#expandExpression(part.expression, values, query);
    }
    return out;
  }

  /**
   * Whether some URI that starts with `prefix` could match the template: the overlap test between
   * a template and a repository's URI prefix. Conservative where the prefix reaches into a query
   * or fragment the template reads (that counts as an overlap).
   */
  mayMatchUnder(prefix: string): boolean {
    if (!prefix.startsWith(this.literalPrefix) && !this.literalPrefix.startsWith(prefix)) return false;
    return survives(this.#program, prefix);
  }

  /** Returns the template text. */
  toString(): string {
    return this.template;
  }

  #matchTail(uri: string, headEnd: number, result: UriTemplateMatch): UriTemplateMatch | null {
    let pos = headEnd;
    const length = uri.length;
    if (pos < length && uri[pos] !== '#') {
      // The head only stops at a tail-start character, so this is the `?` or `&` opening the query.
      const hash = uri.indexOf('#', pos);
      const queryEnd = hash === -1 ? length : hash;
      const seen = new Set<string>();
      for (const pair of uri.slice(pos + 1, queryEnd).split('&')) {
        if (pair === '') continue;
        const eq = pair.indexOf('=');
        const name = decodeOnce(eq === -1 ? pair : pair.slice(0, eq));
        // Parameters the template does not name are ignored, malformed or not.
        if (name === null || !this.#queryNames.has(name)) continue;
        // A repeated parameter has no single value; refusing it avoids first-vs-last disagreements
        // with whatever else parses the same URI.
        if (seen.has(name)) return null;
        seen.add(name);
        const value = decodeOnce(eq === -1 ? '' : pair.slice(eq + 1));
        if (value === null) return null;
        result[name] = value;
      }
      pos = queryEnd;
    }
    if (pos < length) {
      if (this.#fragmentName === undefined) return null;
      const value = decodeOnce(uri.slice(pos + 1));
      if (value === null) return null;
      result[this.#fragmentName] = value;
    }
    return result;
  }

  #expandExpression(expression: Expression, values: Record<string, unknown>, query: { separator: string }): string {
    const { operator, names, explode, source } = expression;
    const read = (name: string): string[] | undefined =>
      scalarList(Object.hasOwn(values, name) ? values[name] : undefined, name, source);

    if (operator === '?' || operator === '&') {
      let out = '';
      for (const name of names) {
        const items = read(name);
        if (items === undefined) continue;
        out += `${query.separator}${name}=${items.map((item) => encode(item, false, name, source)).join(',')}`;
        query.separator = '&';
      }
      return out;
    }

    const name = names[0]!;
    const items = read(name);
    if (operator === '' || operator === '+') {
      if (items === undefined || items.length === 0 || items.every((item) => item === '')) {
        throw new UriTemplateError(
          `Cannot expand ${source} in URI template "${this.template}": value "${name}" is missing or empty. Pass a non-empty string, number or boolean for "${name}".`,
        );
      }
      return items.map((item) => encode(item, operator === '+', name, source)).join(',');
    }
    if (items === undefined || items.length === 0) return '';
    if (operator === '#') {
      return '#' + items.map((item) => encode(item, true, name, source)).join(',');
    }
    // operator '/': empty segments could never be matched back, so refuse them here.
    if (items.some((item) => item === '')) {
      throw new UriTemplateError(
        `Cannot expand ${source} in URI template "${this.template}": "${name}" contains an empty path segment. Remove empty strings from "${name}".`,
      );
    }
    const encoded = items.map((item) => encode(item, false, name, source));
    return explode ? encoded.map((segment) => '/' + segment).join('') : '/' + encoded.join(',');
  }
}

/** The literal text before the first expression of `template` (the whole template when it has none). Lets a registry index templates by prefix. */
export function literalPrefix(template: string): string {
  return UriTemplate.parse(template).literalPrefix;
}

function isTailOperator(operator: Operator): boolean {
  return operator === '?' || operator === '&' || operator === '#';
}

function fail(template: string, problem: string): never {
  throw new UriTemplateError(`Invalid URI template "${template}": ${problem} ${SUPPORTED_SHAPES}`);
}

function parseParts(template: string): Part[] {
  const parts: Part[] = [];
  const seen = new Set<string>();
  let literal = '';
  let component: Component = 'path';
  let i = 0;
  while (i < template.length) {
    const ch = template[i]!;
    const code = template.charCodeAt(i);
    if (ch === '{') {
      const close = template.indexOf('}', i + 1);
      const nested = template.indexOf('{', i + 1);
      if (close === -1 || (nested !== -1 && nested < close)) {
        fail(
          template,
          `the "{" at position ${i} is never closed. Close each expression with "}" and do not nest braces.`,
        );
      }
      if (literal !== '') parts.push({ kind: 'literal', text: literal });
      literal = '';
      const expression = parseExpression(template, template.slice(i, close + 1), component, seen);
      parts.push({ kind: 'expression', expression });
      i = close + 1;
      continue;
    }
    if (ch === '}') {
      fail(template, `the "}" at position ${i} has no matching "{". Remove it or percent-encode it as %7D.`);
    }
    if (code <= 0x20 || code === 0x7f) {
      fail(
        template,
        `literal text contains a space or control character at position ${i}. Percent-encode it (a space is %20).`,
      );
    }
    if (ch === '%' && !HEX.test(template.slice(i + 1, i + 3))) {
      fail(template, `the "%" at position ${i} does not start a %XX escape. Write a literal "%" as %25.`);
    }
    if (ch === '?' && component === 'path') component = 'query';
    if (ch === '#') component = 'fragment';
    literal += ch;
    i++;
  }
  if (literal !== '') parts.push({ kind: 'literal', text: literal });
  checkStructure(template, parts);
  return parts;
}

function parseExpression(template: string, source: string, component: Component, seen: Set<string>): Expression {
  const body = source.slice(1, -1);
  if (body === '') fail(template, `expression ${source} is empty. Put a variable name inside, e.g. {id}.`);
  const first = body[0]!;
  let operator: Operator = '';
  if (first === '+' || first === '/' || first === '?' || first === '&' || first === '#') {
    operator = first;
  } else if (first === '.' || first === ';') {
    fail(
      template,
      `expression ${source} uses the "${first}" operator, which is not supported. Write the "${first}" as literal text before a {var} instead.`,
    );
  } else if ('=,!@|'.includes(first)) {
    fail(
      template,
      `expression ${source} starts with "${first}", an operator RFC 6570 reserves for future use. Remove it.`,
    );
  }
  const specs = body.slice(operator === '' ? 0 : 1).split(',');
  if ((operator === '' || operator === '+' || operator === '/' || operator === '#') && specs.length > 1) {
    fail(
      template,
      `expression ${source} lists several variables; only {?a,b} and {&a,b} may. Use one variable per expression with literal text between them, e.g. {a}-{b}.`,
    );
  }
  const names: string[] = [];
  let explode = false;
  for (const spec of specs) {
    let name = spec;
    if (name.endsWith('*')) {
      if (operator !== '/') {
        fail(
          template,
          `expression ${source} uses the "*" explode modifier, which is only supported as {/var*}. Remove the "*".`,
        );
      }
      explode = true;
      name = name.slice(0, -1);
    }
    if (name.includes(':')) {
      fail(
        template,
        `expression ${source} uses a prefix modifier (":N"), which is not supported. Remove ":N" and validate the length in the handler.`,
      );
    }
    if (name === '')
      fail(template, `expression ${source} has an empty variable name. Name every variable, e.g. {?a,b}.`);
    if (!VARNAME.test(name)) {
      fail(
        template,
        `expression ${source} has an invalid variable name "${name}". Use letters, digits, "_" and inner "." only.`,
      );
    }
    if (name === '__proto__')
      fail(template, `expression ${source} uses the reserved variable name "__proto__". Rename it.`);
    if (seen.has(name)) {
      fail(
        template,
        `variable "${name}" appears more than once (again in ${source}). Give each variable a distinct name.`,
      );
    }
    seen.add(name);
    names.push(name);
  }
  return { operator, names, explode, source, component };
}

/** Rejects placements that are ambiguous or that the query/fragment tail model cannot express. */
function checkStructure(template: string, parts: readonly Part[]): void {
  let tailStarted = false;
  let sawQueryTail = false;
  let sawFragment = false;
  let previous: Part | undefined;
  for (const part of parts) {
    if (part.kind === 'literal') {
      if (tailStarted) {
        fail(
          template,
          `literal text "${part.text}" follows a query or fragment expression. Put {?…}, {&…} and {#…} at the very end of the template.`,
        );
      }
      previous = part;
      continue;
    }
    const e = part.expression;
    if (sawFragment)
      fail(template, `expression ${e.source} follows the fragment expression. The {#var} expression must be last.`);
    if (isTailOperator(e.operator) && e.component === 'fragment') {
      fail(
        template,
        `expression ${e.source} comes after a literal "#", so it would sit inside the fragment. Remove the literal "#" or move the expression before it.`,
      );
    }
    if (e.operator === '?') {
      if (sawQueryTail)
        fail(template, `expression ${e.source} opens a second query. Use {&…} to add parameters after {?…}.`);
      if (e.component !== 'path') {
        fail(
          template,
          `expression ${e.source} opens a query, but the literal text before it already contains "?". Use {&…} to continue a query the literal text started.`,
        );
      }
      sawQueryTail = true;
      tailStarted = true;
    } else if (e.operator === '&') {
      if (!sawQueryTail && e.component !== 'query') {
        fail(
          template,
          `expression ${e.source} continues a query that was never started. Put {?…} or a literal "?" before it.`,
        );
      }
      sawQueryTail = true;
      tailStarted = true;
    } else if (e.operator === '#') {
      sawFragment = true;
      tailStarted = true;
    } else if (tailStarted) {
      fail(
        template,
        `expression ${e.source} follows a query or fragment expression. Put {?…}, {&…} and {#…} at the very end of the template.`,
      );
    } else if (previous?.kind === 'expression') {
      const p = previous.expression;
      const ambiguous =
        e.operator === '' || e.operator === '+' || p.operator === '+' || (p.operator === '/' && p.explode);
      if (ambiguous) {
        fail(
          template,
          `expressions ${p.source} and ${e.source} are adjacent, so where one ends and the next begins is ambiguous. Put literal text between them, e.g. ${p.source}-${e.source}.`,
        );
      }
    }
    previous = part;
  }
}

function compile(headParts: readonly Part[], tailStarts: string): Program {
  const op: number[] = [];
  const a: number[] = [];
  const b: number[] = [];
  const emit = (o: number, x = 0, y = 0): number => {
    op.push(o);
    a.push(x);
    b.push(y);
    return op.length - 1;
  };
  let slot = 0;
  for (const part of headParts) {
    if (part.kind === 'literal') {
      for (let i = 0; i < part.text.length; i++) emit(CHAR, part.text.charCodeAt(i));
      continue;
    }
    const { operator, explode, component } = part.expression;
    const start = 2 * slot;
    const end = start + 1;
    slot++;
    if (operator === '' || operator === '+') {
      // One or more value characters. `{var}` prefers to stop early (the value ends at the first
      // place the rest can match), `{+var}` prefers to run on (`{+dir}/{file}` keeps the last segment for file).
      emit(SAVE, start);
      const loop = emit(CLASS, operator === '' ? STOP_MASKS[component].simple : STOP_MASKS[component].reserved);
      if (operator === '') emit(SPLIT, loop + 2, loop);
      else emit(SPLIT, loop, loop + 2);
      emit(SAVE, end);
    } else if (!explode) {
      // Optional "/segment"; the segment itself is non-empty and captured without its slash.
      const split = emit(SPLIT);
      a[split] = split + 1;
      emit(CHAR, 0x2f);
      emit(SAVE, start);
      const loop = emit(CLASS, STOP_MASKS[component].simple);
      emit(SPLIT, loop, loop + 2);
      emit(SAVE, end);
      b[split] = op.length;
    } else {
      // ("/" segment)* captured as one span and split on "/" afterwards (segments cannot contain "/").
      emit(SAVE, start);
      const again = emit(SPLIT);
      a[again] = again + 1;
      emit(CHAR, 0x2f);
      const loop = emit(CLASS, STOP_MASKS[component].simple);
      emit(SPLIT, loop, again);
      b[again] = emit(SAVE, end);
    }
  }
  emit(MATCH);
  return { op: Int32Array.from(op), a: Int32Array.from(a), b: Int32Array.from(b), tailStarts };
}

/** One recorded capture; threads share history, so a SAVE costs one small allocation, not an array copy. */
interface Capture {
  readonly slot: number;
  readonly pos: number;
  readonly previous: Capture | null;
}

interface ThreadList {
  n: number;
  readonly pcs: Int32Array;
  readonly caps: (Capture | null)[];
}

/** What {@link meterMatches} counted. */
export interface UriMatchWork {
  /** Input positions the VM advanced over. */
  positions: number;
  /** Thread steps summed over those positions (each at most the program size). */
  steps: number;
  /** Instructions in the largest program run. */
  programSize: number;
}

let meter: UriMatchWork | null = null;

/**
 * Runs `fn` and returns the work the matcher did inside it. It lets the spec prove matching is
 * linear by counting steps rather than by timing it, which a loaded machine would make flaky.
 * @internal Not exported from the package.
 */
export function meterMatches(fn: () => void): UriMatchWork {
  const work: UriMatchWork = { positions: 0, steps: 0, programSize: 0 };
  meter = work;
  try {
    fn();
  } finally {
    meter = null;
  }
  return work;
}

/**
 * Runs the program as a Pike VM: every live thread advances in lock-step over the input, threads
 * are deduplicated per program counter, and thread order encodes priority. Each input character
 * therefore costs at most O(program size) and nothing is ever re-scanned.
 */
function runProgram(program: Program, input: string, slots: number): { captures: Int32Array; end: number } | null {
  const { op, a, b, tailStarts } = program;
  const size = op.length;
  if (meter !== null) meter.programSize = Math.max(meter.programSize, size);
  const marks = new Int32Array(size).fill(-1);
  let generation = 0;
  let current: ThreadList = { n: 0, pcs: new Int32Array(size), caps: new Array<Capture | null>(size).fill(null) };
  let next: ThreadList = { n: 0, pcs: new Int32Array(size), caps: new Array<Capture | null>(size).fill(null) };

  // Follows SPLIT/SAVE (which consume nothing) and queues the consuming instruction reached, in
  // priority order. Depth is bounded by the program size: no SPLIT/SAVE chain revisits a pc.
  const add = (list: ThreadList, pc: number, caps: Capture | null, pos: number): void => {
    if (marks[pc] === generation) return;
    marks[pc] = generation;
    const instruction = op[pc];
    if (instruction === SPLIT) {
      add(list, a[pc]!, caps, pos);
      add(list, b[pc]!, caps, pos);
    } else if (instruction === SAVE) {
      add(list, pc + 1, { slot: a[pc]!, pos, previous: caps }, pos);
    } else {
      list.pcs[list.n] = pc;
      list.caps[list.n] = caps;
      list.n++;
    }
  };

  add(current, 0, null, 0);
  let matched: Capture | null = null;
  let matchEnd = -1;
  const length = input.length;
  for (let pos = 0; current.n > 0; pos++) {
    const code = pos < length ? input.charCodeAt(pos) : -1;
    if (meter !== null) {
      meter.positions++;
      meter.steps += current.n;
    }
    generation++;
    next.n = 0;
    for (let i = 0; i < current.n; i++) {
      const pc = current.pcs[i]!;
      const instruction = op[pc];
      if (instruction === CHAR) {
        if (code === a[pc]) add(next, pc + 1, current.caps[i]!, pos + 1);
      } else if (instruction === CLASS) {
        if (code !== -1 && (code >= 128 || (STOP_BITS[code]! & a[pc]!) === 0))
          add(next, pc + 1, current.caps[i]!, pos + 1);
      } else if (code === -1 || tailStarts.includes(input[pos]!)) {
        // MATCH: lower-priority threads are dropped; higher-priority ones already queued may still win later.
        matched = current.caps[i]!;
        matchEnd = pos;
        break;
      }
    }
    if (code === -1) break;
    const swap = current;
    current = next;
    next = swap;
  }
  if (matchEnd === -1) return null;
  const captures = new Int32Array(slots).fill(-1);
  // The newest record for a slot is the one on the winning path; older ones are never kept
  // because no SAVE sits inside a loop.
  for (let c = matched; c !== null; c = c.previous) {
    if (captures[c.slot] === -1) captures[c.slot] = c.pos;
  }
  return { captures, end: matchEnd };
}

/** Whether the head program still has a live thread (or a match) once `input` is consumed. */
function survives(program: Program, input: string): boolean {
  const { op, a, b, tailStarts } = program;
  // The set holds every pc reached, the epsilon ones (SPLIT, SAVE) too, so no closure is walked twice.
  const add = (set: Set<number>, pc: number): void => {
    if (set.has(pc)) return;
    set.add(pc);
    const instruction = op[pc];
    if (instruction === SPLIT) {
      add(set, a[pc]!);
      add(set, b[pc]!);
    } else if (instruction === SAVE) add(set, pc + 1);
  };
  let current = new Set<number>();
  add(current, 0);
  for (let pos = 0; pos < input.length; pos++) {
    const code = input.charCodeAt(pos);
    const next = new Set<number>();
    for (const pc of current) {
      const instruction = op[pc];
      if (instruction === CHAR) {
        if (code === a[pc]) add(next, pc + 1);
      } else if (instruction === CLASS) {
        if (code >= 128 || (STOP_BITS[code]! & a[pc]!) === 0) add(next, pc + 1);
      } else if (instruction === MATCH && tailStarts.includes(input[pos]!)) {
        // The head matched; the rest of the prefix may sit in the query or fragment it reads.
        return true;
      }
    }
    if (next.size === 0) return false;
    current = next;
  }
  return current.size > 0;
}

function decodeOnce(raw: string): string | null {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

function scalarList(value: unknown, name: string, source: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) => {
    if (typeof item === 'string') return item;
    if (typeof item === 'number' || typeof item === 'boolean' || typeof item === 'bigint') return String(item);
    throw new UriTemplateError(
      `Cannot expand ${source}: value "${name}" is ${item === null ? 'null' : typeof item}${Array.isArray(value) ? ' inside an array' : ''}. Pass a string, number, boolean or an array of those.`,
    );
  });
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function encode(value: string, allowReserved: boolean, name: string, source: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    const code = value.charCodeAt(i);
    if (code < 0x80) {
      if (UNRESERVED.test(ch) || (allowReserved && RESERVED.test(ch))) out += ch;
      else if (allowReserved && ch === '%' && HEX.test(value.slice(i + 1, i + 3))) out += ch;
      else out += '%' + code.toString(16).toUpperCase().padStart(2, '0');
      continue;
    }
    const point = value.codePointAt(i)!;
    if (point >= 0xd800 && point <= 0xdfff) {
      throw new UriTemplateError(
        `Cannot expand ${source}: value "${name}" contains an unpaired surrogate at index ${i}. Pass well-formed Unicode text.`,
      );
    }
    const char = String.fromCodePoint(point);
    out += encodeURIComponent(char);
    i += char.length - 1;
  }
  return out;
}

function preview(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}
