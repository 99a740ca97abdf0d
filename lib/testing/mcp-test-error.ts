/**
 * A protocol error the server answered (a JSON-RPC `error`), thrown by {@link McpTestClient}.
 * A tool's own failure is not one: it comes back as a `CallToolResult` with `isError: true`.
 *
 * @publicApi
 */
export class McpTestError extends Error {
  constructor(
    /** The JSON-RPC error code, e.g. -32602 (invalid params) or -32002 (resource not found). */
    readonly code: number,
    message: string,
    /** The error's `data`, if the server sent any. */
    readonly data?: unknown,
    /** The method of the request that failed. */
    readonly method?: string,
  ) {
    super(message);
    this.name = 'McpTestError';
  }
}
