import type { JsonObject } from '../protocol/mcp-types.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../protocol/json-rpc.js';
import type { ProtocolEra } from '../protocol/versions.js';

import type { McpSessionCloseReason } from '../engine/session-hooks.js';

// One reason vocabulary for close hooks, events and spans.
export type { McpSessionCloseReason };

/** What an observer is told of one request as it enters the dispatcher (or the engine, for `initialize`). */
export interface McpRequestFacts {
  request: JsonRpcRequest;
  era: ProtocolEra;
  /** The request's protocol version; for `initialize`, the version the client asked for. */
  protocolVersion: string;
  sessionId?: string;
  principal?: string;
  /** The transport's request (an HTTP request over HTTP): where HTTP trace headers are read. */
  transportRequest?: unknown;
}

/** One request under observation, from its start to its response (or cancellation). */
export interface McpRequestProbe {
  /** Runs the request's handler, e.g. inside the request's trace context. */
  run?<T>(fn: () => T): T;
  /** A message the request sent before its response: progress, logs, server-to-client requests. */
  message?(message: JsonRpcMessage): void;
  /** A server-to-client round trip of the call (elicitation, sampling, roots): asked, then answered. */
  interaction?(phase: 'requested' | 'answered', method: string, action?: string): void;
  /**
   * The response, or undefined when the call was cancelled before it. `late` carries what only the
   * answer knows (`initialize`'s negotiated version and new session).
   */
  end(response: JsonRpcMessage | undefined, late?: { protocolVersion?: string; sessionId?: string }): void;
}

/** A legacy session as observers see it. */
export interface McpSessionFacts {
  sessionId: string;
  protocolVersion: string;
  principal?: string;
  clientInfo?: { name?: string; version?: string };
}

/** A session's end, with its duration when this process saw it open. */
export interface McpSessionEndFacts extends McpSessionFacts {
  reason: McpSessionCloseReason;
  /** Milliseconds since `initialize`; undefined when the session was opened by another instance. */
  durationMs?: number;
}

/** One consumer of request and session facts (OpenTelemetry, the event source). */
export interface McpObserverSink {
  /** A probe for the request, or undefined when this sink has nothing to do with it. */
  request?(facts: McpRequestFacts): McpRequestProbe | undefined;
  sessionOpened?(facts: McpSessionFacts): void;
  /** `protocolVersion` is empty when the session was opened by another instance. */
  sessionClosed?(facts: McpSessionEndFacts): void;
}

/**
 * The observers of one dispatcher: where every request enters and leaves, on every transport. It
 * remembers when sessions opened here (at most `maxTracked`, the session cap) to give their
 * duration when they end.
 */
export class McpObservers {
  private readonly opened = new Map<string, { at: number; facts: McpSessionFacts }>();

  constructor(
    private readonly sinks: readonly McpObserverSink[],
    private readonly maxTracked: number,
  ) {}

  request(facts: McpRequestFacts): McpRequestProbe | undefined {
    let first: McpRequestProbe | undefined;
    let more: McpRequestProbe[] | undefined;
    for (const sink of this.sinks) {
      const probe = sink.request?.(facts);
      if (!probe) continue;
      if (!first) first = probe;
      else (more ??= [first]).push(probe);
    }
    return more ? combine(more) : first;
  }

  sessionOpened(facts: McpSessionFacts): void {
    if (this.opened.size >= this.maxTracked) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(facts.sessionId, { at: performance.now(), facts });
    for (const sink of this.sinks) sink.sessionOpened?.(facts);
  }

  sessionClosed(sessionId: string, reason: McpSessionCloseReason): void {
    const opened = this.opened.get(sessionId);
    this.opened.delete(sessionId);
    const end: McpSessionEndFacts = opened
      ? { ...opened.facts, reason, durationMs: performance.now() - opened.at }
      : { sessionId, protocolVersion: '', reason };
    for (const sink of this.sinks) sink.sessionClosed?.(end);
  }
}

function combine(probes: McpRequestProbe[]): McpRequestProbe {
  return {
    run: <T>(fn: () => T): T => probes.reduceRight<() => T>((inner, probe) => (probe.run ? () => probe.run!(inner) : inner), fn)(),
    message: (message) => probes.forEach((probe) => probe.message?.(message)),
    interaction: (phase, method, action) => probes.forEach((probe) => probe.interaction?.(phase, method, action)),
    end: (response, late) => probes.forEach((probe) => probe.end(response, late)),
  };
}

/** What a request is about: the tool, prompt or resource its params name (bounded, for labels). */
export function requestTarget(request: JsonRpcRequest): { tool?: string; prompt?: string; resource?: string } {
  const params: JsonObject = request.params ?? {};
  switch (request.method) {
    case 'tools/call':
      return typeof params.name === 'string' ? { tool: bounded(params.name) } : {};
    case 'prompts/get':
      return typeof params.name === 'string' ? { prompt: bounded(params.name) } : {};
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return typeof params.uri === 'string' ? { resource: bounded(params.uri, 2048) } : {};
    default:
      return {};
  }
}

/** Client-sent names become span names and labels: cap them so one request cannot inflate them. */
function bounded(text: string, max = 128): string {
  return text.length > max ? text.slice(0, max) : text;
}

/** The `result.isError` of a tool result. */
export function isToolError(response: JsonRpcMessage): boolean {
  const result = (response as { result?: { isError?: unknown } }).result;
  return typeof result === 'object' && result !== null && result.isError === true;
}
