import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The call an HTTP request belongs to. The official client calls `fetch` inside the async context
 * of the request that caused it, so the bound and the caller reach the wire without threading
 * them through the SDK.
 */
export interface McpCallScope {
  /** Stops the call with `error` (its answer passed the bound). */
  fail(error: Error): void;
}

export const mcpCallScope = new AsyncLocalStorage<McpCallScope>();

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A fetch for one upstream connection: adds the credentials' headers to every request, and cuts
 * a POST answer (one call's JSON or SSE stream) that passes `maxBytes`. The standing GET stream
 * is not counted: it carries many calls' notifications over its lifetime.
 */
export function upstreamFetch(headers: () => Promise<Record<string, string>>, maxBytes: number, tooLarge: () => Error): FetchLike {
  return async (url, init = {}) => {
    const merged = new Headers(init.headers);
    for (const [name, value] of Object.entries(await headers())) merged.set(name, value);
    const response = await fetch(url, { ...init, headers: merged, redirect: 'error' });
    if ((init.method ?? 'GET').toUpperCase() !== 'POST' || !response.body) return response;
    const scope = mcpCallScope.getStore();
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body.cancel();
      const error = tooLarge();
      scope?.fail(error);
      throw error;
    }
    let seen = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) {
            const error = tooLarge();
            scope?.fail(error);
            controller.error(error);
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
