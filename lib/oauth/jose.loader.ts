import type * as JoseModule from 'jose';

/** The `jose` API the built-in verification uses. */
export type Jose = typeof JoseModule;

let loading: Promise<Jose> | undefined;

/**
 * `jose`, loaded on the first token verified: an optional peer, needed only by the built-in
 * verification (`auth.jwt`, `auth.dpop`).
 */
export function loadJose(): Promise<Jose> {
  loading ??= (async () => {
    const specifier = 'jose';
    try {
      return (await import(specifier)) as Jose;
    } catch (error) {
      loading = undefined;
      throw new Error(
        `McpModule: built-in token verification (auth.jwt, auth.dpop) needs the "jose" package, which could not be loaded (${(error as Error).message}). Install it with "npm install jose@6", or verify tokens yourself with auth.verifyToken.`,
      );
    }
  })();
  return loading;
}
