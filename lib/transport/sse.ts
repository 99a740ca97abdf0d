import type { ServerResponse } from 'node:http';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/**
 * Writes and pushes one chunk past compression middleware, which otherwise holds small writes
 * back and turns a live stream into a late burst.
 */
export function writeFlushed(res: ServerResponse, chunk: string): void {
  res.write(chunk);
  (res as ServerResponse & { flush?: () => void }).flush?.();
}
