import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The call an HTTP request belongs to. The official client calls `fetch` inside the async context
 * of the request that caused it, so the bound and the caller reach the wire without threading
 * them through the SDK.
 */
export interface McpCallScope {
  /** Stops the call with `error` (its answer passed the bound). */
  fail(error: Error): void;
  /** Answers the upstream's `elicitation/create` during this call. */
  elicit?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Answers the upstream's `sampling/createMessage` during this call. */
  sample?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

export const mcpCallScope = new AsyncLocalStorage<McpCallScope>();

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A fetch for one upstream connection: adds the credentials' headers to every request, and cuts
 * a POST answer (one call's JSON or SSE stream) that passes `maxBytes`. The standing GET stream
 * is not counted: it carries many calls' notifications over its lifetime.
 */
export function upstreamFetch(
  headers: () => Promise<Record<string, string>>,
  maxBytes: number,
  tooLarge: () => Error,
  streamLost: (detail: string) => Error,
): FetchLike {
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
    const reader = response.body.getReader();
    // A pull stream rather than pipeThrough: it sees the socket's error (an upstream killed
    // mid-answer), which the SDK would otherwise meet only by waiting for its timeout.
    const counted = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (!init.signal?.aborted)
            scope?.fail(
              streamLost(
                error instanceof Error
                  ? error.cause instanceof Error
                    ? error.cause.message
                    : error.message
                  : String(error),
              ),
            );
          controller.error(error);
          return;
        }
        if (chunk.done) return controller.close();
        seen += chunk.value.byteLength;
        if (seen > maxBytes) {
          const error = tooLarge();
          scope?.fail(error);
          controller.error(error);
          await reader.cancel().catch(() => undefined);
          return;
        }
        controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
