/**
 * Independent official MCP clients and raw-wire helpers for e2e tests.
 *
 * Tests drive a real server on a real port with clients we did not write, so a bug shared by our
 * server and a hand-rolled client cannot hide:
 * - {@link connectSdkClient}: `@modelcontextprotocol/sdk` 1.32.2 (`current`, negotiates 2025-11-25)
 *   or the `sdk-legacy` alias 1.12.3 (`legacy`, sends `initialize` with protocolVersion 2025-03-26
 *   and no MCP-Protocol-Version header).
 * - {@link connectModernClient}: the v2 `@modelcontextprotocol/client` 2.4.0 pinned to 2026-07-28
 *   (`server/discover`, per-request `_meta`, never `initialize`).
 * - {@link rpc} / {@link modernRpc}: raw HTTP for asserting status codes, headers and frames.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type ClientCapabilities as SdkClientCapabilities,
  type CreateMessageResult as SdkCreateMessageResult,
  type ElicitResult as SdkElicitResult,
  type ListRootsResult as SdkListRootsResult,
  CreateMessageRequestSchema as SdkCreateMessageRequestSchema,
  ElicitRequestSchema as SdkElicitRequestSchema,
  ListRootsRequestSchema as SdkListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as LegacyClient } from 'sdk-legacy/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from 'sdk-legacy/client/streamableHttp.js';
import {
  type ClientCapabilities as LegacyClientCapabilities,
  type CreateMessageResult as LegacyCreateMessageResult,
  type ListRootsResult as LegacyListRootsResult,
  CreateMessageRequestSchema as LegacyCreateMessageRequestSchema,
  ListRootsRequestSchema as LegacyListRootsRequestSchema,
} from 'sdk-legacy/types.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  type ClientCapabilities as ModernClientCapabilities,
  type CreateMessageResult as ModernCreateMessageResult,
  type ElicitResult as ModernElicitResult,
  type ListRootsResult as ModernListRootsResult,
} from '@modelcontextprotocol/client';
import { readSse, type ReadSseOptions, type SseEvent } from './sse.js';

/** The protocol revision of the stateless (2026) era. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Reserved `_meta` keys of the 2026 per-request envelope. */
export const META_KEYS = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** Client capabilities as plain JSON; each SDK narrows this to its own type. */
export type CapabilitiesJson = Record<string, Record<string, unknown>>;

/** The `params` of an `elicitation/create` request, as the handler sees them. */
export interface ElicitationParams {
  message: string;
  requestedSchema?: Record<string, unknown>;
  mode?: string;
  [key: string]: unknown;
}

/** What an elicitation handler answers. */
export interface ElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
}

/** The `params` of a `sampling/createMessage` request. */
export interface SamplingParams {
  messages: Array<{ role: string; content: unknown }>;
  maxTokens: number;
  [key: string]: unknown;
}

/** What a sampling handler answers. */
export interface SamplingAnswer {
  role: 'assistant';
  content: { type: 'text'; text: string };
  model: string;
  stopReason?: string;
}

/** What a roots handler answers. */
export interface RootsAnswer {
  roots: Array<{ uri: string; name?: string }>;
}

/**
 * Handlers for server→client input. On 2025 connections they answer server requests; on the
 * pinned 2026 client they fulfil `input_required` results (the client retries the call itself).
 * A handler that is given also declares its capability, unless `capabilities` is passed explicitly.
 */
export interface InputHandlers {
  onElicit?: (params: ElicitationParams) => ElicitationAnswer | Promise<ElicitationAnswer>;
  onSample?: (params: SamplingParams) => SamplingAnswer | Promise<SamplingAnswer>;
  onRoots?: () => RootsAnswer | Promise<RootsAnswer>;
}

/** Options shared by the client factories. */
export interface ClientOptionsBase extends InputHandlers {
  /** Extra HTTP headers on every request (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** Exact capabilities to declare; replaces the ones derived from the handlers. */
  capabilities?: CapabilitiesJson;
  /** Defaults to `{ name: 'e2e-<flavour>-client', version: '1.0.0' }`. */
  clientInfo?: { name: string; version: string };
}

/** Options for {@link connectSdkClient}. */
export interface SdkClientOptions extends ClientOptionsBase {
  /** `current` = sdk 1.32.2 (default), `legacy` = sdk 1.12.3 (2025-03-26). */
  version?: 'current' | 'legacy';
  /** The transport's fetch (current SDK only), e.g. {@link watchGetStreams} to see its GET stream open. */
  fetch?: typeof fetch;
}

/** A connected client plus what tests usually assert on. */
export interface ConnectedClient<C, T> {
  client: C;
  transport: T;
  /** The `Mcp-Session-Id` the server issued, if any. */
  sessionId: string | undefined;
  /** The negotiated protocol version. */
  protocolVersion: string | undefined;
  /**
   * Closes the client. By default it first sends `DELETE` for the session (like the conformance
   * harness does); pass `{ terminate: false }` to leave the session alive on the server.
   */
  close(options?: { terminate?: boolean }): Promise<void>;
}

export type CurrentSdkConnection = ConnectedClient<SdkClient, SdkTransport>;
export type LegacySdkConnection = ConnectedClient<LegacyClient, LegacyTransport>;
export type ModernConnection = ConnectedClient<ModernClient, ModernTransport>;

function capabilitiesFor(options: ClientOptionsBase): CapabilitiesJson {
  if (options.capabilities) return options.capabilities;
  const capabilities: CapabilitiesJson = {};
  if (options.onElicit) capabilities.elicitation = {};
  if (options.onSample) capabilities.sampling = {};
  if (options.onRoots) capabilities.roots = {};
  return capabilities;
}

function requestInit(headers: Record<string, string> | undefined): { requestInit?: RequestInit } {
  return headers ? { requestInit: { headers } } : {};
}

async function closeWith(
  terminate: boolean,
  transport: { sessionId?: string; terminateSession(): Promise<void> },
  client: { close(): Promise<void> },
): Promise<void> {
  if (terminate && transport.sessionId !== undefined) {
    // A server may refuse explicit termination (405); the client must still be closed.
    await transport.terminateSession().catch(() => undefined);
  }
  await client.close();
}

/** Connects an `@modelcontextprotocol/sdk` 1.32.2 client (negotiates 2025-11-25). */
export function connectSdkClient(
  url: string,
  options?: SdkClientOptions & { version?: 'current' },
): Promise<CurrentSdkConnection>;
/**
 * Connects the `sdk-legacy` 1.12.3 client. It offers protocolVersion 2025-03-26 in `initialize`,
 * sends no MCP-Protocol-Version header, and has no elicitation support (so `onElicit` throws).
 */
export function connectSdkClient(
  url: string,
  options: SdkClientOptions & { version: 'legacy' },
): Promise<LegacySdkConnection>;
export async function connectSdkClient(
  url: string,
  options: SdkClientOptions = {},
): Promise<CurrentSdkConnection | LegacySdkConnection> {
  const capabilities = capabilitiesFor(options);
  if (options.version === 'legacy') {
    if (options.onElicit) {
      throw new Error(
        'connectSdkClient: the legacy SDK (1.12.3) predates elicitation, so onElicit cannot be registered. ' +
          "Use version: 'current' or connectModernClient for elicitation tests.",
      );
    }
    const client = new LegacyClient(options.clientInfo ?? { name: 'e2e-legacy-client', version: '1.0.0' }, {
      capabilities: capabilities as LegacyClientCapabilities,
    });
    const { onSample, onRoots } = options;
    if (onSample) {
      client.setRequestHandler(
        LegacyCreateMessageRequestSchema,
        async (request) =>
          (await onSample(request.params as unknown as SamplingParams)) as unknown as LegacyCreateMessageResult,
      );
    }
    if (onRoots) {
      client.setRequestHandler(
        LegacyListRootsRequestSchema,
        async () => (await onRoots()) as unknown as LegacyListRootsResult,
      );
    }
    const transport = new LegacyTransport(new URL(url), requestInit(options.headers));
    await client.connect(transport);
    return {
      client,
      transport,
      get sessionId() {
        return transport.sessionId;
      },
      // 1.12.3 offers 2025-03-26; our server echoes a supported requested version.
      protocolVersion: '2025-03-26',
      close: ({ terminate = true } = {}) => closeWith(terminate, transport, client),
    };
  }

  const client = new SdkClient(options.clientInfo ?? { name: 'e2e-sdk-client', version: '1.0.0' }, {
    capabilities: capabilities as SdkClientCapabilities,
  });
  const { onElicit, onSample, onRoots } = options;
  if (onElicit) {
    client.setRequestHandler(
      SdkElicitRequestSchema,
      async (request) => (await onElicit(request.params as unknown as ElicitationParams)) as SdkElicitResult,
    );
  }
  if (onSample) {
    client.setRequestHandler(
      SdkCreateMessageRequestSchema,
      async (request) =>
        (await onSample(request.params as unknown as SamplingParams)) as unknown as SdkCreateMessageResult,
    );
  }
  if (onRoots) {
    client.setRequestHandler(SdkListRootsRequestSchema, async () => (await onRoots()) as unknown as SdkListRootsResult);
  }
  const transport = new SdkTransport(new URL(url), {
    ...requestInit(options.headers),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  await client.connect(transport);
  return {
    client,
    transport,
    get sessionId() {
      return transport.sessionId;
    },
    get protocolVersion() {
      return transport.protocolVersion;
    },
    close: ({ terminate = true } = {}) => closeWith(terminate, transport, client),
  };
}

/** Options for {@link connectModernClient}. */
export interface ModernClientOptions extends ClientOptionsBase {
  /** Rounds of `input_required` auto-fulfilment before the call fails (client default when unset). */
  maxInputRounds?: number;
  /** The transport's fetch (a DPoP-signing fetch, for example). */
  fetch?: typeof fetch;
}

/**
 * Connects a v2 `@modelcontextprotocol/client` pinned to 2026-07-28: the connect probe is
 * `server/discover`, every request carries the `_meta` envelope and the
 * `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers, and there is no fallback to `initialize`.
 * A server that does not offer 2026-07-28 makes this reject.
 */
export async function connectModernClient(url: string, options: ModernClientOptions = {}): Promise<ModernConnection> {
  const client = new ModernClient(options.clientInfo ?? { name: 'e2e-modern-client', version: '1.0.0' }, {
    capabilities: capabilitiesFor(options) as ModernClientCapabilities,
    versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } },
    ...(options.maxInputRounds === undefined ? {} : { inputRequired: { maxRounds: options.maxInputRounds } }),
  });
  const { onElicit, onSample, onRoots } = options;
  if (onElicit) {
    client.setRequestHandler(
      'elicitation/create',
      async (request) =>
        (await onElicit(request.params as unknown as ElicitationParams)) as unknown as ModernElicitResult,
    );
  }
  if (onSample) {
    client.setRequestHandler(
      'sampling/createMessage',
      async (request) =>
        (await onSample(request.params as unknown as SamplingParams)) as unknown as ModernCreateMessageResult,
    );
  }
  if (onRoots) {
    client.setRequestHandler('roots/list', async () => (await onRoots()) as unknown as ModernListRootsResult);
  }
  const transport = new ModernTransport(new URL(url), {
    ...requestInit(options.headers),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  await client.connect(transport);
  const era = client.getProtocolEra();
  const version = client.getNegotiatedProtocolVersion();
  if (era !== 'modern' || version !== MODERN_PROTOCOL_VERSION) {
    await client.close();
    throw new Error(
      `connectModernClient: expected the ${MODERN_PROTOCOL_VERSION} era after connecting to ${url}, ` +
        `got era ${String(era)} / version ${String(version)}. Check that the server lists ` +
        `${MODERN_PROTOCOL_VERSION} in server/discover supportedVersions.`,
    );
  }
  return {
    client,
    transport,
    get sessionId() {
      return transport.sessionId;
    },
    protocolVersion: version,
    close: ({ terminate = true } = {}) => closeWith(terminate, transport, client),
  };
}

/** Builds the `_meta` envelope every 2026 request needs. Keys in `extra` win. */
export function modernMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    [META_KEYS.protocolVersion]: MODERN_PROTOCOL_VERSION,
    [META_KEYS.clientCapabilities]: {},
    ...extra,
  };
}

/**
 * The standard 2026 request headers: `MCP-Protocol-Version`, `Mcp-Method` and, for tools/call,
 * prompts/get and resources/read, `Mcp-Name` (the tool/prompt name or resource URI).
 */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  const headers: Record<string, string> = {
    'MCP-Protocol-Version': MODERN_PROTOCOL_VERSION,
    'Mcp-Method': method,
  };
  if (name !== undefined) headers['Mcp-Name'] = name;
  return headers;
}

/** Options for {@link rpc}. */
export interface RpcOptions extends Omit<ReadSseOptions, 'timeoutMs'> {
  /** Headers to add or override (case-insensitively); `undefined` removes a default header. */
  headers?: Record<string, string | undefined>;
  /** Sent as `Mcp-Session-Id`. */
  sessionId?: string;
  /** Defaults to POST; GET and DELETE send no body. */
  httpMethod?: 'POST' | 'GET' | 'DELETE';
  /**
   * Give up after this long. An SSE body is abandoned and returned with `timedOut: true`; a
   * request that gets no response headers in time rejects. Default 10 000 ms.
   */
  timeoutMs?: number;
  /**
   * For SSE: stop reading once the JSON-RPC response whose id equals the request's id has
   * arrived, instead of waiting for the server to close the stream. Default true.
   */
  stopAtResponse?: boolean;
}

/** What {@link rpc} saw on the wire. */
export interface RpcResult {
  status: number;
  headers: Headers;
  /** The parsed body when the response was not SSE and parsed as JSON. */
  json?: unknown;
  /** The events when the response was `text/event-stream`. */
  events?: SseEvent[];
  /** The raw body text (as far as it was read). */
  text: string;
  /** True when reading an SSE body stopped because `timeoutMs` elapsed. */
  timedOut?: boolean;
}

const DEFAULT_HEADERS: Record<string, string> = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

function mergeHeaders(
  base: Record<string, string>,
  overrides: Record<string, string | undefined> | undefined,
): Record<string, string> {
  const merged: Record<string, string> = { ...base };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    for (const existing of Object.keys(merged)) {
      if (existing.toLowerCase() === key.toLowerCase()) delete merged[existing];
    }
    if (value !== undefined) merged[key] = value;
  }
  return merged;
}

function requestIdOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>).id
    : undefined;
}

function isResponseTo(id: unknown, data: unknown): boolean {
  if (id === undefined || typeof data !== 'object' || data === null) return false;
  const message = data as Record<string, unknown>;
  return message.id === id && ('result' in message || 'error' in message);
}

/**
 * Sends one raw HTTP request to an MCP endpoint. `body` is serialized as JSON unless it is already
 * a string (so malformed JSON can be sent). A `text/event-stream` answer is parsed into events;
 * anything else is parsed as JSON where possible.
 */
export async function rpc(url: string, body: unknown, options: RpcOptions = {}): Promise<RpcResult> {
  const httpMethod = options.httpMethod ?? 'POST';
  const base = httpMethod === 'POST' ? DEFAULT_HEADERS : { Accept: DEFAULT_HEADERS.Accept };
  const headers = mergeHeaders(
    base,
    options.sessionId === undefined ? options.headers : { 'Mcp-Session-Id': options.sessionId, ...options.headers },
  );
  const timeoutMs = options.timeoutMs ?? 60_000;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, {
      method: httpMethod,
      headers,
      body: httpMethod === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
      signal: controller.signal,
    });
  } catch (error) {
    clearTimeout(timer);
    throw new Error(
      `rpc: ${httpMethod} ${url} failed before a response arrived (${error instanceof Error ? error.message : String(error)}). ` +
        'Is the server listening, and did it answer within timeoutMs?',
    );
  }
  clearTimeout(timer);

  const contentType = response.headers.get('content-type') ?? '';
  if (contentType.includes('text/event-stream')) {
    const id = requestIdOf(body);
    const stopAtResponse = options.stopAtResponse ?? true;
    const read = await readSse(response.body, {
      timeoutMs,
      onEvent: options.onEvent,
      until: (event, events) =>
        (stopAtResponse && isResponseTo(id, event.data)) || (options.until?.(event, events) ?? false),
    });
    return {
      status: response.status,
      headers: response.headers,
      events: read.events,
      text: read.text,
      timedOut: read.timedOut,
    };
  }
  const text = await response.text();
  const result: RpcResult = { status: response.status, headers: response.headers, text };
  if (text.trim() !== '') {
    try {
      result.json = JSON.parse(text) as unknown;
    } catch {
      // Not JSON: tests assert on `text`.
    }
  }
  return result;
}

let nextModernId = 1;

/**
 * Sends one 2026-era request: the body gets a fresh id and `params._meta` = {@link modernMeta}
 * merged with any `_meta` given in `params`, and the headers are {@link modernHeaders} (Mcp-Name
 * taken from `params.name` or `params.uri`) merged with `options.headers`.
 */
export function modernRpc(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions & { id?: string | number } = {},
): Promise<RpcResult> {
  const { _meta, ...rest } = params;
  const name =
    method === 'tools/call' || method === 'prompts/get'
      ? params.name
      : method === 'resources/read'
        ? params.uri
        : undefined;
  const body = {
    jsonrpc: '2.0',
    id: options.id ?? nextModernId++,
    method,
    params: { ...rest, _meta: modernMeta((_meta as Record<string, unknown> | undefined) ?? {}) },
  };
  return rpc(url, body, {
    ...options,
    headers: { ...modernHeaders(method, typeof name === 'string' ? name : undefined), ...options.headers },
  });
}
