import type { ServerResponse } from 'node:http';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/** One SSE event. JSON never contains raw newlines, so a single data line is always enough. */
export function sseEvent(data: string, id?: string): string {
  return id === undefined ? `event: message\ndata: ${data}\n\n` : `id: ${id}\nevent: message\ndata: ${data}\n\n`;
}

/**
 * Writes and pushes one chunk past compression middleware, which otherwise holds small writes
 * back and turns a live stream into a late burst.
 */
export function writeFlushed(res: ServerResponse, chunk: string): void {
  res.write(chunk);
  (res as ServerResponse & { flush?: () => void }).flush?.();
}
