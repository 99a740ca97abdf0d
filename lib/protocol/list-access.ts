import type { ListsCacheOption, McpAccess, McpToolCatalog, McpListed } from './catalog.js';
import type { McpContext } from './context.js';
import type { CacheHint, JsonObject } from './mcp-types.js';
import { DEFAULT_PAGE_SIZE, PagedList, type PageAdjust } from './paging.js';
import { missingScopes } from './principal.js';
import type { ProtocolEra } from './versions.js';

type Result = JsonObject;

/** What lists need of the module configuration (a slice of the dispatcher's). */
export interface McpListsConfig {
  /** Cache hints for list results (modern era): one hint, or computed per list request. */
  listCache: ListsCacheOption;
  /** Items per page of list results. @default 100 */
  pageSize?: number;
  /** Leave out of every list what the caller's guards refuse. @default true */
  guardAwareLists?: boolean;
  /** Whether the transports enforce `requiredScopes`. @default false */
  enforceScopes?: boolean;
}

/**
 * The lists of every kind (tools, resources, templates, prompts, skills, repositories): one page
 * size, cursors bound to the catalog version, cache hints, and what a caller's scopes or guards
 * refuse left out.
 */
export class McpLists {
  constructor(
    private readonly config: McpListsConfig,
    private readonly catalog: Pick<McpToolCatalog, 'version'>,
    private readonly decorateResult: (result: Result, era: ProtocolEra) => Result,
  ) {}

  /**
   * A paged list of catalog items: one page size, cursors bound to the catalog version, and
   * modern pages carrying the list cache hints, for tools, resources, templates and prompts alike.
   */
  pagedList<T extends McpAccess>(
    key: string,
    method: string,
    items: () => readonly T[],
    describe: (item: T, era: ProtocolEra) => unknown,
  ): PagedList<T> {
    const { listCache } = this.config;
    // Static hints (the list's and its items') are baked into the cached pages; a function
    // anywhere makes listPage recompute the hints per request.
    const staticBase: CacheHint = typeof listCache === 'function' ? { ttlMs: 0, cacheScope: 'private' } : listCache;
    return new PagedList<T>({
      key,
      method,
      pageSize: this.config.pageSize ?? DEFAULT_PAGE_SIZE,
      version: () => this.catalog.version,
      items,
      describe,
      finishModern: (page, pageItems) =>
        this.decorateResult({ ...page, ...combineHints(staticBase, pageItems, undefined) }, 'modern'),
      restricted: (item) => item.visibleTo !== undefined || this.scopesApply(item) || this.guardsApply(item),
      dynamic: (item) => typeof listCache === 'function' || typeof (item as McpListed).listCache === 'function',
    });
  }

  /**
   * One page of a list for this caller, leaving out what its scopes or guards refuse (the guards
   * run as for a call, with the list's method, so `McpExecutionContext.isListing()` is true).
   * Without such items the cached pages are served as they are; otherwise the page is built for
   * this caller and marked `cacheScope: "private"`.
   */
  listPage<T extends McpAccess>(
    list: PagedList<T>,
    params: JsonObject,
    ctx: McpContext,
    era: ProtocolEra,
  ): Result | Promise<Result> {
    const adjust = list.dynamic() ? this.perRequestHints<T>(list, ctx) : undefined;
    const hidden = this.hidden(list.restricted(), ctx);
    if (hidden === undefined) return list.page(params.cursor, era, undefined, adjust);
    return hidden.then((set) => list.page(params.cursor, era, set, adjust));
  }

  /**
   * What this caller may not see among `restricted` items (its scopes, guards, client
   * capabilities refuse), its guards asked as for `method` (the request's own by default):
   * undefined when there is nothing to check.
   */
  hidden<T extends McpAccess>(restricted: readonly T[], ctx: McpContext, method?: string): Promise<Set<T>> | undefined {
    if (restricted.length === 0) return undefined;
    return Promise.all(restricted.map((item) => this.visible(item, ctx, method))).then((visible) => {
      const hidden = new Set<T>();
      visible.forEach((ok, i) => !ok && hidden.add(restricted[i]));
      return hidden;
    });
  }

  /** The cache hints of one page for this caller, when the list's or an item's hint is a function. */
  private perRequestHints<T>(list: PagedList<T>, ctx: McpContext): PageAdjust<T> {
    const { listCache } = this.config;
    return (page, items) => {
      const base = typeof listCache === 'function' ? listCache(list.key, ctx) : listCache;
      return { ...page, ...combineHints(base, items as readonly McpListed[], ctx) };
    };
  }

  private scopesApply(item: McpAccess): boolean {
    return (
      this.config.enforceScopes === true &&
      (this.config.guardAwareLists !== false || item.conceal === true) &&
      (item.requiredScopes?.length ?? 0) > 0
    );
  }

  private guardsApply(item: McpAccess): boolean {
    return (this.config.guardAwareLists !== false || item.conceal === true) && item.authorize !== undefined;
  }

  private visible(item: McpAccess, ctx: McpContext, method = ctx.method): boolean | Promise<boolean> {
    if (item.visibleTo?.(ctx.clientCapabilities) === false) return false;
    if (this.scopesApply(item) && missingScopes(item.requiredScopes!, ctx.auth?.scopes).length > 0) return false;
    if (!this.guardsApply(item)) return true;
    return item.authorize!(ctx, method).then(
      () => true,
      () => false,
    );
  }

  /**
   * Whether a caller may list a repository: its scopes (when enforced), then its guards. A
   * repository's items cannot be listed without running it, so this holds even with
   * `guardAwareLists: false`.
   */
  mayList(access: McpAccess, ctx: McpContext): boolean | Promise<boolean> {
    if (
      this.config.enforceScopes === true &&
      (access.requiredScopes?.length ?? 0) > 0 &&
      missingScopes(access.requiredScopes!, ctx.auth?.scopes).length > 0
    ) {
      return false;
    }
    if (!access.authorize) return true;
    return access.authorize(ctx, ctx.method).then(
      () => true,
      () => false,
    );
  }

  /** The modern cache hint of a page built per request (a repository's), from the list's hint and its items'. */
  pageHint(key: string, ctx: McpContext, items: readonly McpListed[]): CacheHint {
    const { listCache } = this.config;
    return combineHints(typeof listCache === 'function' ? listCache(key, ctx) : listCache, items, ctx);
  }
}

/**
 * A page's hints from the list's and its items': the shortest TTL, and `private` when any is.
 * Function hints are skipped without a caller (the cached pages) and computed with one.
 */
function combineHints(base: CacheHint, items: readonly unknown[], ctx: McpContext | undefined): CacheHint {
  let { ttlMs, cacheScope } = base;
  for (const item of items) {
    const declared = (item as McpListed).listCache;
    if (declared === undefined) continue;
    if (typeof declared === 'function' && ctx === undefined) continue;
    const hint = typeof declared === 'function' ? declared(ctx!) : declared;
    if (!hint) continue;
    if (typeof hint.ttlMs === 'number' && Number.isSafeInteger(hint.ttlMs) && hint.ttlMs >= 0)
      ttlMs = Math.min(ttlMs, hint.ttlMs);
    if (hint.cacheScope === 'private') cacheScope = 'private';
  }
  return { ttlMs, cacheScope };
}
