import { SchemaGenerationError } from './schema-generation.error.js';

// RegExp → JSON Schema pattern: `@Matches()` expressions rewritten without flags.

export function patternOf(pattern: unknown, modifiers: unknown, dto: string, property: string): string {
  let regexp: RegExp;
  try {
    regexp =
      pattern instanceof RegExp
        ? pattern
        : new RegExp(String(pattern), typeof modifiers === 'string' ? modifiers : undefined);
  } catch (error) {
    throw SchemaGenerationError.unsupported(
      dto,
      property,
      `@Matches() has an invalid regular expression (${(error as Error).message})`,
      'Fix the pattern.',
    );
  }
  try {
    return regExpToPattern(regexp);
  } catch (error) {
    throw SchemaGenerationError.unsupported(
      dto,
      property,
      `@Matches(${String(regexp)}) cannot be written as a JSON Schema pattern: ${(error as Error).message}`,
      'Rewrite the expression without that construct, or state the pattern yourself with @SchemaProperty({ schema: { pattern } }).',
    );
  }
}

/**
 * Rewrites a JS RegExp as an ECMA-262 pattern string that means the same thing without flags
 * (JSON Schema patterns are unanchored, flag-less and Unicode-aware). `g`/`d` change nothing for
 * a yes/no match; `y` anchors at the start; `s` turns `.` into `[\s\S]`; `i` is expanded for ASCII
 * letters; `m` is accepted only when the pattern has no `^`/`$`. Anything else throws with the
 * reason.
 *
 * @internal
 */
export function regExpToPattern(regexp: RegExp): string {
  const flags = regexp.flags;
  const unicode = flags.includes('u') || flags.includes('v');
  const icase = flags.includes('i');
  if (icase && flags.includes('v')) throw new Error("the 'i' flag cannot be expanded for 'v'-mode classes");
  let source = rewritePattern(regexp.source, {
    unicode,
    icase,
    dotAll: flags.includes('s'),
    multiline: flags.includes('m'),
  });
  if (flags.includes('y')) source = `^(?:${source})`;
  try {
    new RegExp(source, 'u');
  } catch (error) {
    throw new Error(`it is not valid in Unicode mode, which JSON Schema patterns use (${(error as Error).message})`);
  }
  return source;
}

interface RewriteOptions {
  unicode: boolean;
  icase: boolean;
  dotAll: boolean;
  multiline: boolean;
}

interface Escape {
  /** Replacement text, valid in Unicode mode. */
  text: string;
  end: number;
  /** The single character it stands for, when it is a character escape. */
  codePoint?: number;
  /** An identity escape (`\.`): the character is meant literally and may be re-escaped. */
  identity?: boolean;
  kind: 'char' | 'class' | 'assertion' | 'backref' | 'property';
}

const LOWER_A = 0x61;
const LOWER_Z = 0x7a;
const UPPER_A = 0x41;
const UPPER_Z = 0x5a;
const SYNTAX = '^$\\.*+?()[]{}|/';
const QUANTIFIER = /^\{\d+(,\d*)?\}/;

function rewritePattern(source: string, options: RewriteOptions): string {
  // Unicode-mode sources already mean the same under Ajv's 'u'; only flags need rewriting.
  if (options.unicode && !options.icase && !options.dotAll && !options.multiline) return source;
  const chars = Array.from(source);
  let out = '';
  let i = 0;
  while (i < chars.length) {
    const c = chars[i]!;
    if (c === '\\') {
      const escape = readEscape(chars, i, options, false);
      out += emitOutsideClass(escape, options);
      i = escape.end;
    } else if (c === '[') {
      const end = findClassEnd(chars, i);
      out += options.unicode && !options.icase ? chars.slice(i, end).join('') : rebuildClass(chars, i, end, options);
      i = end;
    } else if (
      c === '(' &&
      chars[i + 1] === '?' &&
      chars[i + 2] === '<' &&
      chars[i + 3] !== '=' &&
      chars[i + 3] !== '!'
    ) {
      const close = chars.indexOf('>', i);
      const end = close < 0 ? chars.length : close + 1;
      out += chars.slice(i, end).join(''); // a group name is not matched text
      i = end;
    } else if (c === '{' && !options.unicode) {
      const quantifier = QUANTIFIER.exec(chars.slice(i, i + 24).join(''))?.[0];
      out += quantifier ?? '\\{'; // without 'u' a brace that is no quantifier is a literal
      i += quantifier ? Array.from(quantifier).length : 1;
    } else {
      if (c === '.' && options.dotAll) out += '[\\s\\S]';
      else if ((c === '^' || c === '$') && options.multiline) {
        throw new Error("the 'm' flag changes what ^ and $ match, which a flag-less pattern cannot express");
      } else if ((c === '}' || c === ']') && !options.unicode) out += `\\${c}`;
      else out += options.icase ? foldChar(c.codePointAt(0)!, c) : c;
      i += 1;
    }
  }
  return out;
}

function readEscape(chars: readonly string[], start: number, options: RewriteOptions, inClass: boolean): Escape {
  const c = chars[start + 1];
  const hex = (from: number, length: number) => {
    const digits = chars.slice(from, from + length).join('');
    return digits.length === length && /^[0-9A-Fa-f]+$/.test(digits) ? Number.parseInt(digits, 16) : undefined;
  };
  const text = (end: number) => chars.slice(start, end).join('');
  if (c === undefined) return { text: '\\', end: start + 1, kind: 'char' };
  if ('dDwWsS'.includes(c)) return { text: text(start + 2), end: start + 2, kind: 'class' };
  if (c === 'b' && inClass) return { text: '\\b', end: start + 2, codePoint: 8, kind: 'char' };
  if (c === 'b' || c === 'B') return { text: text(start + 2), end: start + 2, kind: 'assertion' };
  const controls: Record<string, number> = { f: 12, n: 10, r: 13, t: 9, v: 11 };
  if (controls[c] !== undefined) return { text: text(start + 2), end: start + 2, codePoint: controls[c], kind: 'char' };
  if (c === '0' && !/[0-9]/.test(chars[start + 2] ?? ''))
    return { text: '\\0', end: start + 2, codePoint: 0, kind: 'char' };
  if (inClass && !options.unicode && /[0-7]/.test(c)) {
    // Legacy octal escape, only meaningful without 'u'.
    let end = start + 1;
    while (end < start + 4 && /[0-7]/.test(chars[end] ?? '')) end += 1;
    const codePoint = Number.parseInt(chars.slice(start + 1, end).join(''), 8);
    return { text: `\\u${codePoint.toString(16).padStart(4, '0')}`, end, codePoint, kind: 'char' };
  }
  if (c === 'x') {
    const value = hex(start + 2, 2);
    if (value !== undefined) return { text: text(start + 4), end: start + 4, codePoint: value, kind: 'char' };
  }
  if (c === 'u') {
    if (chars[start + 2] === '{' && options.unicode) {
      const close = chars.indexOf('}', start);
      const value = close > 0 ? Number.parseInt(chars.slice(start + 3, close).join(''), 16) : Number.NaN;
      if (!Number.isNaN(value)) return { text: text(close + 1), end: close + 1, codePoint: value, kind: 'char' };
    }
    const value = hex(start + 2, 4);
    if (value !== undefined) return { text: text(start + 6), end: start + 6, codePoint: value, kind: 'char' };
  }
  if (c === 'c' && /[A-Za-z]/.test(chars[start + 2] ?? '')) {
    return { text: text(start + 3), end: start + 3, codePoint: chars[start + 2]!.charCodeAt(0) % 32, kind: 'char' };
  }
  if (c === 'p' || c === 'P') {
    if (!options.unicode) {
      throw new Error(`"\\${c}" means the letter "${c}" without the 'u' flag but a Unicode property escape with it`);
    }
    const close = chars.indexOf('}', start);
    const end = close < 0 ? start + 2 : close + 1;
    return { text: text(end), end, kind: 'property' };
  }
  if (c === 'k' && chars[start + 2] === '<') {
    const close = chars.indexOf('>', start);
    const end = close < 0 ? start + 2 : close + 1;
    return { text: text(end), end, kind: 'backref' };
  }
  if (/[1-9]/.test(c) && !inClass) {
    let end = start + 2;
    while (/[0-9]/.test(chars[end] ?? '')) end += 1;
    return { text: text(end), end, kind: 'backref' };
  }
  // An identity escape such as \. or \/; without 'u' also \- or \a ("a"), which 'u' rejects.
  const literal = options.unicode || SYNTAX.includes(c) ? text(start + 2) : c;
  return { text: literal, end: start + 2, codePoint: c.codePointAt(0)!, identity: true, kind: 'char' };
}

function emitOutsideClass(escape: Escape, options: RewriteOptions): string {
  if (!options.icase) return escape.text;
  if (escape.kind === 'backref') throw new Error("a backreference under the 'i' flag matches case-insensitively");
  if (escape.kind === 'property') throw new Error("a Unicode property escape under the 'i' flag changes meaning");
  if (escape.kind === 'char' && escape.codePoint !== undefined && caseVariant(escape.codePoint) !== undefined) {
    return foldChar(escape.codePoint, escape.text);
  }
  return escape.text;
}

/** `a` → `[aA]`; other characters keep their text. */
function foldChar(codePoint: number, text: string): string {
  const variant = caseVariant(codePoint);
  if (variant === undefined) return text;
  return `[${String.fromCodePoint(codePoint)}${String.fromCodePoint(variant)}]`;
}

/** The other case of an ASCII letter; throws for non-ASCII letters, whose JS folding has no exact flag-less form. */
function caseVariant(codePoint: number): number | undefined {
  if (codePoint >= LOWER_A && codePoint <= LOWER_Z) return codePoint - 32;
  if (codePoint >= UPPER_A && codePoint <= UPPER_Z) return codePoint + 32;
  if (codePoint >= 0x80 && isCased(codePoint)) {
    throw new Error(`the 'i' flag is only expanded for ASCII letters, not "${String.fromCodePoint(codePoint)}"`);
  }
  return undefined;
}

function isCased(codePoint: number): boolean {
  const ch = String.fromCodePoint(codePoint);
  return ch.toLowerCase() !== ch || ch.toUpperCase() !== ch;
}

function findClassEnd(chars: readonly string[], start: number): number {
  let i = start + 1;
  if (chars[i] === '^') i += 1;
  while (i < chars.length && chars[i] !== ']') i += chars[i] === '\\' ? 2 : 1;
  return Math.min(i + 1, chars.length);
}

interface ClassAtom {
  text: string;
  codePoint?: number;
  /** An unescaped `-`, the only one that can form a range. */
  rangeDash?: boolean;
}

/**
 * Re-emits a character class so it is valid in Unicode mode (escaping literal `-`, `[`, `]`, `^`)
 * and, under `i`, adds the other case of every ASCII letter it covers.
 */
function rebuildClass(chars: readonly string[], start: number, end: number, options: RewriteOptions): string {
  let i = start + 1;
  const negated = chars[i] === '^';
  if (negated) i += 1;
  const atoms: ClassAtom[] = [];
  const last = end - 1; // the closing ]
  while (i < last) {
    if (chars[i] === '\\') {
      const escape = readEscape(chars, i, options, true);
      if (escape.kind === 'property' && options.icase) {
        throw new Error("a Unicode property escape under the 'i' flag changes meaning");
      }
      const text = escape.identity ? classLiteral(String.fromCodePoint(escape.codePoint!)) : escape.text;
      atoms.push({ text, codePoint: escape.codePoint });
      i = escape.end;
    } else {
      const ch = chars[i]!;
      atoms.push({ text: classLiteral(ch), codePoint: ch.codePointAt(0)!, rangeDash: ch === '-' });
      i += 1;
    }
  }
  const parts: string[] = [];
  const extra: string[] = [];
  for (let k = 0; k < atoms.length; k++) {
    const atom = atoms[k]!;
    const dash = atoms[k + 1];
    const next = atoms[k + 2];
    if (atom.codePoint !== undefined && dash?.rangeDash && next?.codePoint !== undefined) {
      parts.push(`${atom.text}-${next.text}`);
      if (options.icase) extra.push(...foldRange(atom.codePoint, next.codePoint));
      k += 2;
    } else {
      parts.push(atom.text);
      if (options.icase && atom.codePoint !== undefined) {
        const variant = caseVariant(atom.codePoint);
        if (variant !== undefined) extra.push(String.fromCodePoint(variant));
      }
    }
  }
  return `[${negated ? '^' : ''}${parts.join('')}${extra.join('')}]`;
}

function foldRange(from: number, to: number): string[] {
  const extra: string[] = [];
  const lowFrom = Math.max(from, LOWER_A);
  const lowTo = Math.min(to, LOWER_Z);
  if (lowFrom <= lowTo) extra.push(`${String.fromCodePoint(lowFrom - 32)}-${String.fromCodePoint(lowTo - 32)}`);
  const upFrom = Math.max(from, UPPER_A);
  const upTo = Math.min(to, UPPER_Z);
  if (upFrom <= upTo) extra.push(`${String.fromCodePoint(upFrom + 32)}-${String.fromCodePoint(upTo + 32)}`);
  // A non-ASCII range is only safe if it already holds both cases of every letter in it.
  for (let cp = Math.max(from, 0x80); cp <= to; cp++) {
    if (!isCased(cp)) continue;
    const ch = String.fromCodePoint(cp);
    for (const variant of [ch.toLowerCase(), ch.toUpperCase()]) {
      const other = variant.codePointAt(0)!;
      if ([...variant].length === 1 && other !== cp && (other < from || other > to)) {
        throw new Error(`the 'i' flag is only expanded for ASCII letters, not "${ch}"`);
      }
    }
  }
  return extra;
}

function classLiteral(ch: string): string {
  return '\\]^-['.includes(ch) ? `\\${ch}` : ch;
}
