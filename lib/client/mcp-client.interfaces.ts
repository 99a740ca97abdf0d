import type { INestApplicationContext } from '@nestjs/common';
import type { CallToolResult, JsonObject } from '../protocol/mcp-types.js';

/**
 * Which protocol era the client speaks to an HTTP upstream. `'auto'` probes with
 * `server/discover` and falls back to an `initialize` session when the server does not answer it
 * as a 2026-07-28 server; `'legacy'` always opens a session; `'2026-07-28'` refuses anything else.
 *
 * @publicApi
 */
export type McpClientEra = 'auto' | 'legacy' | '2026-07-28';

/** A Streamable HTTP upstream. @publicApi */
export interface McpClientHttpTransport {
  type: 'http';
  /** The upstream's MCP endpoint, e.g. `https://mcp.example.com/mcp`. */
  url: string | URL;
}

/**
 * An upstream run as a child process speaking MCP on stdin/stdout. The child gets only the
 * variables in `env` plus the official client's safe defaults (PATH, HOME...), never the app's
 * whole environment.
 *
 * @publicApi
 */
export interface McpClientStdioTransport {
  type: 'stdio';
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** What happens to the child's stderr. @default 'inherit' */
  stderr?: 'inherit' | 'ignore' | 'pipe';
}

/**
 * An McpModule in this process (or another app's context), through the testing kit's in-process
 * transport: no socket, the app's own guards and pipeline. For tests and for composing modules.
 *
 * @publicApi
 */
export interface McpClientInProcessTransport {
  type: 'in-process';
  app: INestApplicationContext;
}

/** How to reach one upstream. @publicApi */
export type McpClientTransportOptions = McpClientHttpTransport | McpClientStdioTransport | McpClientInProcessTransport;

/** OAuth 2.0 client authentication at a token endpoint (`client_secret_basic`). @publicApi */
export interface McpOAuthClient {
  /** The token endpoint, e.g. `https://auth.example.com/token`. */
  tokenEndpoint: string | URL;
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes to ask for. */
  scope?: string;
  /** RFC 8707 resource indicator of the upstream (its audience). */
  resource?: string;
  /** RFC 8693 `audience` parameter, for servers that take it instead of `resource`. */
  audience?: string;
}

/**
 * Credentials the client presents to one upstream.
 *
 * - `client-credentials`: the app's own token (OAuth 2.0 client credentials grant), shared by
 *   every caller, cached until shortly before it expires.
 * - `pass-through`: the caller's own bearer token, only when its `aud` claim names `audience`
 *   (the upstream is the same resource server as this app). Never the default.
 * - `token-exchange`: RFC 8693 on-behalf-of: the caller's token is exchanged at the app's
 *   authorization server for one meant for the upstream, cached per caller and upstream within
 *   its lifetime.
 *
 * Static headers are the client's `headers` option and combine with any of these.
 *
 * @publicApi
 */
export type McpClientAuth =
  | ({ type: 'client-credentials' } & McpOAuthClient)
  | { type: 'pass-through'; audience: string }
  | ({
      type: 'token-exchange';
      /** @default 'urn:ietf:params:oauth:token-type:access_token' */ subjectTokenType?: string;
    } & McpOAuthClient);

/**
 * Who a call is made for: required by `pass-through` and `token-exchange` clients, which keep one
 * connection and one exchanged token per caller.
 *
 * @publicApi
 */
export interface McpClientCaller {
  /** A stable id of the principal (e.g. the token's `sub`). Connections and tokens are keyed by it. */
  id: string;
  /** The caller's bearer token, as this app received it. */
  token: string;
}

/** Retries of a call that failed in transport (never a tool error or a JSON-RPC error). @publicApi */
export interface McpClientRetryOptions {
  /** Extra attempts after the first. @default 2 */
  attempts?: number;
  /** First backoff; doubled each attempt, with jitter. @default 100 */
  baseDelayMs?: number;
  /** Longest backoff. @default 2000 */
  maxDelayMs?: number;
  /**
   * Also retry `tools/call` when the failure came after the request was sent: the upstream may
   * have run it, so a retry may run it twice. Requests that change nothing are always retried.
   * @default false
   */
  toolCalls?: boolean;
}

/** One named upstream. @publicApi */
export interface McpClientOptions {
  /** The name `@InjectMcpClient(name)` asks for; also shown in every error about this upstream. */
  name: string;
  transport: McpClientTransportOptions;
  /** Protocol era over HTTP. @default 'auto' */
  era?: McpClientEra;
  /** Static headers on every HTTP request to the upstream (e.g. an API key). */
  headers?: Record<string, string>;
  /** Credentials per caller or for the app; see {@link McpClientAuth}. HTTP upstreams only. */
  auth?: McpClientAuth;
  /** Longest wait for one request, retries excluded. @default 60000 */
  timeoutMs?: number;
  /** Longest wait to connect (probe, `initialize`, child start). @default 15000 */
  connectTimeoutMs?: number;
  /** Retries with backoff on transport errors. `false` turns them off. */
  retry?: McpClientRetryOptions | false;
  /**
   * Largest HTTP response body (a JSON answer or one call's SSE stream) and largest stdio line
   * taken from the upstream. Past it the call fails and the connection is dropped.
   * @default 8388608 (8 MiB)
   */
  maxResponseBytes?: number;
  /** Connections kept open for distinct callers (`pass-through`, `token-exchange`); the least recently used is closed past it. @default 100 */
  maxConnections?: number;
  /** `clientInfo` sent to the upstream. @default { name: 'nestjs-model-context-client', version: '1' } */
  clientInfo?: { name: string; version: string; [key: string]: unknown };
  /** Capabilities declared to the upstream. @default {} */
  capabilities?: JsonObject;
}

/** Options of `McpClientModule.forRoot()`. @publicApi */
export interface McpClientModuleOptions {
  clients: McpClientOptions[];
  /** Register the module globally. @default false */
  isGlobal?: boolean;
}

/** Options of `McpClientModule.forRootAsync()`. @publicApi */
export interface McpClientModuleAsyncOptions {
  /** The client names, known when the module is defined so that `@InjectMcpClient(name)` resolves. */
  names: string[];
  imports?: any[];
  inject?: any[];
  useFactory: (
    ...args: any[]
  ) => Promise<Omit<McpClientModuleOptions, 'isGlobal'>> | Omit<McpClientModuleOptions, 'isGlobal'>;
  isGlobal?: boolean;
}

/**
 * Tool types an app gives a client, so that calls are checked at compile time:
 * `McpClient<{ get_weather: { args: { city: string }; result: { celsius: number } } }>`.
 *
 * @publicApi
 */
export type McpToolTypes = Record<string, { args: JsonObject; result?: JsonObject }>;

/** A tool result whose `structuredContent` has the type the app gave. @publicApi */
export interface McpTypedToolResult<R> extends CallToolResult {
  structuredContent?: R;
}

/** Options of one call. @publicApi */
export interface McpClientCallOptions {
  /** Aborts the call; the upstream gets `notifications/cancelled`. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Who the call is for (required by `pass-through` and `token-exchange` clients). */
  caller?: McpClientCaller;
  /** `notifications/progress` of the call. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** Extra `_meta` sent with the request. */
  meta?: JsonObject;
  /**
   * Answers the upstream's `elicitation/create` during this call (the client must declare the
   * `elicitation` capability in its options). Without it, such a request is refused.
   */
  onElicit?: (params: JsonObject) => Promise<JsonObject>;
  /** Answers the upstream's `sampling/createMessage` during this call (declare `sampling`). */
  onSample?: (params: JsonObject) => Promise<JsonObject>;
}

/** One page of a list method. @publicApi */
export interface McpClientPage<T> {
  items: T[];
  nextCursor?: string;
}
