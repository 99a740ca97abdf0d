/**
 * A call's hold on its in-flight slot (`limits.maxRequestsInFlight`), counted once: the response
 * holds it from the start, the handler from when it starts, and every promise of app code the
 * call reports (guards, interceptors, the method: `McpContext.holdWork`) until it settles. The slot
 * is given back when the last holder lets go. A client that disconnects or cancels ends its
 * response at once while a handler that ignores the abort runs on; counting only responses would
 * let an abort loop run handlers without bound.
 */
export class CallHold {
  /** The response holds the slot from the start. */
  private holders = 1;

  constructor(private readonly release: () => void) {}

  /** One more holder; each `take()` is matched by exactly one {@link drop}. */
  take(): void {
    this.holders++;
  }

  /** One holder lets go (the response when it ends, the handler when it settles). */
  readonly drop = (): void => {
    if (--this.holders === 0) this.release();
  };

  /** Holds the slot until `work` settles (what `McpContext.holdWork` is set to). */
  readonly work = (work: PromiseLike<unknown>): void => {
    this.holders++;
    work.then(this.drop, this.drop);
  };
}
