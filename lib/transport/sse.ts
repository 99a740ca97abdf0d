import type { ServerResponse } from 'node:http';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

const bufferLimits = new WeakMap<ServerResponse, number>();

/**
 * Caps the bytes a response may hold that the client has not read yet (`limits.sseBufferBytes`).
 * Every SSE writer goes through {@link writeFlushed}, so the cap holds for POST streams of both
 * eras, GET streams, replays and relay tails alike.
 */
export function limitSseBuffer(res: ServerResponse, maxBytes: number): void {
  bufferLimits.set(res, maxBytes);
}

/**
 * Writes and pushes one chunk past compression middleware, which otherwise holds small writes
 * back and turns a live stream into a late burst. Returns false when nothing can be written any
 * more. A client that stops reading would make Node buffer every later event in memory, so once
 * the unflushed bytes pass the response's cap the response is destroyed: its 'close' then
 * cancels the call (or detaches a resumable stream, whose events the bounded event store keeps).
 */
export function writeFlushed(res: ServerResponse, chunk: string): boolean {
  if (res.destroyed || res.writableEnded) return false;
  res.write(chunk);
  (res as ServerResponse & { flush?: () => void }).flush?.();
  return holdBytes(res, 0);
}

/**
 * Whether the response may take `extra` more bytes on top of what it holds unread; past its cap
 * it is destroyed (its 'close' cancels the call) and the answer is false.
 */
export function holdBytes(res: ServerResponse, extra: number): boolean {
  if (res.destroyed || res.writableEnded) return false;
  const limit = bufferLimits.get(res);
  if (limit !== undefined && res.writableLength + extra > limit) {
    res.destroy();
    return false;
  }
  return true;
}
