/**
 * Waiting on events, not on time. Specs wait for the effect itself (an emitter, a promise the
 * server side resolves); a timer appears only as a failure guard that names what never happened.
 */
import { type EventEmitter, once } from 'node:events';

/** Fails with `what` if `promise` has not settled within `ms` (a guard, never a wait). */
export async function guard<T>(promise: Promise<T>, what: string, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} (nothing after ${ms} ms)`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** The next `event` on `emitter`, guarded. */
export function nextEvent(emitter: EventEmitter, event: string, what: string, ms?: number): Promise<unknown[]> {
  return guard(once(emitter, event), what, ms);
}

/**
 * A value that changes over time and can be waited on: `set`/`notify` wake the waiters, which
 * re-check their predicate. No polling.
 */
export class Watched {
  private readonly waiters = new Set<() => void>();

  /** Call after every change of what the waiters look at. */
  notify(): void {
    for (const check of [...this.waiters]) check();
  }

  /** Resolves once `predicate` holds (checked now and on each notify), guarded by `ms`. */
  until(predicate: () => boolean, what: string, ms = 60_000): Promise<void> {
    if (predicate()) return Promise.resolve();
    let check!: () => void;
    const met = new Promise<void>((resolve) => {
      check = () => {
        if (predicate()) resolve();
      };
      this.waiters.add(check);
    });
    return guard(met, what, ms).finally(() => this.waiters.delete(check));
  }
}

/**
 * A fetch for an SDK client transport that counts the GET (SSE) streams the server accepted. The
 * server registers a session's GET stream before it sends the response head, so once `opened(n)`
 * resolves, a notification sent to the session reaches that stream.
 */
export function watchGetStreams(): { fetch: typeof fetch; readonly count: number; opened(n?: number): Promise<void> } {
  const watched = new Watched();
  let count = 0;
  const wrapped: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    if (method === 'GET' && response.ok && response.headers.get('content-type')?.includes('text/event-stream')) {
      count++;
      watched.notify();
    }
    return response;
  };
  return {
    fetch: wrapped,
    get count() {
      return count;
    },
    opened: (n = 1) => watched.until(() => count >= n, `the client's GET stream #${n} never opened`),
  };
}

/**
 * Sends `signal` to a child process and resolves once it exited (at once if it already had);
 * with `escalateMs`, a child that outlives the signal that long is SIGKILLed.
 */
export async function endProcess(
  child: import('node:child_process').ChildProcess | undefined,
  signal: NodeJS.Signals = 'SIGKILL',
  escalateMs?: number,
): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  const timer = escalateMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), escalateMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Runs `task(0…count-1)` with at most `width` in flight, and resolves with their results in
 * order: a flood of calls from one client that stays within `limits.maxRequestsInFlight`.
 */
export async function pool<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}
