import { ErrorCode, failure, type JsonRpcFailure, type JsonRpcId } from '../protocol/json-rpc.js';

/**
 * Requests in flight per holder (a legacy session, an HTTP+SSE session, or a stateless caller):
 * taken when a request is dispatched (a batch's members one by one), given back when its call
 * ends however it ends (answered, failed, cancelled, its client gone) and its handler has settled. A request past the bound
 * is answered with `-32000` and never runs. One bound for every transport
 * (`limits.maxRequestsInFlight`), so no transport lets one client run handlers without limit.
 */
export class InFlightBound {
  private readonly held = new Map<string, number>();
  private readonly idleWaiters = new Map<string, Array<() => void>>();

  constructor(
    readonly max: number,
    /** The option (or product of options) that sets `max`, for the refusal. */
    private readonly option = 'limits.maxRequestsInFlight',
  ) {}

  /** A release (idempotent), or the refusal of request `id` when `key` is at the bound. */
  take(key: string, id: JsonRpcId, holder: string): (() => void) | JsonRpcFailure {
    const count = this.held.get(key) ?? 0;
    if (count >= this.max) {
      return failure(
        id,
        ErrorCode.ServerBusy,
        `Server busy: ${holder} already has ${count} request(s) in flight, the most ${this.option} (${this.max}) allows. Send it again once an answer came, or raise McpModule's ${this.option}.`,
      );
    }
    this.held.set(key, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) return void this.held.set(key, left);
      this.held.delete(key);
      const waiters = this.idleWaiters.get(key);
      this.idleWaiters.delete(key);
      for (const wake of waiters ?? []) wake();
    };
  }

  /** Undefined when `key` holds no slot, else a promise resolved once it holds none. */
  idle(key: string): Promise<void> | undefined {
    if (this.count(key) === 0) return undefined;
    return new Promise((resolve) => {
      const waiters = this.idleWaiters.get(key) ?? [];
      waiters.push(resolve);
      this.idleWaiters.set(key, waiters);
    });
  }

  /** Requests `key` holds now. */
  count(key: string): number {
    return this.held.get(key) ?? 0;
  }
}

/**
 * A slot held by a response and by the handler it runs: given back once the response has ended
 * and the handler, when one started, has settled. A client that disconnects or cancels ends its
 * response at once while a handler that ignores the abort runs on; counting only responses would
 * let an abort loop run handlers without bound.
 */
export function heldUntilSettled(release: () => void): { responseEnded: () => void; handlerStarted: () => () => void } {
  let holders = 1;
  const drop = (): void => {
    if (--holders === 0) release();
  };
  let ended = false;
  return {
    responseEnded: () => {
      if (ended) return;
      ended = true;
      drop();
    },
    handlerStarted: () => {
      holders++;
      let settled = false;
      return () => {
        if (settled) return;
        settled = true;
        drop();
      };
    },
  };
}
