import type { McpResponseSink } from './sink.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../protocol/json-rpc.js';

/** A legacy GET that the relay serves: a new session stream, or the resume of a stored stream. */
export interface McpRelayStreamRequest {
  sessionId: string;
  /** The client's `Last-Event-ID`, when it resumes. */
  lastEventId?: string;
  /** Send a priming event (2025-11-25 and later clients). */
  priming: boolean;
  /** The `retry:` hint of the priming event. */
  retryMs: number;
  /** Interval of SSE comment keep-alives. */
  keepAliveMs: number;
}

/**
 * Lets several instances serve one legacy session. The HTTP handler keeps using its own streams
 * for what it holds and asks the relay for the rest:
 *
 * - `serveStream`: legacy GET streams live in the shared event store; whichever instance the GET
 *   reaches tails the session's stream (or resumes any stored stream after `Last-Event-ID`), so
 *   events produced anywhere, even while no instance holds the stream, reach the client once.
 * - `sendToSession`: a message for a session's GET stream, wherever that stream is held.
 * - `publishResponse` / `onResponse`: a client's answer to a server-to-client request that reached
 *   an instance other than the one whose call awaits it.
 *
 * @publicApi
 */
export interface McpRelay {
  /** Serves a legacy GET on this answer, which is not started yet (open it with `sink.stream()`). */
  serveStream(sink: McpResponseSink, request: McpRelayStreamRequest): Promise<void>;
  /**
   * Appends a message to the session's GET stream. Resolves to false when the session has no GET
   * stream (the message is dropped, as with one instance).
   */
  sendToSession(sessionId: string, message: JsonRpcMessage): Promise<boolean>;
  /** Ends the session's GET stream on every instance (the session was deleted). */
  endSessionStream(sessionId: string): Promise<void>;
  /** Hands a client's answer to every other instance; the one awaiting its id resolves it. */
  publishResponse(response: JsonRpcResponse, sessionId: string | undefined): Promise<void>;
  /**
   * Receives answers published by other instances. The handler returns true when it knew the id.
   * Returns an unsubscribe function.
   */
  onResponse(handler: (response: JsonRpcResponse, sessionId: string | undefined) => boolean): () => void;
  /** Shutdown: ends every stream this instance serves, each with a `retry:` hint, so its client resumes elsewhere. */
  endAll?(retryMs: number): void;
  /** Streams this instance serves for the session. */
  heldStreams?(sessionId: string): number;
  /** For each session, whether it has a GET stream on any instance. */
  hasGetStreams?(sessionIds: readonly string[]): Promise<boolean[]>;
}
