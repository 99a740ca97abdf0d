import { ErrorCode, failure, type JsonRpcFailure, type JsonRpcId, type JsonRpcMessage } from './json-rpc.js';

/**
 * A protocol error: thrown from a handler, it becomes a JSON-RPC error response with this code,
 * message and data instead of a tool result. Use it when the caller, not the tool, is at fault in
 * a way the protocol names (for example `ErrorCode.InvalidParams`).
 *
 * @publicApi
 */
export class McpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    /** The HTTP status to answer with when this error ends a request before any stream opened. */
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'McpError';
  }
}

/**
 * An error whose message is meant for the model: thrown from a tool it becomes a tool result with
 * `isError: true` and this message as its text, so the model can read it and try again.
 *
 * @publicApi
 */
export class ToolError extends Error {
  constructor(
    message: string,
    /** Optional structured details, sent as `structuredContent` on the modern era only. */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/**
 * The caller-facing message of a Nest `HttpException` (duck-typed: no Nest here): its response
 * string, or its response's `message` (a validation pipe's list joined), else the error's message.
 * Undefined for anything that is not one. The one mapping for tools, resources, prompts and the
 * HTTP exception filter.
 */
export function httpExceptionMessage(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const candidate = error as Error & { getStatus?: unknown; getResponse?: unknown };
  if (typeof candidate.getStatus !== 'function' || typeof candidate.getResponse !== 'function') return undefined;
  const response = (candidate.getResponse as () => unknown).call(error);
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown } | null)?.message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : error.message;
}

/** HTTP status for a JSON-RPC error raised before dispatch (transport-level validation). */
export function httpStatusFor(code: number): number {
  switch (code) {
    case ErrorCode.MethodNotFound:
      return 404;
    case ErrorCode.ParseError:
    case ErrorCode.InvalidRequest:
    case ErrorCode.InvalidParams:
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
      return 400;
    default:
      return 500;
  }
}

/**
 * A store the request needs (sessions, stored SSE events, the cross-instance relay) cannot be
 * reached right now. The transports answer it with HTTP 503, a `Retry-After` header and a JSON-RPC
 * error carrying this message, instead of a 500: the request was fine and will succeed once the
 * store is back, which the server notices on its own.
 *
 * @publicApi
 */
export class McpStoreUnavailableError extends Error {
  constructor(
    message: string,
    /** Seconds a client is asked to wait before retrying (`Retry-After`). */
    readonly retryAfterS: number,
  ) {
    super(message);
    this.name = 'McpStoreUnavailableError';
  }
}

/**
 * The JSON-RPC error of a request whose store is unreachable, wherever it surfaced (before the
 * dispatcher, or inside a method such as `tasks/get`): `-32000`, the store's message, and the
 * seconds to wait in `data.retryAfterSeconds`, from which the transport answers 503 with
 * `Retry-After` ({@link storeUnavailableRetryAfter}).
 * @internal
 */
export function storeUnavailableFailure(id: JsonRpcId | null, error: McpStoreUnavailableError): JsonRpcFailure {
  return failure(id, ErrorCode.ServerBusy, error.message, { retryAfterSeconds: error.retryAfterS });
}

/** The `Retry-After` seconds of a response made by {@link storeUnavailableFailure}, else undefined. @internal */
export function storeUnavailableRetryAfter(message: JsonRpcMessage): number | undefined {
  if (!('error' in message) || message.error.code !== ErrorCode.ServerBusy) return undefined;
  const data = message.error.data as { retryAfterSeconds?: unknown } | undefined;
  return typeof data?.retryAfterSeconds === 'number' ? data.retryAfterSeconds : undefined;
}
