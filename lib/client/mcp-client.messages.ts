export const MISSING_SDK = (client: string, detail: string) =>
  `MCP client "${client}" needs the official "@modelcontextprotocol/client" package, which could not be loaded (${detail}). Install it with "npm install @modelcontextprotocol/client@2", or remove the client from McpClientModule.`;
export const UNREACHABLE = (client: string, method: string, detail: string) =>
  `MCP upstream "${client}" could not be reached for ${method}: ${detail}. Check that the server is running and its address in McpClientModule is right.`;
export const CLOSED = (client: string, method: string, detail: string) =>
  `MCP upstream "${client}" closed the connection during ${method}${detail ? ` (${detail})` : ''}. The next call reconnects.`;
export const TIMED_OUT = (client: string, method: string, ms: number) =>
  `MCP upstream "${client}" did not answer ${method} within ${ms} ms. Raise "timeoutMs" for this client or this call if the operation is slow.`;
export const ABORTED = (client: string, method: string) =>
  `${method} on MCP upstream "${client}" was cancelled by the caller.`;
export const TOO_LARGE = (client: string, method: string, bytes: number) =>
  `MCP upstream "${client}" sent more than ${bytes} bytes in answer to ${method}; the call was stopped. Raise "maxResponseBytes" for this client if such answers are expected.`;
export const NO_CALLER = (client: string, mode: string) =>
  `MCP client "${client}" presents the caller's identity (auth: ${mode}), and this call gave no caller. Pass { caller: { id, token } } with the principal's id and bearer token.`;
export const AUDIENCE_MISMATCH = (client: string, audience: string, got: string) =>
  `MCP client "${client}" passes the caller's token through only to its own audience "${audience}", and this token is for ${got}. Use auth "token-exchange" to call an upstream of another audience.`;
export const TOKEN_FAILED = (client: string, grant: string, detail: string) =>
  `MCP client "${client}" could not get a token (${grant}) from the authorization server: ${detail}. Check the client id, secret, token endpoint and the grant's configuration there.`;
export const AUTH_NEEDS_HTTP = (client: string) =>
  `MCP client "${client}" has "auth" but its transport is not "http": credentials travel in HTTP headers. Give a stdio child its secrets through "env", or remove "auth".`;
export const DUPLICATE_CLIENT = (client: string) =>
  `McpClientModule: the client name "${client}" is configured twice. Client names must be unique.`;
export const UNKNOWN_CLIENT = (client: string, known: string[]) =>
  `McpClientModule: no client named "${client}" is configured${known.length ? ` (configured: ${known.map((n) => `"${n}"`).join(', ')})` : ''}. Add it to McpClientModule.forRoot({ clients }) or to "names" of forRootAsync().`;
export const NAMES_MISMATCH = (declared: string[], built: string[]) =>
  `McpClientModule.forRootAsync(): "names" lists ${JSON.stringify(declared)} but the factory configured ${JSON.stringify(built)}. Both must name the same clients.`;
export const CLOSED_CLIENT = (client: string) => `MCP client "${client}" is closed (the application is shutting down).`;
export const SESSION_LOST = (client: string, method: string) =>
  `MCP upstream "${client}" no longer knows this client's session (HTTP 404 to ${method}: it restarted or expired the session). A new session is opened for the next call.`;
export const STREAM_LOST = (client: string, detail: string) =>
  `MCP upstream "${client}" dropped the call's stream before answering (${detail}). The next call reconnects.`;
