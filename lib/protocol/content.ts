import type {
  AudioContent,
  CallToolResult,
  ContentBlock,
  EmbeddedResourceContent,
  ImageContent,
  JsonObject,
  ResourceLinkContent,
  TextContent,
} from './mcp-types.js';

const CONTENT_TYPES = new Set(['text', 'image', 'audio', 'resource_link', 'resource']);
const RESULT_KEYS = new Set(['content', 'structuredContent', 'isError', '_meta']);

function toBase64(data: string | Uint8Array): string {
  return typeof data === 'string'
    ? data
    : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}

/**
 * Builders for tool-result content. Return one of these (or an array of them) from a tool to
 * control exactly what the model sees.
 *
 * @publicApi
 */
export const Content = {
  text(text: string, extra?: Partial<Omit<TextContent, 'type' | 'text'>>): TextContent {
    return { type: 'text', text, ...extra };
  },
  /** `data` is raw bytes or an already base64-encoded string. */
  image(data: string | Uint8Array, mimeType: string, extra?: Partial<Omit<ImageContent, 'type'>>): ImageContent {
    return { type: 'image', data: toBase64(data), mimeType, ...extra };
  },
  /** `data` is raw bytes or an already base64-encoded string. */
  audio(data: string | Uint8Array, mimeType: string, extra?: Partial<Omit<AudioContent, 'type'>>): AudioContent {
    return { type: 'audio', data: toBase64(data), mimeType, ...extra };
  },
  resourceLink(link: Omit<ResourceLinkContent, 'type'>): ResourceLinkContent {
    return { type: 'resource_link', ...link };
  },
  /** An embedded resource: give `text`, or `blob` as bytes or base64. */
  resource(resource: {
    uri: string;
    mimeType?: string;
    text?: string;
    blob?: string | Uint8Array;
    _meta?: JsonObject;
  }): EmbeddedResourceContent {
    const { blob, ...rest } = resource;
    return { type: 'resource', resource: blob === undefined ? rest : { ...rest, blob: toBase64(blob) } };
  },
} as const;

export function isContentBlock(value: unknown): value is ContentBlock {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { type?: unknown }).type === 'string' &&
    CONTENT_TYPES.has((value as { type: string }).type)
  );
}

/** An object shaped like a CallToolResult: only result keys, with a `content` array of blocks. */
export function isCallToolResult(value: unknown): value is CallToolResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const content = (value as { content?: unknown }).content;
  if (!Array.isArray(content) || !content.every(isContentBlock)) return false;
  for (const key of Object.keys(value)) if (!RESULT_KEYS.has(key)) return false;
  return true;
}

export interface ToResultOptions {
  /** The tool's output schema is listed to this caller (2025-11-25 lists object schemas only). */
  outputSchemaListed: boolean;
}

/**
 * Turns whatever a tool returned into a CallToolResult: strings become text, content blocks pass
 * through, other values become their JSON as text, and a full result passes through untouched.
 *
 * One rule for both eras decides `structuredContent`: a JSON object always goes there too (with
 * its JSON as text, the spec's SHOULD for clients that ignore structured output); any other JSON
 * value (an array, a number) only when the caller was shown an output schema describing it. Only
 * 2026-07-28 admits such schemas and non-object structured content; on 2025-11-25 the schema
 * requires an object, so without this rule the same array would be structured on one era and
 * not on the other.
 */
export function toCallToolResult(value: unknown, options: ToResultOptions): CallToolResult {
  if (value === undefined || value === null) return { content: [] };
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  if (isCallToolResult(value)) return value;
  if (isContentBlock(value)) return { content: [value] };
  if (Array.isArray(value) && value.length > 0 && value.every(isContentBlock)) {
    return { content: value as ContentBlock[] };
  }
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    return { content: [{ type: 'text', text: toBase64(value) }] };
  }
  const plain = toJsonValue(value);
  const text = JSON.stringify(plain) ?? String(value);
  const isObject = typeof plain === 'object' && plain !== null && !Array.isArray(plain);
  if (isObject || options.outputSchemaListed) {
    return { content: [{ type: 'text', text }], structuredContent: plain };
  }
  return { content: [{ type: 'text', text }] };
}

/** Class instances (DTOs, Dates, Maps with toJSON) become plain JSON values once. */
export function toJsonValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'bigint' ? value.toString() : value;
  }
  const proto = Object.getPrototypeOf(value);
  if ((proto === Object.prototype || proto === null || Array.isArray(value)) && !hasNonJson(value, 0)) {
    return value;
  }
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
}

function hasNonJson(value: unknown, depth: number): boolean {
  if (depth > 32) return true;
  if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol') return true;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some((v) => hasNonJson(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return true;
  for (const key in value) if (hasNonJson((value as JsonObject)[key], depth + 1)) return true;
  return false;
}

export function errorResult(message: string, structured?: JsonObject): CallToolResult {
  const result: CallToolResult = { content: [{ type: 'text', text: message }], isError: true };
  if (structured !== undefined) result.structuredContent = structured;
  return result;
}
