import { isAbsolute, relative as relativePath, resolve, sep } from 'node:path';

/** Longest relative path {@link resolveSafePath} accepts, in UTF-16 code units. */
export const MAX_SAFE_PATH_LENGTH = 4096;

/** Why {@link resolveSafePath} refused a value. */
export type UnsafePathReason =
  'not-a-string' | 'empty' | 'too-long' | 'nul-byte' | 'absolute' | 'traversal' | 'outside-root';

/** Thrown by {@link resolveSafePath} when a value cannot safely name a file under the root. */
export class UnsafePathError extends Error {
  override readonly name = 'UnsafePathError';
  /** Machine-readable category of the problem. */
  readonly reason: UnsafePathReason;

  constructor(reason: UnsafePathReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Resolves `relative` (typically a value matched from a resource URI, already percent-decoded
 * once; do not decode it again) to an absolute path strictly under `root`.
 *
 * The check is lexical and platform-independent: `\` counts as a separator when looking for `..`
 * segments, and Windows drive (`C:\`, `C:x`) and UNC (`\\server\share`) forms are refused on every
 * platform, so a template behaves the same on Linux and Windows. Symbolic links are not followed;
 * call `fs.realpath` on the result if the tree may contain links pointing outside `root`.
 *
 * @param root Directory the result must stay under; resolved against the working directory if relative.
 * @param relative Path below `root`, e.g. `docs/guide.md`.
 * @returns The absolute path `resolve(root, relative)`.
 * @throws UnsafePathError when `relative` is empty, too long, contains a NUL byte, is absolute,
 *   contains a `..` segment, or resolves to `root` itself or outside it.
 */
export function resolveSafePath(root: string, relative: string): string {
  if (typeof relative !== 'string') {
    throw new UnsafePathError(
      'not-a-string',
      `Path must be a string, got ${relative === null ? 'null' : typeof relative}. Pass the matched URI value.`,
    );
  }
  if (relative.length === 0) {
    throw new UnsafePathError('empty', 'Path is empty. Name a file or directory below the root.');
  }
  if (relative.length > MAX_SAFE_PATH_LENGTH) {
    throw new UnsafePathError(
      'too-long',
      `Path ${describe(relative)} is ${relative.length} characters long; the limit is ${MAX_SAFE_PATH_LENGTH}. Use a shorter path.`,
    );
  }
  if (relative.includes('\0')) {
    throw new UnsafePathError(
      'nul-byte',
      `Path ${describe(relative)} contains a NUL byte. Remove it; file names cannot contain NUL.`,
    );
  }
  if (/^[/\\]/.test(relative) || /^[A-Za-z]:/.test(relative)) {
    throw new UnsafePathError(
      'absolute',
      `Path ${describe(relative)} is absolute. Pass a path relative to the root, without a leading "/", "\\" or drive letter.`,
    );
  }
  if (relative.split(/[/\\]/).includes('..')) {
    throw new UnsafePathError(
      'traversal',
      `Path ${describe(relative)} contains a ".." segment. Paths must stay below the root; remove "..".`,
    );
  }
  const base = resolve(root);
  const resolved = resolve(base, relative);
  const rel = relativePath(base, resolved);
  // Defence in depth: the checks above should already make these unreachable on any platform.
  if (rel === '' || rel === '..' || rel.startsWith('..' + sep) || isAbsolute(rel)) {
    throw new UnsafePathError(
      'outside-root',
      `Path ${describe(relative)} resolves to ${rel === '' ? 'the root itself' : 'a location outside the root'}. Name a file or directory below the root.`,
    );
  }
  return resolved;
}

/** Quotes a value for an error message, escaping control characters and truncating long values. */
function describe(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}
