/**
 * An SSE response read in the background, for specs that watch a stream while they act on the
 * server (kill it, signal it, release its steps): what arrived so far, how it ended, and a wait
 * for a predicate over the events.
 */
import { readSse, type SseEvent } from './sse.js';
import { guard } from './wait.js';

export interface Followed {
  events: SseEvent[];
  /** `ended`: the server closed it; `timedOut`: the guard gave up; `failed`: the connection broke. */
  done: Promise<{ ended: boolean; timedOut: boolean; failed: boolean }>;
  /** Resolves once `predicate` holds, checked on each event; rejects if the stream ends first. */
  until(predicate: (events: SseEvent[]) => boolean, ms: number, what: string): Promise<void>;
}

export function follow(response: Response, guardMs = 60_000): Followed {
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  const done = readSse(response.body, {
    onEvent: (event) => {
      events.push(event);
      for (const waiter of [...waiters]) waiter();
    },
    timeoutMs: guardMs,
  }).then(
    (read) => ({ ended: read.ended, timedOut: read.timedOut, failed: false }),
    () => ({ ended: false, timedOut: false, failed: true }),
  );
  const until = (predicate: (events: SseEvent[]) => boolean, ms: number, what: string): Promise<void> =>
    guard(
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!predicate(events)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
        void done.then(() => {
          waiters.delete(check);
          if (!predicate(events)) reject(new Error(`${what}: the stream ended first`));
        });
      }),
      what,
      ms,
    );
  return { events, done, until };
}
