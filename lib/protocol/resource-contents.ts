import { toJsonValue } from './content.js';
import type { JsonObject, McpIcon } from './mcp-types.js';
import { MAX_URI_LENGTH } from './uri-template.js';

/**
 * Hints about how a resource (or a content item) is meant to be used.
 *
 * @publicApi
 */
export interface ResourceAnnotations {
  /** Who the content is for. */
  audience?: Array<'user' | 'assistant'>;
  /** 0 (optional) to 1 (effectively required). */
  priority?: number;
  /** ISO 8601 timestamp of the last change. */
  lastModified?: string;
}

/** @publicApi */
export interface TextResourceContents {
  uri: string;
  mimeType?: string;
  text: string;
  _meta?: JsonObject;
}

/** `blob` is base64. @publicApi */
export interface BlobResourceContents {
  uri: string;
  mimeType?: string;
  blob: string;
  _meta?: JsonObject;
}

/** @publicApi */
export type ResourceContents = TextResourceContents | BlobResourceContents;

/** The result of `resources/read`. @publicApi */
export interface ReadResourceResult {
  contents: ResourceContents[];
  _meta?: JsonObject;
}

/**
 * A content item as a handler may return it: `uri` and `mimeType` default to the resource's,
 * and `blob` may be raw bytes.
 *
 * @publicApi
 */
export interface ResourceContentInput {
  uri?: string;
  mimeType?: string;
  text?: string;
  blob?: string | Uint8Array;
  annotations?: ResourceAnnotations;
  _meta?: JsonObject;
}

/**
 * Builders for the contents of a resource read. Return one (or an array, for several contents)
 * when a plain string, Buffer or object is not enough, e.g. to mix MIME types.
 *
 * @publicApi
 */
export const ResourceContent = {
  text(text: string, options: Omit<ResourceContentInput, 'text' | 'blob'> = {}): ResourceContentInput {
    return { ...options, text };
  },
  /** `data` is raw bytes or an already base64-encoded string. */
  blob(data: Uint8Array | string, options: Omit<ResourceContentInput, 'text' | 'blob'> = {}): ResourceContentInput {
    return { ...options, blob: typeof data === 'string' ? data : toBase64(data) };
  },
  /** Any JSON value as text, with `application/json` unless another type is given. */
  json(value: unknown, options: Omit<ResourceContentInput, 'text' | 'blob'> = {}): ResourceContentInput {
    return { mimeType: 'application/json', ...options, text: JSON.stringify(toJsonValue(value)) ?? 'null' };
  },
} as const;

const CONTENT_KEYS = new Set(['uri', 'mimeType', 'text', 'blob', 'annotations', '_meta']);
const RESULT_KEYS = new Set(['contents', '_meta']);

/**
 * Turns what a resource handler returned into a `resources/read` result, or `null` when it
 * returned nothing (which means "not found": a result never has empty `contents`).
 *
 * - a string → one text item with the declared MIME type (default `text/plain`);
 * - a Buffer/Uint8Array → one base64 `blob` item (default `application/octet-stream`);
 * - a content item (`{ text }` or `{ blob }`, with optional `uri`, `mimeType`, `annotations`,
 *   `_meta` and nothing else), or an array of them → those items, `uri` and `mimeType` defaulted;
 * - `{ contents: [...] }` (plus optional `_meta`) → a full result, items defaulted the same way;
 * - anything else → its JSON as one text item (default `application/json`).
 */
export function toReadResourceResult(value: unknown, uri: string, mimeType?: string): ReadResourceResult | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return { contents: [{ uri, mimeType: mimeType ?? 'text/plain', text: value }] };
  if (value instanceof Uint8Array) {
    return { contents: [{ uri, mimeType: mimeType ?? 'application/octet-stream', blob: toBase64(value) }] };
  }
  if (isFullResult(value)) {
    if (value.contents.length === 0) return null;
    const result: ReadResourceResult = { contents: value.contents.map((item) => normalize(item, uri, mimeType)) };
    if (value._meta !== undefined) result._meta = value._meta;
    return result;
  }
  if (isContentInput(value)) return { contents: [normalize(value, uri, mimeType)] };
  if (Array.isArray(value) && value.length > 0 && value.every(isContentInput)) {
    return { contents: value.map((item) => normalize(item, uri, mimeType)) };
  }
  const text = JSON.stringify(toJsonValue(value)) ?? 'null';
  return { contents: [{ uri, mimeType: mimeType ?? 'application/json', text }] };
}

function normalize(item: ResourceContentInput, uri: string, mimeType: string | undefined): ResourceContents {
  const out: JsonObject = { uri: item.uri ?? uri };
  if (item.text !== undefined) {
    out.mimeType = item.mimeType ?? mimeType ?? 'text/plain';
    out.text = item.text;
  } else {
    out.mimeType = item.mimeType ?? mimeType ?? 'application/octet-stream';
    out.blob = typeof item.blob === 'string' ? item.blob : toBase64(item.blob!);
  }
  if (item.annotations !== undefined) out.annotations = item.annotations;
  if (item._meta !== undefined) out._meta = item._meta;
  return out as unknown as ResourceContents;
}

export function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isContentInput(value: unknown): value is ResourceContentInput {
  if (!isPlainObject(value)) return false;
  for (const key of Object.keys(value)) if (!CONTENT_KEYS.has(key)) return false;
  const hasText = typeof value.text === 'string';
  const hasBlob = typeof value.blob === 'string' || value.blob instanceof Uint8Array;
  if (hasText === hasBlob) return false;
  return (
    (value.uri === undefined || typeof value.uri === 'string') &&
    (value.mimeType === undefined || typeof value.mimeType === 'string')
  );
}

function isFullResult(value: unknown): value is { contents: ResourceContentInput[]; _meta?: JsonObject } {
  if (!isPlainObject(value) || !Array.isArray(value.contents)) return false;
  for (const key of Object.keys(value)) if (!RESULT_KEYS.has(key)) return false;
  return value.contents.every(isContentInput);
}

function toBase64(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}

/** What `resources/list` advertises for one resource. */
export interface ResourceDescriptor {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Size in bytes, when known. */
  size?: number;
  annotations?: ResourceAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
}

/** What `resources/templates/list` advertises for one template. */
export interface ResourceTemplateDescriptor {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: ResourceAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
}

/**
 * Throw it from a resource handler (or return `undefined`/`null`) when the requested resource
 * does not exist: the client gets the era's resource-not-found error (`-32002` up to 2025-11-25,
 * `-32602` on 2026-07-28), with `data.uri`.
 *
 * @publicApi
 */
export class ResourceNotFoundError extends Error {
  constructor(message?: string) {
    super(message ?? 'Resource not found.');
    this.name = 'ResourceNotFoundError';
  }
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// RFC 3986 has no room for whitespace or control characters; they must be percent-encoded.
const NOT_IN_URI = /[\u0000-\u0020\u007f]/;

/** Why a string is not an absolute URI this server can serve, or undefined when it is. */
export function uriProblem(uri: string): string | undefined {
  if (uri.length === 0) return 'it is empty';
  if (uri.length > MAX_URI_LENGTH) return `it is ${uri.length} characters long; the limit is ${MAX_URI_LENGTH}`;
  if (!SCHEME.test(uri)) return 'it does not start with a scheme such as "file:" or "https:"';
  if (NOT_IN_URI.test(uri)) return 'it contains whitespace or control characters, which must be percent-encoded';
  return undefined;
}
