import { type Observable, Subject, filter } from 'rxjs';
import { INVALID_OPTIONS } from '../common/mcp.messages.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import type { McpChangeEvent, McpNotificationBus } from '../protocol/notification-bus.js';
import type { ProtocolEra } from '../protocol/versions.js';
import {
  isToolError,
  shownSessionId,
  type McpObservedRequest,
  type McpObserverSink,
  type McpRequestProbe,
  type McpSessionCloseReason,
  type McpSessionEndFacts,
  type McpSessionFacts,
} from './observer.js';

/** The `events` slice of the module options (null without it). @internal */
export const MCP_EVENTS_OPTIONS = Symbol.for('nestjs-model-context:MCP_EVENTS_OPTIONS');

/**
 * Options of McpModule's audit and integration events.
 *
 * @publicApi
 */
export interface McpEventsOptions {
  /**
   * Put the call's `arguments` (tools/call, prompts/get) on `request.started` and
   * `request.finished` events. Off by default: arguments may carry personal data and secrets.
   * @default false
   */
  includeArguments?: boolean;
  /**
   * How events carry legacy session ids: `hashed`, a keyed hash that tells sessions apart and
   * names none (stable for one `requestState.secret`); `raw`, the id itself, which on a server
   * without auth lets whoever reads the events use the session (as `McpSessionAdmin` needs it).
   * @default 'hashed'
   */
  sessionIds?: 'hashed' | 'raw';
}

/** Fields every event carries. @publicApi */
export interface McpEventBase {
  /** Epoch milliseconds when the event happened. */
  at: number;
}

/** A legacy session was opened by `initialize` on this instance. @publicApi */
export interface McpSessionOpenedEvent extends McpEventBase {
  type: 'session.opened';
  /** Hashed unless `events.sessionIds: 'raw'`. */
  sessionId: string;
  protocolVersion: string;
  principal?: string;
  clientInfo?: { name?: string; version?: string };
}

/** A legacy session ended (DELETE, idle expiry, eviction, or its stdio/in-process connection closed). @publicApi */
export interface McpSessionClosedEvent extends McpEventBase {
  type: 'session.closed';
  /** Hashed unless `events.sessionIds: 'raw'`. */
  sessionId: string;
  reason: McpSessionCloseReason;
  /** Empty when the session was opened by another instance. */
  protocolVersion: string;
  principal?: string;
  /** Milliseconds since `initialize`; undefined when another instance opened the session. */
  durationMs?: number;
}

/** What a request event says about its request. @publicApi */
export interface McpRequestEventFields {
  requestId: string | number;
  /** The method; `_unknown` for one the server does not serve. */
  method: string;
  era: ProtocolEra;
  /** The version; `_unknown` for an unsupported one an `initialize` asked for. */
  protocolVersion: string;
  /** The legacy session, when the request had one (hashed unless `events.sessionIds: 'raw'`). */
  sessionId?: string;
  /** The authenticated principal's id, when authorization is configured. */
  principal?: string;
  /** The tool of `tools/call`; `_unknown` when the server has no tool by the name sent. */
  tool?: string;
  /** The prompt of `prompts/get` (`<namePrefix>*` for a repository's); `_unknown` as for tools. */
  prompt?: string;
  /**
   * What `resources/read`, `resources/subscribe` and `resources/unsubscribe` name: a resource's
   * URI, the URI template a URI matched (its variables are arguments), or `<uriPrefix>*` for a
   * repository's; `_unknown` when nothing serves the URI.
   */
  resource?: string;
  /** The call's arguments, only with `events.includeArguments`. */
  arguments?: unknown;
}

/** A request entered the dispatcher. @publicApi */
export interface McpRequestStartedEvent extends McpEventBase, McpRequestEventFields {
  type: 'request.started';
}

/**
 * How a request ended: `ok`, `error` (a JSON-RPC error response), `tool-error` (a tool result with
 * `isError: true`) or `cancelled` (the client cancelled or went away before the response).
 *
 * @publicApi
 */
export type McpRequestOutcome = 'ok' | 'error' | 'tool-error' | 'cancelled';

/** A request's response was sent (or the request was cancelled). @publicApi */
export interface McpRequestFinishedEvent extends McpEventBase, McpRequestEventFields {
  type: 'request.finished';
  outcome: McpRequestOutcome;
  durationMs: number;
  /** The JSON-RPC error code, for `outcome: 'error'`. */
  errorCode?: number;
  /** The JSON-RPC error message, for `outcome: 'error'`. */
  errorMessage?: string;
}

/** A list of tools, prompts or resources changed (on any instance, with Redis). @publicApi */
export interface McpListChangedEvent extends McpEventBase {
  type: 'list.changed';
  kind: 'tools' | 'prompts' | 'resources';
}

/** A resource was updated (`notifications/resources/updated`). @publicApi */
export interface McpResourceUpdatedEvent extends McpEventBase {
  type: 'resource.updated';
  uri: string;
}

/**
 * A server-to-client round trip of a call: elicitation (`elicitation/create`), sampling
 * (`sampling/createMessage`) or roots (`roots/list`). On the legacy era the server sends the request
 * and awaits the answer; on 2026-07-28 it ends the round with `input_required` and the client's
 * retry carries the answer.
 *
 * @publicApi
 */
export interface McpInteractionEvent extends McpEventBase {
  type: 'interaction.requested' | 'interaction.answered';
  /** `elicitation/create`, `sampling/createMessage` or `roots/list`. */
  interaction: string;
  /** The elicitation's answer: `accept`, `decline` or `cancel` (answered elicitations only). */
  action?: string;
  requestId: string | number;
  method: string;
  era: ProtocolEra;
  sessionId?: string;
  principal?: string;
  tool?: string;
}

/** Every event McpEvents emits, told apart by `type`. @publicApi */
export type McpEvent =
  | McpSessionOpenedEvent
  | McpSessionClosedEvent
  | McpRequestStartedEvent
  | McpRequestFinishedEvent
  | McpListChangedEvent
  | McpResourceUpdatedEvent
  | McpInteractionEvent;

/** The `type` of an event. @publicApi */
export type McpEventType = McpEvent['type'];

/** The part of Nest's EventEmitter2 that events are forwarded to. */
interface EventEmitterLike {
  emit(event: string, ...values: unknown[]): boolean;
  hasListeners(event?: string): boolean;
}

/** The EventEmitter2 event name of an McpEvent type: `mcp.request.finished`, ... */
export function mcpEventName(type: McpEventType): `mcp.${McpEventType}` {
  return `mcp.${type}`;
}

/**
 * Typed events for audit logs and integrations: sessions opened and closed, requests started and
 * finished (method, tool/prompt/resource, principal, era, duration, outcome, error code), list
 * changes and server-to-client round trips. Inject it and subscribe to {@link events$} or
 * {@link on}; when the app imports `@nestjs/event-emitter`'s EventEmitterModule, each event is
 * also emitted there as `mcp.<type>` (`@OnEvent('mcp.request.finished')`). Events never carry
 * argument values unless `events.includeArguments` is set. With no subscriber and no listener,
 * a request builds no event at all.
 *
 * A subscriber runs synchronously where the event happens: keep it quick, and let it hand slow
 * work (a database write) to a queue. An EventEmitter2 listener that throws is logged; an rxjs
 * subscriber that throws is reported by rxjs as an unhandled error (`config.onUnhandledError`).
 *
 * @example
 * ```ts
 * @Injectable()
 * export class McpAudit implements OnModuleInit {
 *   constructor(private readonly events: McpEvents) {}
 *   onModuleInit() {
 *     this.events.on('request.finished').subscribe((e) => console.log(`${e.principal ?? '-'} ${e.method} ${e.tool ?? ''} ${e.outcome}`));
 *   }
 * }
 * ```
 * @publicApi
 */
export class McpEvents {
  private readonly subject = new Subject<McpEvent>();
  private emitter?: EventEmitterLike;
  private readonly stopBus?: () => void;
  private readonly includeArguments: boolean;
  private readonly sessionIds: 'hashed' | 'raw';

  /** Every event, as it happens. */
  readonly events$: Observable<McpEvent> = this.subject.asObservable();

  /**
   * @param onListenerError where an EventEmitter2 listener's exception goes: it must not break
   * the MCP exchange the event came from.
   */
  constructor(
    options: McpEventsOptions = {},
    bus?: McpNotificationBus,
    private readonly onListenerError: (message: string, stack?: string) => void = () => undefined,
  ) {
    this.includeArguments = options.includeArguments === true;
    if (options.sessionIds !== undefined && options.sessionIds !== 'hashed' && options.sessionIds !== 'raw') {
      throw new Error(
        INVALID_OPTIONS(
          `"events.sessionIds" is ${JSON.stringify(options.sessionIds)}; it must be 'hashed' (the default) or 'raw'`,
        ),
      );
    }
    this.sessionIds = options.sessionIds ?? 'hashed';
    this.stopBus = bus?.subscribe((change) => this.change(change));
  }

  /** The events of the given types, typed. */
  on<T extends McpEventType>(...types: T[]): Observable<Extract<McpEvent, { type: T }>> {
    const wanted = new Set<string>(types);
    return this.events$.pipe(filter((event): event is Extract<McpEvent, { type: T }> => wanted.has(event.type)));
  }

  /** @internal Forwards every event to Nest's EventEmitter2 as `mcp.<type>`. */
  forwardTo(emitter: EventEmitterLike | undefined): void {
    this.emitter = emitter;
  }

  /** @internal */
  close(): void {
    this.stopBus?.();
    this.subject.complete();
  }

  /** True when some subscriber or listener would receive an event of this type. */
  private wants(type: McpEventType): boolean {
    return this.subject.observed || (this.emitter !== undefined && this.emitter.hasListeners(mcpEventName(type)));
  }

  private emit(event: McpEvent): void {
    if (this.subject.observed) this.subject.next(event);
    const emitter = this.emitter;
    if (!emitter?.hasListeners(mcpEventName(event.type))) return;
    try {
      emitter.emit(mcpEventName(event.type), event);
    } catch (error) {
      const err = error instanceof Error ? error : new Error(String(error));
      this.onListenerError(
        `A listener of "${mcpEventName(event.type)}" threw: ${err.message}. McpEvents listeners must not throw; the MCP request went on.`,
        err.stack,
      );
    }
  }

  private change(change: McpChangeEvent): void {
    if (change.type === 'resource-updated') {
      if (this.wants('resource.updated')) this.emit({ type: 'resource.updated', at: Date.now(), uri: change.uri });
    } else if (this.wants('list.changed')) {
      this.emit({ type: 'list.changed', at: Date.now(), kind: change.kind });
    }
  }

  /** @internal The observer sink the dispatcher and engine report to. */
  readonly sink: McpObserverSink = {
    request: (facts) => this.request(facts),
    sessionOpened: (facts) => this.sessionOpened(facts),
    sessionClosed: (facts) => this.sessionClosed(facts),
  };

  private request(facts: McpObservedRequest): McpRequestProbe | undefined {
    const started = this.wants('request.started');
    if (
      !started &&
      !this.wants('request.finished') &&
      !this.wants('interaction.requested') &&
      !this.wants('interaction.answered')
    )
      return undefined;
    const { request } = facts;
    const fields: McpRequestEventFields = {
      requestId: facts.requestId,
      method: facts.method,
      era: facts.era,
      protocolVersion: facts.protocolVersion,
      ...facts.target,
    };
    const sessionId = shownSessionId(this.sessionIds, facts.sessionId, facts.sessionRef);
    if (sessionId !== undefined) fields.sessionId = sessionId;
    if (facts.principal !== undefined) fields.principal = facts.principal;
    if (this.includeArguments && request.params?.arguments !== undefined) fields.arguments = request.params.arguments;
    if (started) this.emit({ type: 'request.started', at: Date.now(), ...fields });
    const t0 = performance.now();
    let ended = false;
    return {
      interaction: (phase, interaction, action) => {
        const type = phase === 'requested' ? 'interaction.requested' : 'interaction.answered';
        if (!this.wants(type)) return;
        const event: McpInteractionEvent = {
          type,
          at: Date.now(),
          interaction,
          requestId: fields.requestId,
          method: fields.method,
          era: fields.era,
        };
        if (action !== undefined) event.action = action;
        if (fields.sessionId !== undefined) event.sessionId = fields.sessionId;
        if (fields.principal !== undefined) event.principal = fields.principal;
        if (fields.tool !== undefined) event.tool = fields.tool;
        this.emit(event);
      },
      end: (response, late) => {
        if (ended) return;
        ended = true;
        if (!this.wants('request.finished')) return;
        const event: McpRequestFinishedEvent = {
          type: 'request.finished',
          at: Date.now(),
          ...fields,
          outcome: outcomeOf(response),
          durationMs: performance.now() - t0,
        };
        if (late?.protocolVersion) event.protocolVersion = late.protocolVersion;
        const lateSession = shownSessionId(this.sessionIds, late?.sessionId, late?.sessionRef);
        if (lateSession !== undefined) event.sessionId = lateSession;
        if (response && 'error' in response) {
          event.errorCode = response.error.code;
          event.errorMessage = response.error.message;
        }
        this.emit(event);
      },
    };
  }

  private sessionIdOf(facts: McpSessionFacts): string {
    return this.sessionIds === 'raw' || facts.sessionRef === undefined ? facts.sessionId : facts.sessionRef;
  }

  private sessionOpened(facts: McpSessionFacts): void {
    if (!this.wants('session.opened')) return;
    const event: McpSessionOpenedEvent = {
      type: 'session.opened',
      at: Date.now(),
      sessionId: this.sessionIdOf(facts),
      protocolVersion: facts.protocolVersion,
    };
    if (facts.principal !== undefined) event.principal = facts.principal;
    if (facts.clientInfo) event.clientInfo = facts.clientInfo;
    this.emit(event);
  }

  private sessionClosed(facts: McpSessionEndFacts): void {
    if (!this.wants('session.closed')) return;
    const event: McpSessionClosedEvent = {
      type: 'session.closed',
      at: Date.now(),
      sessionId: this.sessionIdOf(facts),
      reason: facts.reason,
      protocolVersion: facts.protocolVersion,
    };
    if (facts.principal !== undefined) event.principal = facts.principal;
    if (facts.durationMs !== undefined) event.durationMs = facts.durationMs;
    this.emit(event);
  }
}

function outcomeOf(response: JsonRpcMessage | undefined): McpRequestOutcome {
  if (response === undefined) return 'cancelled';
  if ('error' in response) return 'error';
  return isToolError(response) ? 'tool-error' : 'ok';
}
