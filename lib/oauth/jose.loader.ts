import type * as JoseModule from 'jose';

/** The `jose` API the built-in verification uses: the same in jose 5 and jose 6. */
export type Jose = typeof JoseModule;

let loading: Promise<Jose> | undefined;

/**
 * True when `jose` is installed but the loader cannot read an ES module: jose 6 ships ES modules
 * only, and a CommonJS loader that does not `require()` ES modules (Jest's, or Node run with
 * `--no-experimental-require-module`) fails on it with one of these.
 */
function isEsmOnlyRefusal(error: unknown): boolean {
  // By name, not instanceof: Jest raises it from another realm than the one the test runs in.
  const { code, name, message } = (error ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  return (
    code === 'ERR_REQUIRE_ESM' ||
    (name === 'SyntaxError' && /import statement outside a module|Unexpected token 'export'/.test(String(message)))
  );
}

/**
 * `jose`, loaded on the first token verified: an optional peer (`^5.9.0 || ^6.0.0`), needed only by
 * the built-in verification (`auth.jwt`, `auth.dpop`). The CommonJS build `require()`s it, so a
 * CommonJS app tested with Jest needs jose 5, the last major with a CommonJS build.
 */
export function loadJose(): Promise<Jose> {
  loading ??= (async () => {
    const specifier = 'jose';
    try {
      return (await import(specifier)) as Jose;
    } catch (error) {
      loading = undefined;
      const cause = (error as Error).message;
      const fix = isEsmOnlyRefusal(error)
        ? 'The installed jose is ES modules only (jose 6), which this CommonJS loader (Jest\'s, in a CommonJS app) cannot load: install jose 5, which ships a CommonJS build, with "npm install jose@5"'
        : 'Install it with "npm install jose@6" (a CommonJS app whose tests run under Jest: "npm install jose@5", which ships a CommonJS build)';
      throw new Error(
        `McpModule: built-in token verification (auth.jwt, auth.dpop) needs the "jose" package, which could not be loaded (${cause}). ${fix}, or verify tokens yourself with auth.verifyToken.`,
      );
    }
  })();
  return loading;
}
