import type * as OtelApi from '@opentelemetry/api';
import { declaredMethod } from '../protocol/methods.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { ResolvedMcpTelemetry } from './options.js';
import {
  isToolError,
  shownSessionId,
  type McpLateFacts,
  type McpObservedRequest,
  type McpObserverSink,
  type McpRequestProbe,
  type McpSessionEndFacts,
  type McpSessionFacts,
} from './observer.js';

type Api = typeof OtelApi;

/** The conventions' bucket boundaries (seconds) for `mcp.server.*.duration`. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

const MISSING_API = (detail: string) =>
  `McpModule's telemetry is enabled, but @opentelemetry/api could not be loaded (${detail}). Install it with \`npm install @opentelemetry/api\`, or leave telemetry unset to trace only when it is installed.`;

/**
 * Loads `@opentelemetry/api` once, at bootstrap. Absent, telemetry is off (or, when it was
 * asked for explicitly, the bootstrap fails naming the package).
 */
export async function loadOpenTelemetry(options: ResolvedMcpTelemetry): Promise<McpObserverSink | undefined> {
  if (options.enabled === false) return undefined;
  let api: Api;
  try {
    api = (await import('@opentelemetry/api')) as Api;
  } catch (error) {
    if (options.enabled === true) throw new Error(MISSING_API(error instanceof Error ? error.message : String(error)));
    return undefined;
  }
  return new McpOpenTelemetry(api, options);
}

/** Reads W3C trace context from `params._meta` (string values only: it is client JSON). */
const metaGetter: OtelApi.TextMapGetter<JsonObject> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = Object.hasOwn(carrier, key) ? carrier[key] : undefined;
    return typeof value === 'string' ? value : undefined;
  },
};

type Headers = Record<string, string | string[] | undefined>;
const headerGetter: OtelApi.TextMapGetter<Headers> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

function headersOf(transportRequest: unknown): Headers | undefined {
  const headers = (transportRequest as { headers?: unknown } | undefined)?.headers;
  return typeof headers === 'object' && headers !== null ? (headers as Headers) : undefined;
}

/**
 * Traces and metrics per the OpenTelemetry semantic conventions for MCP: one SERVER span per
 * request, `mcp.server.operation.duration` and `mcp.server.session.duration`, plus the requests
 * in flight and the sessions open here. Until the app registers an SDK the api hands out
 * non-recording spans and no-op instruments, and the attribute work is skipped.
 */
class McpOpenTelemetry implements McpObserverSink {
  private readonly tracer: OtelApi.Tracer;
  private meterProvider?: OtelApi.MeterProvider;
  /** False while the registered meter provider is the api's no-op one. */
  private metricsLive = false;
  private readonly noopMeter: new (...args: never[]) => unknown;
  private instruments!: {
    operation: OtelApi.Histogram;
    session: OtelApi.Histogram;
    inflight: OtelApi.UpDownCounter;
    sessions: OtelApi.UpDownCounter;
  };

  constructor(
    private readonly api: Api,
    private readonly options: ResolvedMcpTelemetry,
  ) {
    // A ProxyTracer: an SDK registered after bootstrap still receives the spans.
    this.tracer = api.trace.getTracer(options.tracerName, options.tracerVersion);
    this.noopMeter = api.createNoopMeter().constructor as McpOpenTelemetry['noopMeter'];
  }

  /** True once an SDK registered a tracer provider (the api's global one is a proxy until then). */
  private hasTracer(): boolean {
    const provider = this.api.trace.getTracerProvider() as OtelApi.TracerProvider & {
      getDelegateTracer?(name: string, version?: string): OtelApi.Tracer | undefined;
    };
    return (
      provider.getDelegateTracer === undefined ||
      provider.getDelegateTracer(this.options.tracerName, this.options.tracerVersion) !== undefined
    );
  }

  /** The api's meters are not proxies: instruments follow the provider registered now. */
  private meters(): McpOpenTelemetry['instruments'] {
    const provider = this.api.metrics.getMeterProvider();
    if (provider !== this.meterProvider) {
      this.meterProvider = provider;
      const meter = provider.getMeter(this.options.tracerName, this.options.tracerVersion);
      this.metricsLive = !(meter instanceof this.noopMeter);
      const advice = { explicitBucketBoundaries: DURATION_BUCKETS };
      this.instruments = {
        operation: meter.createHistogram('mcp.server.operation.duration', {
          unit: 's',
          description:
            'MCP request duration as observed on the receiver from the time it was received until the result is sent.',
          advice,
        }),
        session: meter.createHistogram('mcp.server.session.duration', {
          unit: 's',
          description: 'The duration of the MCP session as observed on the MCP server.',
          advice,
        }),
        inflight: meter.createUpDownCounter('mcp.server.operation.active', {
          unit: '{request}',
          description: 'MCP requests in flight on this server.',
        }),
        sessions: meter.createUpDownCounter('mcp.server.session.active', {
          unit: '{session}',
          description: 'Legacy MCP sessions open on this server.',
        }),
      };
    }
    return this.instruments;
  }

  request(facts: McpObservedRequest): McpRequestProbe | undefined {
    const api = this.api;
    const instruments = this.meters();
    // No SDK registered: the global tracer provider has no delegate and the meters are no-ops, so
    // there is nothing to trace or count, and the request costs these two lookups.
    if (!this.metricsLive && !this.hasTracer()) return undefined;
    const { request } = facts;
    const params = request.params;
    const active = api.context.active();
    let parent = active;
    let links: OtelApi.Link[] | undefined;
    const meta = params?._meta;
    // The conventions' order: the client's context from params._meta, the transport's as a link.
    if (
      typeof meta === 'object' &&
      meta !== null &&
      !Array.isArray(meta) &&
      typeof (meta as JsonObject).traceparent === 'string'
    ) {
      const extracted = api.propagation.extract(api.ROOT_CONTEXT, meta as JsonObject, metaGetter);
      if (api.trace.getSpanContext(extracted)) {
        parent = extracted;
        const ambient = api.trace.getSpanContext(active);
        if (ambient && api.isSpanContextValid(ambient)) links = [{ context: ambient }];
      }
    } else {
      const headers = headersOf(facts.transportRequest);
      if (headers?.traceparent !== undefined && !api.trace.getSpanContext(active))
        parent = api.propagation.extract(active, headers, headerGetter);
    }
    // Labels, not what the client sent: a made-up method, tool or URI is `_unknown`.
    const { method, target } = facts;
    const name = target.tool ?? target.prompt;
    const span = this.tracer.startSpan(
      name === undefined ? method : `${method} ${name}`,
      { kind: api.SpanKind.SERVER, links },
      parent,
    );
    const recording = span.isRecording();
    // No SDK: the api's no-op tracer hands out the invalid span context and its meters do nothing,
    // so there is nothing to record, enter or end.
    const traced =
      recording || (span.spanContext() !== api.INVALID_SPAN_CONTEXT && api.isSpanContextValid(span.spanContext()));
    if (!traced && !this.metricsLive) return undefined;
    const operation = declaredMethod(method)?.operation;
    if (recording) {
      span.setAttribute('mcp.method.name', method);
      span.setAttribute('jsonrpc.request.id', String(facts.requestId));
      if (facts.protocolVersion) span.setAttribute('mcp.protocol.version', facts.protocolVersion);
      const sessionId = shownSessionId(this.options.sessionIds, facts.sessionId, facts.sessionRef);
      if (sessionId !== undefined) span.setAttribute('mcp.session.id', sessionId);
      if (operation !== undefined) span.setAttribute('gen_ai.operation.name', operation);
      if (target.tool !== undefined) span.setAttribute('gen_ai.tool.name', target.tool);
      if (target.prompt !== undefined) span.setAttribute('gen_ai.prompt.name', target.prompt);
      if (target.resource !== undefined) span.setAttribute('mcp.resource.uri', target.resource);
    }
    const spanContext = traced ? api.trace.setSpan(parent, span) : undefined;
    const metricsLive = this.metricsLive;
    // No attributes: the SDK hashes every attribute set on each add, twice per call here.
    if (metricsLive) instruments.inflight.add(1);
    const started = metricsLive ? performance.now() : 0;
    let ended = false;
    let protocolVersion = facts.protocolVersion;
    return {
      // Handlers run inside the span's context, so spans they start (a database client, an HTTP
      // call) are its children. Without a valid span there is no context worth entering.
      run: spanContext ? (fn) => api.context.with(spanContext, fn) : undefined,
      message: recording ? (message) => span.addEvent(messageName(message), messageAttributes(message)) : undefined,
      end: (response, late) => {
        if (ended) return;
        ended = true;
        if (late?.protocolVersion) protocolVersion = late.protocolVersion;
        const errorType = errorTypeOf(response);
        if (!metricsLive) {
          if (recording) finishSpan(span, api, response, errorType, late, this.options.sessionIds);
          span.end();
          return;
        }
        const attributes: OtelApi.Attributes = { 'mcp.method.name': method };
        if (protocolVersion) attributes['mcp.protocol.version'] = protocolVersion;
        if (target.tool !== undefined) attributes['gen_ai.tool.name'] = target.tool;
        if (target.prompt !== undefined) attributes['gen_ai.prompt.name'] = target.prompt;
        if (operation !== undefined) attributes['gen_ai.operation.name'] = operation;
        if (errorType !== undefined) {
          attributes['error.type'] = errorType;
          const code = response && 'error' in response ? String(response.error.code) : undefined;
          if (code !== undefined) attributes['rpc.response.status_code'] = code;
        }
        if (recording) finishSpan(span, api, response, errorType, late, this.options.sessionIds);
        span.end();
        instruments.inflight.add(-1);
        instruments.operation.record((performance.now() - started) / 1000, attributes);
      },
    };
  }

  sessionOpened(facts: McpSessionFacts): void {
    this.meters().sessions.add(1, { 'mcp.protocol.version': facts.protocolVersion });
  }

  sessionClosed(facts: McpSessionEndFacts): void {
    // Only sessions opened here were counted here.
    if (facts.durationMs === undefined) return;
    const instruments = this.meters();
    instruments.sessions.add(-1, { 'mcp.protocol.version': facts.protocolVersion });
    instruments.session.record(facts.durationMs / 1000, { 'mcp.protocol.version': facts.protocolVersion });
  }
}

/** The attributes only the answer knows, and the error status. */
function finishSpan(
  span: OtelApi.Span,
  api: Api,
  response: JsonRpcMessage | undefined,
  errorType: string | undefined,
  late: McpLateFacts | undefined,
  sessionIds: ResolvedMcpTelemetry['sessionIds'],
): void {
  if (late?.protocolVersion) span.setAttribute('mcp.protocol.version', late.protocolVersion);
  const sessionId = shownSessionId(sessionIds, late?.sessionId, late?.sessionRef);
  if (sessionId !== undefined) span.setAttribute('mcp.session.id', sessionId);
  if (errorType === undefined) return;
  span.setAttribute('error.type', errorType);
  if (response && 'error' in response) span.setAttribute('rpc.response.status_code', String(response.error.code));
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorMessageOf(response, errorType) });
}

/**
 * The conventions' `error.type`: the JSON-RPC error code, `tool_error` for a tool result with
 * `isError`, and `cancelled` for a call that ended without a response.
 */
function errorTypeOf(response: JsonRpcMessage | undefined): string | undefined {
  if (response === undefined) return 'cancelled';
  if ('error' in response) return String(response.error.code);
  return isToolError(response) ? 'tool_error' : undefined;
}

function errorMessageOf(response: JsonRpcMessage | undefined, errorType: string): string {
  if (response && 'error' in response) return response.error.message;
  return errorType === 'cancelled'
    ? 'The request was cancelled before its response.'
    : 'The tool returned a result with isError: true.';
}

function messageName(message: JsonRpcMessage): string {
  return 'method' in message ? message.method : 'message';
}

/** Progress and log notifications as span events: their counters and level, never their data. */
function messageAttributes(message: JsonRpcMessage): OtelApi.Attributes {
  const params = ('params' in message ? message.params : undefined) ?? {};
  const attributes: OtelApi.Attributes = {};
  if (typeof params.progress === 'number') attributes['mcp.progress'] = params.progress;
  if (typeof params.total === 'number') attributes['mcp.progress.total'] = params.total;
  if (typeof params.level === 'string') attributes['mcp.log.level'] = params.level;
  if (typeof params.logger === 'string') attributes['mcp.log.logger'] = params.logger;
  if ('id' in message) attributes['jsonrpc.request.id'] = String(message.id);
  return attributes;
}
