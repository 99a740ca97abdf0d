import type { Client as SdkClient } from '@modelcontextprotocol/client';
import type { CallToolResult, JsonObject, ToolDescriptor } from '../protocol/mcp-types.js';
import type { GetPromptResult, PromptDescriptor } from '../protocol/prompt-messages.js';
import type { ReadResourceResult } from '../protocol/resource-contents.js';
import type { ResourceDescriptor, ResourceTemplateDescriptor } from '../protocol/resource-contents.js';
import { abortable, disposeConnection, openConnection, type Connection } from './mcp-client.connection.js';
import { McpClientCredentials } from './mcp-client.credentials.js';
import { McpClientError } from './mcp-client.error.js';
import { classifyFailure } from './mcp-client.failure.js';
import { mcpCallScope, type McpCallScope } from './mcp-client.http.js';
import type {
  McpClientCallOptions,
  McpClientCaller,
  McpClientOptions,
  McpClientPage,
  McpToolTypes,
  McpTypedToolResult,
} from './mcp-client.interfaces.js';
import { ABORTED, AUTH_NEEDS_HTTP, CLOSED_CLIENT, TOO_LARGE } from './mcp-client.messages.js';
import { SAFE_METHODS, backoff } from './mcp-client.retry.js';
import { loadSdk, type McpSdk } from './sdk-loader.js';
import { loadTraceApi, traceMeta } from './trace-context.js';

const DEFAULTS = {
  timeoutMs: 60_000,
  connectTimeoutMs: 15_000,
  maxResponseBytes: 8 * 1024 * 1024,
  maxConnections: 100,
  retry: { attempts: 2, baseDelayMs: 100, maxDelayMs: 2_000, toolCalls: false },
};

/** What the upstream said about itself when the client connected. @publicApi */
export interface McpUpstreamInfo {
  serverInfo?: { name: string; version: string; [key: string]: unknown };
  capabilities?: JsonObject;
  /** The negotiated protocol version, e.g. `2026-07-28` or `2025-11-25`. */
  protocolVersion?: string;
  /** `modern` (2026-07-28, no session) or `legacy` (an `initialize` session). */
  era?: 'modern' | 'legacy';
}

/**
 * A client of one upstream MCP server, injected with `@InjectMcpClient(name)`. It connects on the
 * first call, keeps the connection for the next ones (one per caller when the upstream gets the
 * caller's identity), reconnects after the upstream went away, and retries transport failures
 * with backoff. The protocol itself is the official `@modelcontextprotocol/client`.
 *
 * Give the tool types to have calls checked:
 * @example
 * ```ts
 * type Weather = { get_weather: { args: { city: string }; result: { celsius: number } } };
 * constructor(@InjectMcpClient('weather') private readonly weather: McpClient<Weather>) {}
 * const { structuredContent } = await this.weather.callTool('get_weather', { city: 'Oslo' }, { signal });
 * ```
 * @publicApi
 */
export class McpClient<Tools extends McpToolTypes = McpToolTypes> {
  /** The configured name of the upstream. */
  readonly name: string;

  private readonly credentials: McpClientCredentials;
  private readonly connections = new Map<string, Connection>();
  private readonly retry: Required<Exclude<McpClientOptions['retry'], false | undefined>>;
  private readonly listListeners = new Set<(list: 'tools' | 'prompts' | 'resources') => void>();
  private closed = false;

  constructor(private readonly options: McpClientOptions) {
    this.name = options.name;
    if (options.auth && options.transport.type !== 'http')
      throw new McpClientError('config', this.name, AUTH_NEEDS_HTTP(this.name));
    this.retry = options.retry === false ? { ...DEFAULTS.retry, attempts: 0 } : { ...DEFAULTS.retry, ...options.retry };
    this.credentials = new McpClientCredentials(
      this.name,
      options.headers ?? {},
      options.auth,
      this.maxConnections,
      this.connectTimeoutMs,
    );
  }

  /** Calls a tool. A tool's own failure is an `isError: true` result; everything else throws an {@link McpClientError}. */
  async callTool<Name extends keyof Tools & string>(
    name: Name,
    args: Tools[Name]['args'],
    options: McpClientCallOptions = {},
  ): Promise<McpTypedToolResult<Tools[Name]['result']>> {
    return this.run('tools/call', options, (client, request) =>
      client.callTool({ name, arguments: args as JsonObject, _meta: request.meta }, request.sdk),
    ) as Promise<McpTypedToolResult<Tools[Name]['result']>>;
  }

  /** Every tool, following `nextCursor` (at most 64 pages). */
  async listTools(options: McpClientCallOptions = {}): Promise<ToolDescriptor[]> {
    return ((
      await this.run('tools/list', options, (client, request) =>
        client.listTools({ _meta: request.meta }, { ...request.sdk, cacheMode: 'bypass' }),
      )
    ).tools ?? []) as ToolDescriptor[];
  }

  /** One page of `tools/list`. */
  async listToolsPage(cursor?: string, options: McpClientCallOptions = {}): Promise<McpClientPage<ToolDescriptor>> {
    return page(
      await this.run('tools/list', options, (client, request) =>
        client.listTools({ cursor, _meta: request.meta }, request.sdk),
      ),
      'tools',
    );
  }

  /** Every resource, following `nextCursor`. */
  async listResources(options: McpClientCallOptions = {}): Promise<ResourceDescriptor[]> {
    return ((
      await this.run('resources/list', options, (client, request) =>
        client.listResources({ _meta: request.meta }, { ...request.sdk, cacheMode: 'bypass' }),
      )
    ).resources ?? []) as ResourceDescriptor[];
  }

  /** One page of `resources/list`. */
  async listResourcesPage(
    cursor?: string,
    options: McpClientCallOptions = {},
  ): Promise<McpClientPage<ResourceDescriptor>> {
    return page(
      await this.run('resources/list', options, (client, request) =>
        client.listResources({ cursor, _meta: request.meta }, request.sdk),
      ),
      'resources',
    );
  }

  /** Every resource template, following `nextCursor`. */
  async listResourceTemplates(options: McpClientCallOptions = {}): Promise<ResourceTemplateDescriptor[]> {
    return ((
      await this.run('resources/templates/list', options, (client, request) =>
        client.listResourceTemplates({ _meta: request.meta }, { ...request.sdk, cacheMode: 'bypass' }),
      )
    ).resourceTemplates ?? []) as ResourceTemplateDescriptor[];
  }

  /** Reads a resource. */
  async readResource(uri: string, options: McpClientCallOptions = {}): Promise<ReadResourceResult> {
    return (await this.run('resources/read', options, (client, request) =>
      client.readResource({ uri, _meta: request.meta }, { ...request.sdk, cacheMode: 'bypass' }),
    )) as unknown as ReadResourceResult;
  }

  /** Every prompt, following `nextCursor`. */
  async listPrompts(options: McpClientCallOptions = {}): Promise<PromptDescriptor[]> {
    return ((
      await this.run('prompts/list', options, (client, request) =>
        client.listPrompts({ _meta: request.meta }, { ...request.sdk, cacheMode: 'bypass' }),
      )
    ).prompts ?? []) as PromptDescriptor[];
  }

  /** Gets a prompt; arguments are strings, as the protocol sends them. */
  async getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: McpClientCallOptions = {},
  ): Promise<GetPromptResult> {
    return (await this.run('prompts/get', options, (client, request) =>
      client.getPrompt({ name, arguments: args, _meta: request.meta }, request.sdk),
    )) as unknown as GetPromptResult;
  }

  /** Checks the upstream answers: `ping` on a legacy session, `server/discover` on 2026-07-28 (which has no ping). */
  async ping(options: McpClientCallOptions = {}): Promise<void> {
    await this.run('ping', options, (client, request) =>
      client.getProtocolEra() === 'modern' ? client.discover(request.sdk) : client.ping(request.sdk),
    );
  }

  /** What the upstream said about itself; connects first if needed. */
  async info(options: Pick<McpClientCallOptions, 'caller' | 'signal'> = {}): Promise<McpUpstreamInfo> {
    const connection = await this.connection(options.caller, 'connect');
    const client = connection.client;
    return {
      serverInfo: client.getServerVersion() as McpUpstreamInfo['serverInfo'],
      capabilities: client.getServerCapabilities() as JsonObject | undefined,
      protocolVersion: client.getNegotiatedProtocolVersion(),
      era: client.getProtocolEra() as McpUpstreamInfo['era'],
    };
  }

  /**
   * Calls `listener` when the upstream says a list changed (`notifications/…/list_changed` on a
   * session, a `subscriptions/listen` stream on 2026-07-28), on connections opened after it was
   * registered. Returns the function that stops it.
   */
  onListChanged(listener: (list: 'tools' | 'prompts' | 'resources') => void): () => void {
    this.listListeners.add(listener);
    return () => this.listListeners.delete(listener);
  }

  /** Open connections (one shared, or one per recent caller). */
  get openConnections(): number {
    return [...this.connections.values()].filter((c) => !c.broken).length;
  }

  /** Closes every connection (a stdio upstream's child process ends). Called at application shutdown. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((connection) => disposeConnection(connection)));
  }

  private get maxConnections(): number {
    return this.options.maxConnections ?? DEFAULTS.maxConnections;
  }

  private get connectTimeoutMs(): number {
    return this.options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
  }

  private timeoutMs(options: McpClientCallOptions): number {
    return options.timeoutMs ?? this.options.timeoutMs ?? DEFAULTS.timeoutMs;
  }

  private get maxResponseBytes(): number {
    return this.options.maxResponseBytes ?? DEFAULTS.maxResponseBytes;
  }

  /** One call with retries: each attempt on a live connection, a broken one replaced. */
  private async run<R>(
    method: string,
    options: McpClientCallOptions,
    call: (client: SdkClient, request: { meta?: JsonObject; sdk: Record<string, any> }) => Promise<R>,
  ): Promise<R> {
    if (this.closed) throw new McpClientError('config', this.name, CLOSED_CLIENT(this.name));
    this.credentials.check(options.caller);
    await loadTraceApi();
    const meta = { ...traceMeta(), ...options.meta };
    for (let attempt = 0; ; attempt++) {
      let connection: Connection | undefined;
      let sent = false;
      try {
        connection = await this.connection(options.caller, method, options.signal);
        sent = true;
        return await this.once(connection, method, options, Object.keys(meta).length ? meta : undefined, call);
      } catch (error) {
        const failure = classifyFailure(
          error,
          { client: this.name, method, signal: options.signal, timeoutMs: this.timeoutMs(options), sdk: loadedSdk },
          connection,
        );
        if (failure.kind === 'transport' && connection) connection.broken = true;
        // A lost session means the request was never run: it is resent once on a new session, whatever the retry budget.
        if (failure.kind === 'transport' && failure.code === 404 && attempt === 0 && !options.signal?.aborted) continue;
        const retryable = failure.kind === 'transport' && (!sent || SAFE_METHODS.has(method) || this.retry.toolCalls);
        if (!retryable || attempt >= this.retry.attempts || options.signal?.aborted) throw failure;
        await backoff(attempt, this.retry, options.signal);
      }
    }
  }

  private async once<R>(
    connection: Connection,
    method: string,
    options: McpClientCallOptions,
    meta: JsonObject | undefined,
    call: (client: SdkClient, request: { meta?: JsonObject; sdk: Record<string, any> }) => Promise<R>,
  ): Promise<R> {
    const timeoutMs = this.timeoutMs(options);
    const stop = new AbortController();
    let failure: Error | undefined;
    const fail = (error: Error): void => {
      if (stop.signal.aborted) return;
      failure = error;
      stop.abort(error);
    };
    connection.calls.add(fail);
    const onAbort = (): void => stop.abort(options.signal!.reason);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    connection.inflight++;
    if (options.caller) connection.caller = options.caller;
    try {
      const sdk: Record<string, any> = { signal: stop.signal, timeout: timeoutMs, maxTotalTimeout: timeoutMs };
      if (options.onProgress) {
        sdk.onprogress = options.onProgress;
        sdk.resetTimeoutOnProgress = true;
      }
      const scope: McpCallScope = { fail, elicit: options.onElicit, sample: options.onSample };
      if (scope.elicit || scope.sample) connection.relays.add(scope);
      try {
        return await mcpCallScope.run(scope, () => call(connection.client, { meta, sdk }));
      } finally {
        connection.relays.delete(scope);
      }
    } catch (error) {
      if (failure) {
        if (failure instanceof McpClientError && failure.kind === 'transport') connection.broken = true;
        throw failure;
      }
      const overflow = connection.lastError && /buffer|exceed/i.test(connection.lastError.message);
      if (overflow)
        throw new McpClientError(
          'bound',
          this.name,
          TOO_LARGE(this.name, method, this.maxResponseBytes),
          undefined,
          undefined,
          { cause: connection.lastError },
        );
      throw error;
    } finally {
      connection.inflight--;
      connection.calls.delete(fail);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The live connection for `caller`, connecting (once, shared by concurrent calls) if needed. */
  private async connection(
    caller: McpClientCaller | undefined,
    method: string,
    signal?: AbortSignal,
  ): Promise<Connection> {
    const key = this.credentials.connectionKey(caller);
    let connection = this.connections.get(key);
    if (connection?.broken) {
      this.connections.delete(key);
      void disposeConnection(connection);
      connection = undefined;
    }
    if (!connection) {
      this.evict();
      const sdk = await loadSdk(this.name);
      loadedSdk = sdk;
      const created = await openConnection(sdk, key, caller, {
        name: this.name,
        options: this.options,
        credentials: this.credentials,
        maxResponseBytes: this.maxResponseBytes,
        connectTimeoutMs: this.connectTimeoutMs,
        listChanged:
          this.listListeners.size > 0 ? (list) => this.listListeners.forEach((listener) => listener(list)) : undefined,
      });
      connection = created;
      this.connections.set(key, created);
      created.ready.catch(() => {
        created.broken = true;
      });
    } else {
      // Most recently used last: eviction takes the first.
      this.connections.delete(key);
      this.connections.set(key, connection);
    }
    if (caller) connection.caller = caller;
    try {
      await abortable(connection.ready, signal);
    } catch (error) {
      if (signal?.aborted)
        throw new McpClientError('aborted', this.name, ABORTED(this.name, method), undefined, undefined, {
          cause: error,
        });
      throw classifyFailure(error, {
        client: this.name,
        method: `${method} (connecting)`,
        timeoutMs: this.timeoutMs({}),
        sdk: loadedSdk,
      });
    }
    return connection;
  }

  private evict(): void {
    if (this.connections.size < this.maxConnections) return;
    for (const [key, connection] of this.connections) {
      if (connection.inflight > 0) continue;
      this.connections.delete(key);
      void disposeConnection(connection);
      return;
    }
    throw new McpClientError(
      'bound',
      this.name,
      `MCP client "${this.name}" has ${this.maxConnections} connections busy (one per caller), its "maxConnections". Raise it if this many callers use the upstream at once.`,
    );
  }
}

let loadedSdk: McpSdk | undefined;

function page<T>(result: Record<string, unknown>, key: string): McpClientPage<T> {
  return {
    items: (result[key] ?? []) as T[],
    ...(typeof result.nextCursor === 'string' ? { nextCursor: result.nextCursor } : {}),
  };
}

export type { CallToolResult };
