import type { Connection } from './mcp-client.connection.js';
import { McpClientError } from './mcp-client.error.js';
import { ABORTED, CLOSED, SESSION_LOST, TIMED_OUT, UNREACHABLE } from './mcp-client.messages.js';
import type { McpSdk } from './sdk-loader.js';

/** The call that failed, as far as its failure's meaning depends on it. */
export interface FailedCall {
  /** The configured name of the upstream. */
  client: string;
  method: string;
  signal?: AbortSignal;
  timeoutMs: number;
  /** The official client, once loaded: its error classes tell the upstream's verdicts apart. */
  sdk?: McpSdk;
}

/**
 * Maps what the SDK, fetch or a child process threw to an {@link McpClientError}; marks a
 * connection whose legacy session the upstream lost as broken.
 */
export function classifyFailure(error: unknown, call: FailedCall, connection?: Connection): McpClientError {
  const { client, method, sdk } = call;
  // A credentials failure inside the transport's fetch comes back wrapped by the SDK.
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof McpClientError) return cause;
  }
  if (call.signal?.aborted)
    return new McpClientError('aborted', client, ABORTED(client, method), undefined, undefined, {
      cause: error,
    });
  const code = (error as { code?: unknown })?.code;
  if (sdk && error instanceof sdk.ProtocolError)
    return new McpClientError(
      'protocol',
      client,
      `MCP upstream "${client}" answered ${method} with an error: ${error.message}`,
      error.code as number,
      (error as { data?: unknown }).data,
      { cause: error },
    );
  if (sdk && error instanceof sdk.SdkError && code === sdk.SdkErrorCode.RequestTimeout) {
    return new McpClientError('timeout', client, TIMED_OUT(client, method, call.timeoutMs), undefined, undefined, {
      cause: error,
    });
  }
  const detail = error instanceof Error ? describe(error) : String(error);
  const status = (error as { status?: unknown }).status ?? (error as { data?: { status?: unknown } }).data?.status;
  if (status === 404 && connection?.client.getProtocolEra() === 'legacy') {
    connection.broken = true;
    return new McpClientError('transport', client, SESSION_LOST(client, method), 404, undefined, {
      cause: error,
    });
  }
  if (code === 'CLIENT_HTTP_AUTHENTICATION' || code === 'CLIENT_HTTP_FORBIDDEN' || status === 401 || status === 403) {
    return new McpClientError(
      'credentials',
      client,
      `MCP upstream "${client}" refused ${method}${typeof status === 'number' ? ` (HTTP ${status})` : ''}: ${detail}. Check the client's "auth" and "headers".`,
      undefined,
      undefined,
      { cause: error },
    );
  }
  if (
    code === 'CONNECTION_CLOSED' ||
    code === 'NOT_CONNECTED' ||
    code === 'SEND_FAILED' ||
    code === 'CLIENT_HTTP_FAILED_TO_OPEN_STREAM'
  ) {
    return new McpClientError('transport', client, CLOSED(client, method, detail), undefined, undefined, {
      cause: error,
    });
  }
  // Any other SDK verdict (an unsupported method, an invalid result...) is final: retrying cannot change it.
  const transient = code === 'ERA_NEGOTIATION_FAILED' || (typeof status === 'number' && status >= 500);
  if (sdk && error instanceof sdk.SdkError && !transient) {
    return new McpClientError(
      'protocol',
      client,
      `MCP upstream "${client}" could not serve ${method}: ${detail}`,
      undefined,
      (error as { data?: unknown }).data,
      { cause: error },
    );
  }
  return new McpClientError('transport', client, UNREACHABLE(client, method, detail), undefined, undefined, {
    cause: error,
  });
}

function describe(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message !== error.message
    ? `${error.message} (${cause.message})`
    : error.message;
}
