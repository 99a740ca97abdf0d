import { ErrorCode, failure, type JsonRpcFailure, type JsonRpcId } from '../protocol/json-rpc.js';
import { addressOwner } from '../protocol/principal.js';
import type { McpTransportFacts } from './sink.js';

/**
 * Requests in flight per holder (a legacy session, an HTTP+SSE session, or a stateless caller):
 * taken when a request is dispatched (a batch's members one by one), given back when its call
 * ends however it ends (answered, failed, cancelled, its client gone). A request past the bound
 * is answered with `-32000` and never runs. One bound for every transport
 * (`limits.maxRequestsInFlight`), so no transport lets one client run handlers without limit.
 */
export class InFlightBound {
  private readonly held = new Map<string, number>();

  constructor(readonly max: number) {}

  /** A release (idempotent), or the refusal of request `id` when `key` is at the bound. */
  take(key: string, id: JsonRpcId, holder: string): (() => void) | JsonRpcFailure {
    const count = this.held.get(key) ?? 0;
    if (count >= this.max) {
      return failure(
        id,
        ErrorCode.ServerBusy,
        `Server busy: ${holder} already has ${count} request(s) in flight, the most limits.maxRequestsInFlight (${this.max}) allows. Send it again once an answer came, or raise McpModule's limits.maxRequestsInFlight.`,
      );
    }
    this.held.set(key, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }

  /**
   * The slot of request `id`, counted per legacy session (per connection, `connection`, in
   * `process` mode), else per stateless caller (its principal, else its client address), so a new
   * session or the other era is no way around it, and one session's flood refuses no other's call.
   */
  slot(id: JsonRpcId, connection: string | undefined, known: { session?: { id: string } }, facts: McpTransportFacts): (() => void) | JsonRpcFailure {
    if (connection !== undefined) return this.take(connection, id, 'this session');
    if (known.session !== undefined) return this.take(`session:${known.session.id}`, id, 'this session');
    if (facts.principal !== undefined) return this.take(`principal:${facts.principal.id}`, id, 'this principal');
    return this.take(`address:${addressOwner(facts.clientAddress)}`, id, 'this client address');
  }

  /** Requests `key` holds now. */
  count(key: string): number {
    return this.held.get(key) ?? 0;
  }
}
