/** A JSON-RPC request id. The spec forbids `null` on requests. */
export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: Record<string, unknown>;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** JSON-RPC and MCP error codes used by this server. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Implementation-defined server error: the server is at a capacity bound (HTTP 503, Retry-After). */
  ServerBusy: -32000,
  /** Legacy (≤ 2025-11-25) resource-not-found code. Never sent on the modern era. */
  ResourceNotFound: -32002,
  /** 2026-07-28: an HTTP header is missing, malformed or disagrees with the body. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability it did not declare. */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the requested protocol version is not served here. */
  UnsupportedProtocolVersion: -32022,
  /** 2025-11-25 only: URL-mode elicitation required. */
  UrlElicitationRequired: -32042,
} as const;

export type ParsedMessage =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse }
  | { kind: 'invalid'; id: JsonRpcId | null; reason: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isValidId(id: unknown): id is JsonRpcId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
}

/**
 * Classifies one decoded JSON value as a JSON-RPC 2.0 message. The id of an invalid message is
 * kept whenever it is readable, so that the error response can echo it.
 */
export function classifyMessage(value: unknown): ParsedMessage {
  if (!isPlainObject(value)) {
    return { kind: 'invalid', id: null, reason: 'A JSON-RPC message must be a JSON object.' };
  }
  const readableId = isValidId(value.id) ? value.id : null;
  if (value.jsonrpc !== '2.0') {
    return { kind: 'invalid', id: readableId, reason: 'The "jsonrpc" member must be exactly "2.0".' };
  }
  if ('method' in value) {
    if (typeof value.method !== 'string' || value.method.length === 0) {
      return { kind: 'invalid', id: readableId, reason: 'The "method" member must be a non-empty string.' };
    }
    if (value.params !== undefined && !isPlainObject(value.params)) {
      return {
        kind: 'invalid',
        id: readableId,
        reason: 'The "params" member must be an object (MCP does not use positional params).',
      };
    }
    if (!('id' in value)) {
      return { kind: 'notification', message: value as unknown as JsonRpcNotification };
    }
    if (!isValidId(value.id)) {
      return {
        kind: 'invalid',
        id: null,
        reason: 'The request "id" must be a string or an integer (null is not allowed).',
      };
    }
    return { kind: 'request', message: value as unknown as JsonRpcRequest };
  }
  if ('result' in value || 'error' in value) {
    if (!('id' in value) || (value.id !== null && !isValidId(value.id))) {
      return { kind: 'invalid', id: null, reason: 'A JSON-RPC response needs a string or integer "id".' };
    }
    if ('result' in value && !isPlainObject(value.result)) {
      return { kind: 'invalid', id: readableId, reason: 'A JSON-RPC "result" must be an object.' };
    }
    return { kind: 'response', message: value as unknown as JsonRpcResponse };
  }
  return {
    kind: 'invalid',
    id: readableId,
    reason: 'A JSON-RPC message needs a "method" (request or notification) or a "result"/"error" (response).',
  };
}

export function success(id: JsonRpcId, result: Record<string, unknown>): JsonRpcSuccess {
  return { jsonrpc: '2.0', id, result };
}

export function failure(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcFailure {
  const error: JsonRpcErrorObject = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: '2.0', id, error };
}

export function notification(method: string, params?: Record<string, unknown>): JsonRpcNotification {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}

export function isResponse(message: JsonRpcMessage): message is JsonRpcResponse {
  return 'result' in message || 'error' in message;
}
