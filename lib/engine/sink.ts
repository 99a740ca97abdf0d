import type { McpPrincipal } from '../protocol/principal.js';
import type { JsonRpcFailure, JsonRpcMessage, JsonRpcRequest } from '../protocol/json-rpc.js';

/** Extra response headers (HTTP adapters write them; others may ignore them). */
export type McpAnswerHeaders = Readonly<Record<string, string>>;

/**
 * An open stream of events for one exchange (an SSE response over HTTP, a run of lines on
 * stdio, a callback in process). Events are serialized JSON-RPC messages, so a stored event can be
 * replayed as it was written.
 */
export interface McpEventSink {
  /** Writes one message. False when nothing can be written any more (closed, or over its buffer cap). */
  event(data: string, id?: string): boolean;
  /**
   * Tells the sink that `bytes` more are waiting to be written (event-store appends in flight).
   * False, and the sink is closed, when they and what it holds unread pass its buffer cap: a
   * producer faster than the store or the reader must not make the server queue without bound.
   * Sinks without a cap leave it out.
   */
  hold?(bytes: number): boolean;
  /** A resumable stream's first event: its id and the client's reconnection delay, no data. */
  prime(id: string, retryMs: number): void;
  /** A keep-alive that carries nothing. */
  comment(): void;
  /** Sets the client's reconnection delay (an SSE `retry:` field), before the server ends a stream it should resume elsewhere. */
  retry?(retryMs: number): void;
  /** Ends the stream; later writes are dropped. */
  end(): void;
  /** True once ended by either side. */
  readonly ended: boolean;
  /** Runs once the other side went away or the stream ended. */
  onClose(listener: () => void): void;
}

/**
 * Where the engine writes the answer of one exchange: one JSON body (with a status and headers),
 * an empty answer (202 Accepted, 200 after DELETE), or a stream of events. Exactly one answer is
 * written per exchange.
 */
export interface McpResponseSink {
  /** True once an answer was started. */
  readonly started: boolean;
  /** One JSON body: a message, or the array answering a batch. */
  json(status: number, body: JsonRpcMessage | readonly JsonRpcMessage[], headers?: McpAnswerHeaders): void;
  /** An answer without a body. */
  empty(status: number, headers?: McpAnswerHeaders): void;
  /** Opens a stream of events (status 200). */
  stream(headers?: McpAnswerHeaders): McpEventSink;
  /** Runs once if the client goes away before or while the answer is written. */
  onClose(listener: () => void): void;
}

/**
 * What a transport knows about one exchange besides its body: the headers that matter (looked up
 * by lower-case name), who is calling and from where, and whether the answer may be a stream.
 */
export interface McpTransportFacts {
  /** A request header by lower-case name; undefined when absent (or on transports without headers). */
  header(name: string): string | undefined;
  /** The authenticated caller, when the transport authenticates. */
  principal?: McpPrincipal;
  /** Tells anonymous callers apart for `limits.sessionsPerAddress`. */
  clientAddress?: string;
  /** Whether the client takes a stream answer (`Accept: text/event-stream` over HTTP). */
  acceptsStream: boolean;
  /**
   * Whether the Streamable HTTP header rules apply (`MCP-Protocol-Version`, `Mcp-Method`,
   * `Mcp-Name`, tool headers): true over HTTP, false where no headers travel (stdio).
   */
  headerRules: boolean;
  /** The transport's own request object, handed to handlers as `ctx.request`. */
  transportRequest?: unknown;
}

/** The outcome of reading a body: its parsed JSON, or the error it is. */
export type McpBodyOutcome =
  { ok: true; value: unknown } | { ok: false; status: number; code: number; message: string };

/** A refusal the engine writes as is: status, headers (a bearer challenge, say) and the error. */
export interface McpRefusal {
  status: number;
  headers?: McpAnswerHeaders;
  body: JsonRpcFailure;
}

/**
 * Decides whether the caller may run a request that needs `required` scopes; returns the refusal
 * to answer when not. Checked for every request of a batch before any runs.
 */
export type McpScopeCheck = (
  required: readonly string[],
  principal: McpPrincipal | undefined,
  request: JsonRpcRequest,
) => McpRefusal | undefined;
