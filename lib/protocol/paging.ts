import { McpError } from './errors.js';
import { freezeResult } from './serialize.js';
import { ErrorCode } from './json-rpc.js';
import type { JsonObject } from './mcp-types.js';
import type { ProtocolEra } from './versions.js';

/** Items per page of `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list`. */
export const DEFAULT_PAGE_SIZE = 100;

/** Longer strings cannot be a cursor this server issued; refusing them early bounds the work. */
const MAX_CURSOR_LENGTH = 256;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * What a cursor carries: the list it belongs to (`k`), the catalog version it was issued for
 * (`v`) and the offset of the page it points at (`o`). Clients must treat it as opaque; it is
 * base64url JSON only so that it stays small and needs no server-side state.
 */
interface CursorPayload {
  k: string;
  v: number;
  o: number;
}

/** Encodes the cursor of the page that starts at `offset`. */
export function encodeCursor(kind: string, version: number, offset: number): string {
  const payload: CursorPayload = { k: kind, v: version, o: offset };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/**
 * Decodes a request's `cursor` into a page offset. An absent (or `null`) cursor and the empty
 * string both mean the first page (2026-07-28 says an empty cursor is valid and is not "the end").
 *
 * @throws McpError -32602 when the cursor was not issued by this list, or was issued for an older
 *   catalog version (the list changed, so its pages moved).
 */
export function decodeCursor(
  cursor: unknown,
  expected: { kind: string; method: string; version: number; pageSize: number; total: number },
): number {
  if (cursor === undefined || cursor === null || cursor === '') return 0;
  const { kind, method, version, pageSize, total } = expected;
  const invalid = (): McpError => invalidCursorError(method);
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH || !BASE64URL.test(cursor)) throw invalid();
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!isPayload(payload) || payload.k !== kind) throw invalid();
  if (payload.v !== version) throw expiredCursorError(method);
  if (payload.o % pageSize !== 0 || (payload.o > 0 && payload.o >= total)) throw invalid();
  return payload.o;
}

/** -32602 for a cursor this server did not issue for the list (tampered, foreign, another caller's). */
export function invalidCursorError(method: string): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    `Invalid cursor for ${method}: it is not a cursor this server issued for this list. Send the nextCursor of a previous ${method} result as is, or omit the cursor to get the first page.`,
  );
}

/** -32602 for a cursor issued before the catalog changed. */
export function expiredCursorError(method: string): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    `Expired cursor for ${method}: the list changed after this cursor was issued, so its pages moved. Call ${method} without a cursor to start again from the first page.`,
  );
}

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const { k, v, o } = value as Record<string, unknown>;
  return typeof k === 'string' && Number.isSafeInteger(v) && Number.isSafeInteger(o) && (o as number) >= 0;
}

/** How one paged list is read from the catalog and rendered. */
export interface PagedListSpec<T> {
  /** The result key (`tools`, `resources`, `resourceTemplates`, `prompts`); also binds cursors to this list. */
  key: string;
  /** The list method, for error messages (`tools/list`). */
  method: string;
  pageSize: number;
  /** The catalog version; a change rebuilds the pages and expires older cursors. */
  version(): number;
  /** The items in their deterministic (registration) order. */
  items(): readonly T[];
  /** The descriptor of one item as the era advertises it. */
  describe(item: T, era: ProtocolEra): unknown;
  /** Completes a modern-era page of `items`: cache hints, `resultType` and serverInfo `_meta`. */
  finishModern(page: JsonObject, items: readonly T[]): JsonObject;
  /** Whether an item may be hidden from some callers (scopes, guards); decided once per catalog version. */
  restricted?(item: T): boolean;
  /** Whether an item's cache hint is computed per request; decided once per catalog version. */
  dynamic?(item: T): boolean;
}

/** Rewrites a modern page's cache hints for one request, from the items on the page. */
export type PageAdjust<T> = (page: JsonObject, items: readonly T[]) => JsonObject;

interface PagedState<T> {
  version: number;
  items: readonly T[];
  restricted: readonly T[];
  dynamic: boolean;
  pages: Record<ProtocolEra, Array<JsonObject | undefined>>;
}

/**
 * One list method's pages, built on first request and cached until the catalog version changes,
 * so that a list request does no work beyond decoding its cursor.
 */
export class PagedList<T> {
  private state?: PagedState<T>;

  constructor(private readonly spec: PagedListSpec<T>) {}

  /** The result key this list answers under (`tools`, `prompts`, ...). */
  get key(): string {
    return this.spec.key;
  }

  /**
   * The page a request's `cursor` points at, for its era. With `hidden` (items the caller may not
   * see, from guard-aware listing) the page is built for this caller alone and marked `private`.
   */
  page(cursor: unknown, era: ProtocolEra, hidden?: ReadonlySet<T>, adjust?: PageAdjust<T>): JsonObject {
    const { spec } = this;
    const version = spec.version();
    const state = this.current();
    if (hidden || (adjust && era === 'modern')) {
      const items = hidden?.size ? state.items.filter((item) => !hidden.has(item)) : state.items;
      const offset = decodeCursor(cursor, {
        kind: spec.key,
        method: spec.method,
        version,
        pageSize: spec.pageSize,
        total: items.length,
      });
      const end = offset + spec.pageSize;
      const slice = items.slice(offset, end);
      const body: JsonObject = { [spec.key]: slice.map((item) => spec.describe(item, era)) };
      if (end < items.length) body.nextCursor = encodeCursor(spec.key, version, end);
      if (era !== 'modern') return body;
      const finished = adjust ? adjust(spec.finishModern(body, slice), slice) : spec.finishModern(body, slice);
      // A page some callers see differently is never shared, whatever the hints say.
      return hidden ? { ...finished, cacheScope: 'private' } : finished;
    }
    const offset = decodeCursor(cursor, {
      kind: spec.key,
      method: spec.method,
      version,
      pageSize: spec.pageSize,
      total: state.items.length,
    });
    const index = offset / spec.pageSize;
    const cached = state.pages[era][index];
    if (cached) return cached;
    const end = offset + spec.pageSize;
    const slice = state.items.slice(offset, end);
    const body: JsonObject = { [spec.key]: slice.map((item) => spec.describe(item, era)) };
    if (end < state.items.length) body.nextCursor = encodeCursor(spec.key, version, end);
    const page = freezeResult(era === 'modern' ? spec.finishModern(body, slice) : body);
    state.pages[era][index] = page;
    return page;
  }

  /** Whether some item's (or the list's) cache hint is computed per request. */
  dynamic(): boolean {
    return this.current().dynamic;
  }

  /** The items some callers may not see; empty when every caller sees the same list. */
  restricted(): readonly T[] {
    return this.current().restricted;
  }

  private current(): PagedState<T> {
    const { spec } = this;
    const version = spec.version();
    let state = this.state;
    if (!state || state.version !== version) {
      const items = spec.items();
      const restricted = spec.restricted ? items.filter((item) => spec.restricted!(item)) : [];
      const dynamic = spec.dynamic ? items.some((item) => spec.dynamic!(item)) : false;
      state = { version, items, restricted, dynamic, pages: { legacy: [], modern: [] } };
      this.state = state;
    }
    return state;
  }
}
