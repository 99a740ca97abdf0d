import { isJsonPrimitive } from './validation-rules.js';

// Copies of user-given JSON values for schemas that are deep-frozen.

export function jsonClone(value: unknown): unknown {
  if (value === undefined || !isJsonValue(value)) return undefined;
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/** Schemas are deep-frozen; copy what the user handed in so their objects stay theirs. */
export function copyJson<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

function isJsonValue(value: unknown): boolean {
  if (isJsonPrimitive(value)) return true;
  if (Array.isArray(value)) return value.every(isJsonValue);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.values(value).every(isJsonValue);
  }
  return false;
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
