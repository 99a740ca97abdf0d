import { createHash, createHmac, randomBytes } from 'node:crypto';
import { declaredMethod, McpMethods } from '../protocol/methods.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../protocol/json-rpc.js';
import type {
  McpCallObserver,
  McpObservedCall,
  McpRequestFacts,
  McpRequestProbe,
  McpSessionFacts,
} from '../protocol/call-facts.js';

type McpObservedSource = Omit<McpRequestFacts, 'request'>;
import { isSupportedLegacyVersion, isSupportedModernVersion, type ProtocolEra } from '../protocol/versions.js';

import type { McpSessionCloseReason } from '../protocol/call-facts.js';

// One reason vocabulary for close hooks, events and spans.
export type { McpSessionCloseReason };

/**
 * The label of a name the server does not have (a made-up tool, method, prompt or URI): every
 * such name shares it, so a client cannot mint metric series, span names or event values.
 */
export const UNKNOWN_LABEL = '_unknown';

/** The tool, prompt or resource a request is about, as labels: names of the server's own. */
export interface McpRequestTarget {
  tool?: string;
  prompt?: string;
  resource?: string;
}

/**
 * A request as sinks see it: the facts, with every client-sent name replaced by the server's own
 * name for it or {@link UNKNOWN_LABEL}, and the session as a keyed hash.
 */
export interface McpObservedRequest extends McpRequestFacts {
  /** The method when the server serves it for the request's era, else `_unknown`. */
  readonly method: string;
  /** A supported version, else `_unknown` (an `initialize` may ask for any string). */
  readonly protocolVersion: string;
  readonly target: McpRequestTarget;
  /** The keyed hash of `sessionId` ({@link McpSessionIds}). */
  readonly sessionRef?: string;
  /** The request's JSON-RPC id as sinks may record it: bounded by {@link shownRequestId}. */
  readonly requestId: string | number;
}

export type {
  McpLateFacts,
  McpObservedCall,
  McpRequestFacts,
  McpRequestProbe,
  McpSessionFacts,
} from '../protocol/call-facts.js';

/** A session's end, with its duration when this process saw it open. */
export interface McpSessionEndFacts extends McpSessionFacts {
  reason: McpSessionCloseReason;
  /** Milliseconds since `initialize`; undefined when the session was opened by another instance. */
  durationMs?: number;
}

/** One consumer of request and session facts (OpenTelemetry, the event source). */
export interface McpObserverSink {
  /** A probe for the request, or undefined when this sink has nothing to do with it. */
  request?(facts: McpObservedRequest): McpRequestProbe | undefined;
  sessionOpened?(facts: McpSessionFacts): void;
  /** `protocolVersion` is empty when the session was opened by another instance. */
  sessionClosed?(facts: McpSessionEndFacts): void;
}

/**
 * The names a server has, for labels: the label of a client-sent name, or undefined when the
 * server has nothing by that name.
 */
export interface McpServerNames {
  /** Whether the server answers `method` on `era`. */
  method(era: ProtocolEra, method: string): boolean;
  tool(name: string): string | undefined;
  /**
   * The tool a `tools/call` of `name` runs in its place, when `name` is no tool of the server's own
   * but one that runs another (progressive disclosure's call tools): that tool's client-sent name,
   * from the call's arguments. Spans and events then name the tool that ran. The packs that add
   * such tools say so; telemetry knows none of them.
   */
  runsTool?(name: string, args: unknown): string | undefined;
  /** A declared prompt's name, or the `<namePrefix>*` of the repository that owns the name. */
  prompt(name: string): string | undefined;
  /** A resource's URI, the URI template a URI matches, or the `<uriPrefix>*` of its repository. */
  resource(uri: string): string | undefined;
}

/**
 * How spans and events carry a legacy session id. `hashed`: a keyed HMAC-SHA-256 of it (128
 * bits, base64url), stable for one secret (`requestState.secret`, shared through Redis with
 * `redis`), which tells sessions apart without handing out what names one. `raw`: the id itself,
 * which on a server without auth is all a reader needs to use the session. `omitted`: none.
 *
 * @publicApi
 */
export type McpSessionIds = 'hashed' | 'raw' | 'omitted';

/**
 * A JSON-RPC id as spans and events record it: the client picks it, of any length, so a string id
 * longer than `max` characters becomes its first `max` characters and a marker with its length and
 * a hash (two long ids stay apart). The one rule for every sink.
 */
export function shownRequestId(id: string | number, max: number): string | number {
  if (typeof id !== 'string' || id.length <= max) return id;
  return `${id.slice(0, max)}…[${id.length} chars, sha256:${createHash('sha256').update(id).digest('hex').slice(0, 16)}]`;
}

/** The session id a sink shows, by its mode. */
export function shownSessionId(
  mode: McpSessionIds,
  sessionId: string | undefined,
  sessionRef: string | undefined,
): string | undefined {
  if (sessionId === undefined || mode === 'omitted') return undefined;
  return mode === 'raw' ? sessionId : sessionRef;
}

/**
 * The observers of one dispatcher: where every request enters and leaves, on every transport. It
 * remembers when sessions opened here (at most `maxTracked`, the session cap) to give their
 * duration when they end. Sinks get labels, never client-sent names (see {@link McpObservedRequest}).
 */
export class McpObservers implements McpCallObserver {
  private readonly opened = new Map<string, { at: number; facts: McpSessionFacts }>();
  private readonly sessionKey: Buffer;
  private lastReport = 0;

  /**
   * @param names the server's names, for labels
   * @param options.secret keys the session-id hash; a random one per process without it
   * @param options.onError where a sink's exception goes (a span processor or exporter that
   *   threw): at most one report per 10 s; the request goes on as if nothing observed it
   */
  constructor(
    private readonly sinks: readonly McpObserverSink[],
    private readonly maxTracked: number,
    private readonly names: McpServerNames,
    private readonly options: { secret?: Buffer; onError?: (error: unknown) => void; maxRequestIdLength?: number } = {},
  ) {
    this.sessionKey = createHmac('sha256', options.secret ?? randomBytes(32))
      .update('nestjs-model-context:session-id-label')
      .digest();
  }

  /** A request that is no call (`initialize`), from its facts. */
  request(facts: McpRequestFacts): McpRequestProbe | undefined {
    return this.observe(facts, facts.request);
  }

  /** A call, from its call object (the request's McpContext): no separate facts are built. */
  call(call: McpObservedCall): McpRequestProbe | undefined {
    return this.observe(call, call.message ?? { jsonrpc: '2.0', id: call.requestId, method: call.method });
  }

  private observe(facts: McpObservedSource, request: JsonRpcRequest): McpRequestProbe | undefined {
    const observed = new ObservedRequest(facts, request, this);
    let first: McpRequestProbe | undefined;
    let more: McpRequestProbe[] | undefined;
    for (const sink of this.sinks) {
      let probe: McpRequestProbe | undefined;
      try {
        probe = sink.request?.(observed);
      } catch (error) {
        this.report(error);
      }
      if (!probe) continue;
      probe = this.guard(probe);
      if (!first) first = probe;
      else (more ??= [first]).push(probe);
    }
    const probe = more ? combine(more) : first;
    if (!probe) return undefined;
    // `initialize` learns its session only at the end: sinks get its hash too.
    // Assigned, not spread with `end` added: that spread costs a microsecond a call on Node 20.
    const labeled: McpRequestProbe = Object.assign({}, probe);
    labeled.end = (response, late) =>
      probe.end(
        response,
        late?.sessionId !== undefined ? { ...late, sessionRef: this.sessionRef(late.sessionId) } : late,
      );
    return labeled;
  }

  sessionOpened(facts: McpSessionFacts): void {
    if (this.opened.size >= this.maxTracked) this.opened.delete(this.opened.keys().next().value!);
    const labeled = { ...facts, sessionRef: this.sessionRef(facts.sessionId) };
    this.opened.set(facts.sessionId, { at: performance.now(), facts: labeled });
    for (const sink of this.sinks) this.safely(() => sink.sessionOpened?.(labeled));
  }

  sessionClosed(sessionId: string, reason: McpSessionCloseReason): void {
    const opened = this.opened.get(sessionId);
    this.opened.delete(sessionId);
    const end: McpSessionEndFacts = opened
      ? { ...opened.facts, reason, durationMs: performance.now() - opened.at }
      : { sessionId, sessionRef: this.sessionRef(sessionId), protocolVersion: '', reason };
    for (const sink of this.sinks) this.safely(() => sink.sessionClosed?.(end));
  }

  /**
   * A probe whose exceptions stay with it: telemetry that throws (a span processor, an exporter,
   * a metric reader) must not end the request it observes, nor leave its response unsent.
   */
  private guard(probe: McpRequestProbe): McpRequestProbe {
    const run = probe.run;
    const message = probe.message;
    const interaction = probe.interaction;
    return {
      run: run
        ? <T>(fn: () => T): T => {
            let entered = false;
            try {
              return run.call(probe, () => ((entered = true), fn())) as T;
            } catch (error) {
              // The handler's own exception, or one after it ran, is the request's to handle.
              if (entered) throw error;
              this.report(error);
              return fn();
            }
          }
        : undefined,
      message: message ? (m) => this.safely(() => message.call(probe, m)) : undefined,
      interaction: interaction
        ? (phase, method, action) => this.safely(() => interaction.call(probe, phase, method, action))
        : undefined,
      end: (response, late) => this.safely(() => probe.end(response, late)),
    };
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.report(error);
    }
  }

  private report(error: unknown): void {
    if (Date.now() - this.lastReport < 10_000) return;
    this.lastReport = Date.now();
    this.options.onError?.(error);
  }

  /** @internal Longest JSON-RPC id sinks record as sent (`limits.observedRequestIdLength`). */
  get maxRequestIdLength(): number {
    return this.options.maxRequestIdLength ?? 128;
  }

  /** @internal The keyed hash of a session id: 22 base64url characters. */
  sessionRef(sessionId: string): string {
    return createHmac('sha256', this.sessionKey).update(sessionId).digest('base64url').slice(0, 22);
  }

  /** @internal */
  labelsOf(era: ProtocolEra, request: JsonRpcRequest): { method: string; target: McpRequestTarget } {
    if (request.method !== 'initialize' && !this.names.method(era, request.method))
      return { method: UNKNOWN_LABEL, target: {} };
    const raw = requestTarget(request);
    const target: McpRequestTarget = {};
    if (raw.tool !== undefined) {
      // A tool of the server's own is itself, even when a pack's tool bears its name (tool sets refuse such names at bootstrap).
      const own = this.names.tool(raw.tool);
      const ran =
        own === undefined && request.method === McpMethods.toolsCall.name
          ? this.names.runsTool?.(raw.tool, request.params?.arguments)
          : undefined;
      target.tool = own ?? (ran !== undefined ? this.names.tool(bounded(ran)) : undefined) ?? UNKNOWN_LABEL;
    }
    if (raw.prompt !== undefined) target.prompt = this.names.prompt(raw.prompt) ?? UNKNOWN_LABEL;
    if (raw.resource !== undefined) target.resource = this.names.resource(raw.resource) ?? UNKNOWN_LABEL;
    return { method: request.method, target };
  }
}

/** The facts with their labels, computed when a sink first asks (most requests have no sink that does). */
class ObservedRequest implements McpObservedRequest {
  private labels?: { method: string; target: McpRequestTarget };
  private ref?: string;

  constructor(
    private readonly facts: McpObservedSource,
    readonly request: JsonRpcRequest,
    private readonly observers: McpObservers,
  ) {}

  get era(): ProtocolEra {
    return this.facts.era;
  }
  get principal(): string | undefined {
    return this.facts.principal;
  }
  get transportRequest(): unknown {
    return this.facts.transportRequest;
  }
  get sessionId(): string | undefined {
    return this.facts.sessionId;
  }
  get sessionRef(): string | undefined {
    if (this.facts.sessionId === undefined) return undefined;
    return (this.ref ??= this.observers.sessionRef(this.facts.sessionId));
  }
  get requestId(): string | number {
    return shownRequestId(this.request.id, this.observers.maxRequestIdLength);
  }
  get protocolVersion(): string {
    const version = this.facts.protocolVersion;
    return version === '' || isSupportedLegacyVersion(version) || isSupportedModernVersion(version)
      ? version
      : UNKNOWN_LABEL;
  }
  get method(): string {
    return (this.labels ??= this.observers.labelsOf(this.facts.era, this.request)).method;
  }
  get target(): McpRequestTarget {
    return (this.labels ??= this.observers.labelsOf(this.facts.era, this.request)).target;
  }
}

function combine(probes: McpRequestProbe[]): McpRequestProbe {
  return {
    run: <T>(fn: () => T): T =>
      probes.reduceRight<() => T>((inner, probe) => (probe.run ? () => probe.run!(inner) : inner), fn)(),
    message: (message) => probes.forEach((probe) => probe.message?.(message)),
    interaction: (phase, method, action) => probes.forEach((probe) => probe.interaction?.(phase, method, action)),
    end: (response, late) => probes.forEach((probe) => probe.end(response, late)),
  };
}

/** What a request is about, as the client named it: the tool, prompt or resource its params name (bounded). */
export function requestTarget(request: JsonRpcRequest): McpRequestTarget {
  const params: JsonObject = request.params ?? {};
  const target = declaredMethod(request.method)?.target;
  const value = target ? params[target.param] : undefined;
  if (typeof value !== 'string') return {};
  return { [target!.kind]: bounded(value, target!.kind === 'resource' ? 2048 : 128) };
}

/** Caps client-sent names before they are looked up. */
function bounded(text: string, max = 128): string {
  return text.length > max ? text.slice(0, max) : text;
}

/** The `result.isError` of a tool result. */
export function isToolError(response: JsonRpcMessage): boolean {
  const result = (response as { result?: { isError?: unknown } }).result;
  return typeof result === 'object' && result !== null && result.isError === true;
}
