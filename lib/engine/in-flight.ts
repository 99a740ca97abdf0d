import { ErrorCode, failure, type JsonRpcFailure, type JsonRpcId } from '../protocol/json-rpc.js';
import { addressOwner } from '../protocol/principal.js';
import type { McpTransportFacts } from './sink.js';

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
 * The in-flight slots of the engine: one bound per legacy session (per connection in `process`
 * mode), else per stateless caller (its principal, else its client address), and, across all of a
 * caller's legacy sessions, at most its session cap times the bound, as if each session were open.
 * Slots outlive a session that ended while its handlers run, so deleting sessions and opening new
 * ones is no way around the bound; a new session or the other era is no way around it either, and
 * one session's flood refuses no other session's call.
 */
export class InFlightSlots {
  private readonly perHolder: InFlightBound;
  private readonly perPrincipal: InFlightBound;
  private readonly perAddress: InFlightBound;

  constructor(max: number, limits: { sessionsPerPrincipal: number; sessionsPerAddress: number }) {
    this.perHolder = new InFlightBound(max);
    this.perPrincipal = new InFlightBound(
      max * limits.sessionsPerPrincipal,
      'limits.maxRequestsInFlight × limits.sessionsPerPrincipal',
    );
    this.perAddress = new InFlightBound(
      max * limits.sessionsPerAddress,
      'limits.maxRequestsInFlight × limits.sessionsPerAddress',
    );
  }

  /** The slot of request `id` (`connection` names the one session of `process` mode), or its refusal. */
  slot(
    id: JsonRpcId,
    connection: string | undefined,
    known: { session?: { id: string } },
    facts: McpTransportFacts,
  ): (() => void) | JsonRpcFailure {
    if (connection !== undefined) return this.perHolder.take(connection, id, 'this session');
    const principal = facts.principal?.id;
    if (known.session !== undefined) {
      const owner =
        principal !== undefined
          ? this.perPrincipal.take(
              `principal:${principal}`,
              id,
              'this principal across its sessions (closed ones whose handlers still run included)',
            )
          : this.perAddress.take(
              `address:${addressOwner(facts.clientAddress)}`,
              id,
              'this client address across its sessions (closed ones whose handlers still run included)',
            );
      if (typeof owner !== 'function') return owner;
      const session = this.perHolder.take(`session:${known.session.id}`, id, 'this session');
      if (typeof session !== 'function') return (owner(), session);
      return () => (session(), owner());
    }
    if (principal !== undefined) return this.perHolder.take(`principal:${principal}`, id, 'this principal');
    return this.perHolder.take(`address:${addressOwner(facts.clientAddress)}`, id, 'this client address');
  }

  /** Undefined when `key` holds no slot, else a promise resolved once it holds none. */
  idle(key: string): Promise<void> | undefined {
    return this.perHolder.idle(key);
  }
}
