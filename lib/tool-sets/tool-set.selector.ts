import { randomUUID } from 'node:crypto';
import type { McpCaller } from '../protocol/dispatcher.js';
import { McpError } from '../protocol/errors.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { McpToolListMode, ResolvedToolSetsOptions } from './tool-sets.options.js';

/** The tools one request may know of: its sets (null: every tool) and how its list shows them. */
export interface ToolSelection {
  readonly sets: ReadonlySet<string> | null;
  readonly mode: McpToolListMode;
  /** The sets, as a cache key ("*" for every tool). */
  readonly key: string;
}

const MAX_QUERY_NAMES = 64;
const MAX_URL_LENGTH = 8192;

interface Cached {
  sets: readonly string[] | undefined;
  expires: number;
}

/**
 * Decides the sets of each request: the app's `select` (cached per principal, bounded in count
 * and age), else the URL's `?toolsets=`, else the module default; a URL can only narrow what
 * `select` gave. A request's decision is kept with its transport request, so that every check of
 * it (scopes, headers, the handler) reads the same one.
 */
export class ToolSetSelector {
  private readonly principals = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<readonly string[] | undefined>>();
  private readonly decided = new WeakMap<object, ToolSelection | McpError>();

  constructor(
    private readonly options: ResolvedToolSetsOptions,
    private readonly logger: { error(message: string, trace?: string): void },
    private readonly now: () => number = Date.now,
  ) {}

  /** Principals whose sets are cached now (for the bound's tests and health). */
  get cachedPrincipals(): number {
    return this.principals.size;
  }

  /** Drops one principal's cached sets, or every principal's without an id. */
  forget(principalId?: string): void {
    if (principalId === undefined) this.principals.clear();
    else this.principals.delete(principalId);
  }

  /** Decides a request's sets ahead of its checks; never rejects (a failure is kept for the request). */
  prepare(caller: McpCaller): void | Promise<void> {
    const request = caller.transportRequest;
    if (typeof request !== 'object' || request === null || this.decided.has(request)) return;
    let outcome: ToolSelection | Promise<ToolSelection>;
    try {
      outcome = this.decide(caller);
    } catch (error) {
      this.decided.set(request, error as McpError);
      return;
    }
    if (!(outcome instanceof Promise)) {
      this.decided.set(request, outcome);
      return;
    }
    return outcome.then(
      (selection) => void this.decided.set(request, selection),
      (error: unknown) => void this.decided.set(request, error as McpError),
    );
  }

  /** The request's sets when known without waiting; undefined otherwise (or when deciding failed). */
  peek(caller: McpCaller | undefined): ToolSelection | undefined {
    const request = caller?.transportRequest;
    if (typeof request === 'object' && request !== null) {
      const kept = this.decided.get(request);
      if (kept !== undefined) return kept instanceof McpError ? undefined : kept;
    }
    if (!caller || this.options.select) return undefined;
    return this.combine(undefined, caller.transportRequest);
  }

  /** The request's sets; rejects with -32603 when the app's `select` failed. */
  select(caller: McpCaller): ToolSelection | Promise<ToolSelection> {
    const request = caller.transportRequest;
    if (typeof request === 'object' && request !== null) {
      const kept = this.decided.get(request);
      if (kept instanceof McpError) throw kept;
      if (kept !== undefined) return kept;
    }
    return this.decide(caller);
  }

  private decide(caller: McpCaller): ToolSelection | Promise<ToolSelection> {
    const select = this.options.select;
    if (!select) return this.combine(undefined, caller.transportRequest);
    const id = caller.principal?.id;
    if (id !== undefined) {
      const cached = this.principals.get(id);
      if (cached && cached.expires > this.now()) {
        // Least recently used goes first when the bound is reached.
        this.principals.delete(id);
        this.principals.set(id, cached);
        return this.combine(cached.sets, caller.transportRequest);
      }
    }
    let answer: readonly string[] | undefined | Promise<readonly string[] | undefined>;
    const inflight = id === undefined ? undefined : this.pending.get(id);
    if (inflight) answer = inflight;
    else {
      try {
        answer = select({ principal: caller.principal, request: caller.transportRequest });
      } catch (error) {
        throw this.failure(error);
      }
    }
    if (!isPromiseLike(answer)) return this.settle(id, answer, caller, true);
    if (!inflight) {
      // A store that stalls must not hold the caller's requests: the answer is bounded in time.
      answer = withTimeout(Promise.resolve(answer), this.options.selectTimeoutMs);
      if (id !== undefined) {
        const shared = answer.finally(() => this.pending.delete(id));
        this.pending.set(id, shared);
        answer = shared;
      }
    }
    return (answer as Promise<readonly string[] | undefined>).then(
      (sets) => this.settle(id, sets, caller, !inflight),
      (error: unknown) => {
        throw this.failure(error);
      },
    );
  }

  private settle(id: string | undefined, answer: unknown, caller: McpCaller, keep: boolean): ToolSelection {
    let sets: readonly string[] | undefined;
    try {
      sets = checkAnswer(answer, this.options.sets);
    } catch (error) {
      throw this.failure(error);
    }
    if (keep) this.remember(id, sets);
    return this.combine(sets, caller.transportRequest);
  }

  private remember(id: string | undefined, sets: readonly string[] | undefined): void {
    if (id === undefined) return;
    this.principals.delete(id);
    this.principals.set(id, { sets, expires: this.now() + this.options.ttlMs });
    while (this.principals.size > this.options.maxPrincipals)
      this.principals.delete(this.principals.keys().next().value!);
  }

  private failure(error: unknown): McpError {
    const ref = randomUUID();
    const err = error instanceof Error ? error : new Error(String(error));
    this.logger.error(`toolSets.select failed (ref ${ref}): ${err.message}`, err.stack);
    return new McpError(
      ErrorCode.InternalError,
      `The tool sets of this caller could not be decided (reference ${ref}). The server log has the details.`,
    );
  }

  /** The app's sets narrowed by the URL's, or the URL's, or the default; and the mode. */
  private combine(granted: readonly string[] | undefined, request: unknown): ToolSelection {
    const query = this.query(request);
    let sets: ReadonlySet<string> | null;
    if (granted !== undefined) {
      sets = new Set(query.sets ? granted.filter((name) => query.sets!.includes(name)) : granted);
    } else if (query.sets) sets = new Set(query.sets.filter((name) => this.options.sets.has(name)));
    else sets = this.options.default === 'all' ? null : new Set(this.options.default);
    const mode = query.mode ?? this.options.mode;
    return { sets, mode, key: sets === null ? '*' : [...sets].sort().join(',') };
  }

  private query(request: unknown): { sets?: string[]; mode?: McpToolListMode } {
    const { queryParam, modeParam } = this.options;
    if (queryParam === false && modeParam === false) return {};
    const url = urlOf(request);
    if (url === undefined || !url.includes('?') || url.length > MAX_URL_LENGTH) return {};
    const params = new URLSearchParams(url.slice(url.indexOf('?') + 1));
    const out: { sets?: string[]; mode?: McpToolListMode } = {};
    const named = queryParam === false ? null : params.get(queryParam);
    if (named !== null)
      out.sets = named
        .split(',', MAX_QUERY_NAMES)
        .map((name) => name.trim())
        .filter(Boolean);
    const mode = modeParam === false ? null : params.get(modeParam);
    if (mode === 'progressive' || mode === 'full') out.mode = mode;
    return out;
  }
}

/** What `select` answered, checked: an array of defined set names, or undefined. */
function checkAnswer(sets: unknown, defined: ReadonlyMap<string, unknown>): readonly string[] | undefined {
  if (sets === undefined || sets === null) return undefined;
  if (!Array.isArray(sets) || sets.some((name) => typeof name !== 'string')) {
    throw new TypeError(
      'toolSets.select must return an array of set names, or undefined to fall through to the URL and the default.',
    );
  }
  const unknown = (sets as string[]).find((name) => !defined.has(name));
  if (unknown !== undefined) {
    throw new Error(
      `toolSets.select returned set "${unknown}", which "toolSets.sets" does not define (defined: ${[...defined.keys()].join(', ') || 'none'}). Return only defined set names.`,
    );
  }
  return sets as readonly string[];
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** Rejects when `promise` has not settled within `ms`; a later settlement of it is still handled (by the race). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`toolSets.select did not answer within ${ms} ms (the toolSets.selectTimeoutMs option).`)),
      ms,
    );
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** The request's URL (path and query) on Express, Fastify or a bare Node request. */
function urlOf(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const { originalUrl, url, raw } = request as { originalUrl?: unknown; url?: unknown; raw?: { url?: unknown } };
  const value = typeof originalUrl === 'string' ? originalUrl : typeof url === 'string' ? url : raw?.url;
  return typeof value === 'string' ? value : undefined;
}
