import type { JsonRpcMessage } from './json-rpc.js';

/**
 * Results that never change between requests (list pages, discovery) are serialized once: a
 * response is then the cached JSON spliced between the envelope's few bytes, so a 50-tool list
 * costs about what a 5-tool one does.
 */
const frozenJson = new WeakMap<object, string>();

/** Marks a result object as immutable, so its JSON can be cached. Returns it. */
export function freezeResult<T extends object>(result: T): T {
  if (!frozenJson.has(result)) frozenJson.set(result, JSON.stringify(result));
  return result;
}

/** JSON of one JSON-RPC message, reusing the cached JSON of a frozen result. */
export function serializeMessage(message: JsonRpcMessage): string {
  const result = (message as { result?: unknown }).result;
  if (typeof result === 'object' && result !== null) {
    const cached = frozenJson.get(result);
    if (cached !== undefined)
      return `{"jsonrpc":"2.0","id":${JSON.stringify((message as { id: unknown }).id)},"result":${cached}}`;
  }
  return JSON.stringify(message);
}
