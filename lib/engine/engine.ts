import { httpStatusFor } from '../protocol/errors.js';
import { CallHold } from '../protocol/call-hold.js';
import { McpContext, requestState, type RequestEnvelope } from '../protocol/context.js';
import { metaOf } from '../protocol/dispatcher.js';
import {
  ErrorCode,
  classifyMessage,
  failure,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../protocol/json-rpc.js';
import { runBatch } from './batch.js';
import { CONNECTION_SCOPE, McpEngineSessions } from './engine-sessions.js';
import type { CallChannel } from './respond.js';
import type { McpBodyOutcome, McpRefusal, McpResponseSink, McpTransportFacts } from './sink.js';
import { connectionOf } from './session-hooks.js';
import { isModernMessage, modernFacts, modernHeaderProblem } from './wire-rules.js';

export { allowedMethods, type McpEngineOptions } from './engine-sessions.js';

/** The id of a request body, for an error about it; null for anything else. */
function requestIdOf(value: unknown): JsonRpcId | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/**
 * The transport-agnostic MCP engine: given a parsed message, the transport's facts and a response
 * sink, it decides era, session, envelope and answer, for both eras. Legacy sessions, batches,
 * `initialize`, cancellation, change delivery, resumption and server-to-client requests live here
 * once; a transport only reads bytes in and writes bytes out.
 */
export class McpEngine extends McpEngineSessions {
  /** One incoming body (a message or a batch), as the transport read it. */
  message(body: McpBodyOutcome, facts: McpTransportFacts, sink: McpResponseSink): void | Promise<void> {
    // Tool sets: who the caller is decides which tools exist for it, before any check reads them.
    const prepared = body.ok ? this.server.prepareCaller(facts, body.value) : undefined;
    const outcome = prepared
      ? prepared.then(() => this.dispatchMessage(body, facts, sink))
      : this.dispatchMessage(body, facts, sink);
    if (!(outcome instanceof Promise)) return outcome;
    return outcome.catch((error: unknown) => this.unavailable(error, body.ok ? requestIdOf(body.value) : null, sink));
  }

  private dispatchMessage(body: McpBodyOutcome, facts: McpTransportFacts, sink: McpResponseSink): void | Promise<void> {
    if (!body.ok) return sink.json(body.status, failure(null, body.code, body.message));
    const value = body.value;
    if (Array.isArray(value)) return this.batch(value, facts, sink);
    const parsed = classifyMessage(value);
    if (parsed.kind === 'invalid')
      return sink.json(400, failure(parsed.id, ErrorCode.InvalidRequest, `Invalid Request: ${parsed.reason}`));
    if (parsed.kind === 'response') return this.clientResponse(parsed.message, facts, sink);
    const message = parsed.message;
    const id = parsed.kind === 'request' ? parsed.message.id : null;
    // The scope decision comes first, before anything else is read of the request. A modern call
    // keeps the target it looked up, so the catalog is asked once per call.
    const looked: { target?: unknown } = {};
    if (id !== null && this.answered(this.authorize(facts, [message as JsonRpcRequest], looked), sink)) return;
    if (isModernMessage(message, facts)) return this.modern(message, id, facts, sink, looked.target);
    return this.legacy(message, id, facts, sink);
  }

  /**
   * The one scope decision for every way a request arrives (alone or in a batch): each request
   * needs its scopes, and when one lacks them the caller is refused before any runs.
   */
  private authorize(
    facts: McpTransportFacts,
    requests: readonly JsonRpcRequest[],
    call?: { target?: unknown },
  ): McpRefusal | undefined {
    const check = this.options.checkScopes;
    if (!check) return undefined;
    for (const request of requests) {
      const required = this.server.requiredScopes(
        request.method,
        request.params,
        requests.length === 1 ? call : undefined,
        facts,
      );
      if (!required?.length) continue;
      const refusal = check(required, facts.principal, request);
      if (refusal) return refusal;
    }
    return undefined;
  }

  private cancelScope(sessionId: string | undefined): string | undefined {
    return this.options.sessions === 'process' ? CONNECTION_SCOPE : sessionId;
  }

  // ---------------------------------------------------------------- modern era (2026-07-28)

  private modern(
    message: JsonRpcRequest | JsonRpcNotification,
    id: JsonRpcId | null,
    facts: McpTransportFacts,
    sink: McpResponseSink,
    target: unknown,
  ): void | Promise<void> {
    const known = modernFacts(facts, message, id);
    if ('error' in known) return sink.json(httpStatusFor(known.error.code), known);
    if (id === null) {
      // Over HTTP a modern call is cancelled by closing its response; a connection cancels by id.
      const scope = this.cancelScope(undefined);
      if (scope !== undefined && message.method === 'notifications/cancelled')
        this.calls.cancel(scope, message.params?.requestId);
      return sink.empty(202);
    }
    const request = message as JsonRpcRequest;
    // The call object: built once, here, and seen by every layer down to the handler.
    const call = new McpContext(id, request.method, known, metaOf(request.params), undefined, undefined, request);
    call.target = target;
    const problem = modernHeaderProblem(this.server, facts, call, request);
    if (problem) return sink.json(httpStatusFor(problem.error.code), problem);
    if (this.options.hooks?.seeds) return this.seededCall(request, known, facts, sink);
    this.call(request, call, facts, sink, { era: 'modern' });
  }

  /** 2026-07-28 has no session: `sessions.onSession` seeds each request's state. */
  private async seededCall(
    request: JsonRpcRequest,
    known: RequestEnvelope,
    facts: McpTransportFacts,
    sink: McpResponseSink,
  ): Promise<void> {
    const seeded = await this.options.hooks!.seed(connectionOf(facts, known), request.id);
    if (this.answered(seeded, sink)) return;
    known.state = requestState(seeded.state);
    this.call(request, known, facts, sink, { era: 'modern', recheck: true });
  }

  // ---------------------------------------------------------------- legacy era (2025-03-26 … 2025-11-25)

  private async legacy(
    message: JsonRpcRequest | JsonRpcNotification,
    id: JsonRpcId | null,
    facts: McpTransportFacts,
    sink: McpResponseSink,
  ): Promise<void> {
    if (message.method === 'initialize' && id !== null) {
      const answer = await this.initialize(message as JsonRpcRequest, facts);
      return sink.json(answer.status, answer.body, answer.headers);
    }
    const context = await this.sessions.envelope(facts, id, message.method);
    if (this.answered(context, sink)) return;
    if (id === null) {
      this.notification(message as JsonRpcNotification, context.session?.id);
      return sink.empty(202);
    }
    const channel: CallChannel = { detachRequested: false };
    if (context.session && context.protocolVersion >= '2025-11-25' && this.options.eventStore) {
      context.closeStream = () => {
        if (channel.stream) channel.stream.detach();
        else channel.detachRequested = true;
      };
    }
    this.call(message as JsonRpcRequest, context, facts, sink, {
      era: 'legacy',
      sessionId: context.session?.id,
      channel,
      recheck: true,
    });
  }

  /**
   * Dispatches one request with its call object. `recheck`: the request waited (its session, a
   * hook) since the first scope decision, so the decision is taken again, on a fresh look-up: a
   * capability enabled or added meanwhile must not run on a decision taken before it existed.
   */
  private call(
    request: JsonRpcRequest,
    known: McpContext | RequestEnvelope,
    facts: McpTransportFacts,
    sink: McpResponseSink,
    call: { era: 'legacy' | 'modern'; sessionId?: string; channel?: CallChannel; recheck?: boolean },
  ): void {
    const ctx =
      known instanceof McpContext
        ? known
        : new McpContext(request.id, request.method, known, metaOf(request.params), undefined, undefined, request);
    if (call.recheck && this.answered(this.authorize(facts, [request], ctx), sink)) return;
    const cancelScope =
      call.era === 'legacy' || this.options.sessions === 'process' ? this.cancelScope(call.sessionId) : undefined;
    if (cancelScope !== undefined && this.calls.isInflight(cancelScope, request.id)) {
      return sink.json(
        400,
        failure(
          request.id,
          ErrorCode.InvalidRequest,
          `Invalid Request: request id ${JSON.stringify(request.id)} is still in flight; use a new id for every request.`,
        ),
      );
    }
    const slot = this.inFlight?.slot(
      request.id,
      this.options.sessions === 'process' ? CONNECTION_SCOPE : undefined,
      ctx,
      facts,
    );
    if (slot !== undefined && typeof slot !== 'function') return sink.json(503, slot, { 'Retry-After': '1' });
    const hold = slot && new CallHold(slot);
    this.calls.respond({
      onEnd: hold?.drop,
      sink,
      messages: this.server.handle(request, ctx, hold),
      era: call.era,
      acceptsStream: facts.acceptsStream,
      cancelScope,
      sessionId: call.sessionId,
      requestId: request.id,
      channel: call.channel,
      protocolVersion: ctx.protocolVersion,
    });
  }

  private notification(message: JsonRpcNotification, sessionId: string | undefined): void {
    const scope = this.cancelScope(sessionId);
    if (message.method === 'notifications/cancelled' && scope !== undefined)
      this.calls.cancel(scope, message.params?.requestId);
  }

  private async batch(items: unknown[], facts: McpTransportFacts, sink: McpResponseSink): Promise<void> {
    const outcome = await runBatch(this.server, items, this.limits.maxBatchLength, {
      envelope: () => this.sessions.envelope(facts, null),
      authorize: (requests) => this.authorize(facts, requests),
      notification: (message, envelope) => this.notification(message, envelope.session?.id),
      admit: (request, envelope) =>
        this.inFlight?.slot(
          request.id,
          this.options.sessions === 'process' ? CONNECTION_SCOPE : undefined,
          envelope,
          facts,
        ) ?? (() => undefined),
    });
    if (this.answered(outcome, sink)) return;
    if (outcome.responses.length === 0) return sink.empty(202);
    sink.json(200, outcome.responses);
  }

  /** A client's answer to a server-to-client request (legacy era). Late or unknown answers are ignored. */
  private async clientResponse(
    message: JsonRpcResponse,
    facts: McpTransportFacts,
    sink: McpResponseSink,
  ): Promise<void> {
    let owner: string | undefined;
    if (this.options.sessions === 'stateful') {
      // The same binding as requests: only the session's own principal may answer on it.
      const session = await this.sessions.resolve(facts, null);
      if (this.answered(session, sink)) return;
      owner = session.id;
    } else if (this.options.sessions === 'process') {
      owner = this.sessions.connectionSession;
    }
    if (!this.broker.resolve(message, owner) && this.options.relay)
      void this.options.relay.publishResponse(message, owner);
    sink.empty(202);
  }
}
