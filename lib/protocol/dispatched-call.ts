import type { Subscriber, Subscription } from 'rxjs';
import { isObservable } from 'rxjs';
import type { CallHold } from './call-hold.js';
import type { McpRequestProbe } from './call-facts.js';
import type { McpContext } from './context.js';
import { success, type JsonRpcId, type JsonRpcMessage } from './json-rpc.js';
import { lastOf, type LastValueObserver } from './last-value.js';
import type { MethodHandler } from './methods.js';
import type { JsonObject } from './mcp-types.js';
import type { ProtocolEra } from './versions.js';
import { McpCancelledError, isPromiseLike } from './values.js';

/** What a dispatched call needs of its dispatcher: how answers are shaped. */
export interface DispatchAnswers {
  decorate(result: JsonObject, era: ProtocolEra): JsonObject;
  errorResponse(id: JsonRpcId, error: unknown): JsonRpcMessage;
}

/**
 * One request running through its handler: the last value of the handler's outcome becomes the
 * response, unsubscribing cancels it. An object, not a nest of closures: this runs on every call.
 * `hold`, the call's in-flight slot, is held by the handler too until it has settled: a handler
 * that ignores the abort keeps running after an unsubscribe, and a bound on running handlers
 * (`limits.maxRequestsInFlight`) must count it until its promise settles.
 */
export class DispatchedCall implements LastValueObserver<unknown> {
  private settled = false;
  /** Whether the call's in-flight slot is given back (always, without a slot). */
  private handlerDone: boolean;
  /** A handler's promise still pending: its end is its settling, not the unsubscribe. */
  private pendingPromise = false;
  private inner?: Subscription = undefined;

  constructor(
    private readonly answers: DispatchAnswers,
    private readonly id: JsonRpcId,
    private readonly ctx: McpContext,
    private readonly probe: McpRequestProbe | undefined,
    private readonly subscriber: Subscriber<JsonRpcMessage>,
    private readonly hold: CallHold | undefined,
  ) {
    this.handlerDone = hold === undefined;
    if (hold) {
      // The handler holds the call's in-flight slot until it settles, and so does every promise
      // of app code it reports (ctx.holdWork): one count, the call's.
      hold.take();
      ctx.holdWork = hold.work;
    }
  }

  start(handler: MethodHandler, params: JsonObject): void {
    try {
      const outcome = handler(params, this.ctx);
      if (isObservable(outcome)) {
        this.inner = lastOf(outcome, this);
      } else if (isPromiseLike(outcome)) {
        this.pendingPromise = true;
        outcome.then(
          (result) => {
            this.endHandler();
            if (!this.subscriber.closed) this.answer(result);
          },
          (error: unknown) => {
            this.endHandler();
            if (!this.subscriber.closed) this.error(error);
          },
        );
      } else {
        this.answer(outcome);
      }
    } catch (error) {
      this.error(error);
    }
  }

  /** The last value of the handler's Observable (an empty result when it emitted none). */
  value(last: unknown): void {
    this.answer(last ?? {});
  }

  error(error: unknown): void {
    // A modern interactive call that stopped for missing input answers `input_required`; the
    // recovery rethrows any other error, which is answered as one.
    let result: JsonObject | undefined;
    try {
      result = this.ctx.recoverInput?.(error);
    } catch (thrown) {
      error = thrown;
    }
    if (result) this.answer(result);
    else this.settle(this.answers.errorResponse(this.id, error));
  }

  /** The teardown of the call's Observable: a call not answered yet is cancelled. */
  unsubscribe(): void {
    this.ctx.close();
    if (!this.settled) {
      this.ctx.abortCall(new McpCancelledError());
      this.probe?.end(undefined);
    }
    this.inner?.unsubscribe();
    if (!this.pendingPromise) this.endHandler();
  }

  private answer(result: unknown): void {
    this.settle(success(this.id, this.answers.decorate(result as JsonObject, this.ctx.era)));
  }

  private settle(message: JsonRpcMessage): void {
    this.settled = true;
    if (!this.pendingPromise) this.endHandler();
    this.ctx.close();
    this.probe?.end(message);
    this.subscriber.next(message);
    this.subscriber.complete();
  }

  private endHandler(): void {
    if (this.handlerDone) return;
    this.handlerDone = true;
    this.hold!.drop();
  }
}
