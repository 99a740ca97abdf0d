import type { Client as SdkClient } from '@modelcontextprotocol/client';
import { InProcessClientTransport } from './in-process-client.transport.js';
import type { McpClientCredentials } from './mcp-client.credentials.js';
import { McpClientError } from './mcp-client.error.js';
import { mcpCallScope, upstreamFetch, type McpCallScope } from './mcp-client.http.js';
import type { McpClientCaller, McpClientOptions } from './mcp-client.interfaces.js';
import { STREAM_LOST, TOO_LARGE } from './mcp-client.messages.js';
import { loadStdioSdk, type McpSdk } from './sdk-loader.js';

/** One connection to the upstream: the official client, its transport, and the calls it carries. */
export interface Connection {
  key: string;
  client: SdkClient;
  ready: Promise<void>;
  /** The latest caller of this connection: its token goes on the next request. */
  caller?: McpClientCaller;
  broken: boolean;
  /** Why the connection broke, as the transport said. */
  lastError?: Error;
  inflight: number;
  /** Ends each call in flight on this connection with an error (the stream it waits on is gone). */
  calls: Set<(error: Error) => void>;
  /** The scopes of the calls in flight that answer upstream requests. */
  relays: Set<McpCallScope>;
}

/** What opening a connection needs of its client. */
export interface ConnectionSettings {
  /** The configured name of the upstream. */
  name: string;
  options: McpClientOptions;
  credentials: McpClientCredentials;
  maxResponseBytes: number;
  connectTimeoutMs: number;
  /** Set when something listens to list changes: the connection then keeps a standing stream. */
  listChanged?: (list: 'tools' | 'prompts' | 'resources') => void;
}

/** Builds the official client for one connection, wires its transport and starts connecting (`ready`). */
export async function openConnection(
  sdk: McpSdk,
  key: string,
  caller: McpClientCaller | undefined,
  settings: ConnectionSettings,
): Promise<Connection> {
  const { name, options, listChanged } = settings;
  const era = options.era ?? 'auto';
  const client = new sdk.Client(options.clientInfo ?? { name: 'nestjs-model-context-client', version: '1' }, {
    capabilities: (options.capabilities ?? {}) as never,
    versionNegotiation: { mode: era === 'auto' ? 'auto' : era === 'legacy' ? 'legacy' : { pin: era } },
    // A standing stream (the GET stream, or subscriptions/listen) only when something listens.
    ...(listChanged
      ? {
          listChanged: {
            tools: { autoRefresh: false, debounceMs: 0, onChanged: () => listChanged('tools') },
            prompts: { autoRefresh: false, debounceMs: 0, onChanged: () => listChanged('prompts') },
            resources: { autoRefresh: false, debounceMs: 0, onChanged: () => listChanged('resources') },
          },
        }
      : {}),
  });
  const connection: Connection = {
    key,
    client,
    ready: Promise.resolve(),
    caller,
    broken: false,
    inflight: 0,
    calls: new Set(),
    relays: new Set(),
  };
  client.onclose = () => {
    connection.broken = true;
  };
  client.onerror = (error: Error) => {
    connection.lastError = error;
    // The SDK gave up resuming a call's stream: the calls waiting on it would wait for their timeout.
    if (/Maximum reconnection attempts|Failed to reconnect/.test(error.message)) {
      connection.broken = true;
      for (const fail of [...connection.calls])
        fail(new McpClientError('transport', name, STREAM_LOST(name, error.message)));
    }
  };
  relayServerRequests(sdk, connection, settings);
  const transport = await transportFor(sdk, connection, settings);
  connection.ready = client.connect(transport as never, { timeout: settings.connectTimeoutMs });
  return connection;
}

/** Closes a connection; a failure to close is of no interest once it is dropped. */
export async function disposeConnection(connection: Connection): Promise<void> {
  connection.broken = true;
  await connection.client.close().catch(() => undefined);
}

/** Waits for `promise`, or rejects with the signal's reason once it fires. */
export function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

async function transportFor(sdk: McpSdk, connection: Connection, settings: ConnectionSettings): Promise<unknown> {
  const { name, maxResponseBytes } = settings;
  const target = settings.options.transport;
  switch (target.type) {
    case 'http':
      return new sdk.StreamableHTTPClientTransport(new URL(target.url), {
        fetch: upstreamFetch(
          () => settings.credentials.headersFor(connection.caller),
          maxResponseBytes,
          () => new McpClientError('bound', name, TOO_LARGE(name, 'a request', maxResponseBytes)),
          (detail) => new McpClientError('transport', name, STREAM_LOST(name, detail)),
        ),
        // A stream the server closes on purpose is resumed (Last-Event-ID); an upstream that is gone fails the call quickly.
        reconnectionOptions: {
          maxRetries: 2,
          initialReconnectionDelay: 100,
          maxReconnectionDelay: 1_000,
          reconnectionDelayGrowFactor: 2,
        },
      });
    case 'stdio': {
      const stdio = await loadStdioSdk(name);
      return new stdio.StdioClientTransport({
        command: target.command,
        args: target.args ?? [],
        env: { ...stdio.getDefaultEnvironment(), ...target.env },
        cwd: target.cwd,
        stderr: target.stderr ?? 'inherit',
        maxBufferSize: maxResponseBytes,
      });
    }
    case 'in-process':
      return new InProcessClientTransport(target.app);
  }
}

/**
 * Server-to-client requests go to the call they belong to: over HTTP they arrive inside its
 * async context (on its stream, or its `input_required` round); over stdio, where nothing ties
 * them to a call, to the one call in flight that answers them, and are refused when it is ambiguous.
 */
function relayServerRequests(sdk: McpSdk, connection: Connection, settings: ConnectionSettings): void {
  const answer =
    (method: string, pick: (scope: McpCallScope) => McpCallScope['elicit']) =>
    async (request: { params?: Record<string, unknown> }) => {
      const own = mcpCallScope.getStore();
      const candidates = own ? [own] : [...connection.relays].filter((scope) => pick(scope));
      const handler = candidates.length === 1 ? pick(candidates[0]!) : undefined;
      if (!handler) {
        throw new sdk.ProtocolError(
          sdk.ProtocolErrorCode.MethodNotFound,
          `${method} from MCP upstream "${settings.name}" has no call to answer it${candidates.length > 1 ? ' (several calls could: run them one at a time)' : ''}.`,
        );
      }
      return (await handler(request.params ?? {})) as never;
    };
  // The official client accepts a handler only for a capability it declares.
  const declared = settings.options.capabilities ?? {};
  if (declared.elicitation)
    connection.client.setRequestHandler(
      'elicitation/create',
      answer('elicitation/create', (scope) => scope.elicit) as never,
    );
  if (declared.sampling)
    connection.client.setRequestHandler(
      'sampling/createMessage',
      answer('sampling/createMessage', (scope) => scope.sample) as never,
    );
}
