import type { JsonObject } from './mcp-types.js';

// Small value helpers every layer of a call shares (the dispatcher re-exports them).

/** The reason a cancelled call's AbortSignal carries. */
export class McpCancelledError extends Error {
  constructor() {
    super('The request was cancelled.');
    this.name = 'McpCancelledError';
  }
}

/** A request's `params._meta`, or an empty object. */
export function metaOf(params: JsonObject | undefined): JsonObject {
  const meta = params?._meta;
  return isObject(meta) ? meta : NO_META;
}

const NO_META: JsonObject = Object.freeze({}) as JsonObject;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isPromiseLike<T>(value: unknown): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<T>).then === 'function';
}

export function truncate(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * A shallow copy that more properties are added to. `{ ...value, more }` costs about a
 * microsecond on Node 20 (the spread's clone takes a slow path once properties are added), a copy
 * by Object.assign some tens of nanoseconds; an own `__proto__` key (JSON.parse makes them) would
 * set the copy's prototype there, so such a value is spread, as before.
 */
export function copyOf<T extends object>(value: T): T {
  return Object.hasOwn(value, '__proto__') ? { ...value } : Object.assign({}, value);
}
