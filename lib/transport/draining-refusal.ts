import type { McpResponseSink } from '../engine/sink.js';
import { ErrorCode, failure } from '../protocol/json-rpc.js';

// What an HTTP endpoint answers while its instance shuts down: new sessions, calls and streams go
// to another instance; client answers and notifications still land, since calls finishing here
// may await them.

/** A request (or a batch holding one): what a draining server refuses. */
export function carriesRequest(value: unknown): boolean {
  const isRequest = (item: unknown): boolean =>
    typeof item === 'object' && item !== null && 'method' in item && 'id' in item;
  return Array.isArray(value) ? value.some(isRequest) : isRequest(value);
}

/** 503 with `Retry-After` (`shutdownRetryAfterS`, 1 s by default), with the refused request's id if any. */
export function refuseDraining(sink: McpResponseSink, value: unknown, retryAfter = 1): void {
  const id =
    typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { id?: unknown }).id : undefined;
  sink.json(
    503,
    failure(
      typeof id === 'string' || typeof id === 'number' ? id : null,
      ErrorCode.ServerBusy,
      `Server shutting down: this instance takes no new sessions, calls or streams. Retry after ${retryAfter} s; another instance (or this one, restarted) will serve it, and a stream resumes there with Last-Event-ID.`,
    ),
    { 'Retry-After': String(retryAfter) },
  );
}
