/**
 * Why a call to an upstream failed:
 * - `transport`: the upstream could not be reached or closed the connection (retried with backoff);
 * - `timeout`: no answer within `timeoutMs`;
 * - `aborted`: the caller's `AbortSignal` fired;
 * - `protocol`: the upstream answered with a JSON-RPC error (`code` holds it);
 * - `bound`: the upstream's answer passed `maxResponseBytes`;
 * - `credentials`: no token could be had for the upstream, or the call gave no caller where one is needed;
 * - `config`: the client is misconfigured or its optional peer is missing.
 *
 * @publicApi
 */
export type McpClientErrorKind = 'transport' | 'timeout' | 'aborted' | 'protocol' | 'bound' | 'credentials' | 'config';

/**
 * An error of an MCP client call. The message names the upstream, the method and what to do.
 *
 * @publicApi
 */
export class McpClientError extends Error {
  override readonly name = 'McpClientError';

  constructor(
    readonly kind: McpClientErrorKind,
    /** The configured name of the upstream. */
    readonly client: string,
    message: string,
    /** The JSON-RPC error code, for `protocol` errors. */
    readonly code?: number,
    /** The JSON-RPC error data, for `protocol` errors. */
    readonly data?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
