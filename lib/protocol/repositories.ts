import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { firstValueFrom, type Observable } from 'rxjs';
import type { McpAccess, McpListed } from './catalog.js';
import type { McpContext } from './context.js';
import { handlerError, lastValue, type McpFeatureHost, type McpFeatureOptions } from './feature-host.js';
import type { CacheHint, JsonObject } from './mcp-types.js';
import { DEFAULT_PAGE_SIZE, expiredCursorError, invalidCursorError, type PagedList } from './paging.js';
import { isPlainObject, uriProblem } from './resource-contents.js';
import type { ProtocolEra } from './versions.js';

/**
 * What a repository is asked for: the page after `cursor` (its own cursor, as it returned it;
 * absent for its first page), with at most `limit` items.
 *
 * @publicApi
 */
export interface McpRepositoryPageRequest {
  cursor?: string;
  limit: number;
}

/** What both kinds of repositories share, as the list merge sees them. */
interface RepositoryRuntime extends McpAccess, McpListed {
  /** `ClassName ("docs://kb/")`, for messages. */
  readonly label: string;
  /** Scopes and guards of listing (the `list` method); the runtime's own are those of reading. */
  readonly listAccess: McpAccess;
  list(request: McpRepositoryPageRequest, ctx: McpContext): Observable<unknown>;
}

/** A resource repository as the dispatcher sees it: every URI under `uriPrefix` is its own. */
export interface ResourceRepositoryRuntime extends RepositoryRuntime {
  readonly uriPrefix: string;
  readonly mimeType?: string;
  /** Overrides the module's read cache hint (modern era). */
  readonly cache?: CacheHint;
  read(uri: string, ctx: McpContext): Observable<unknown>;
}

/** A prompt repository as the dispatcher sees it: every prompt name under `namePrefix` is its own. */
export interface PromptRepositoryRuntime extends RepositoryRuntime {
  readonly namePrefix: string;
  get(name: string, args: JsonObject, ctx: McpContext): Observable<unknown>;
}

/** What repositories need from the module configuration. */
export interface RepositoryLimits {
  /** Signs the cursors of repository pages (the requestState secret, shared through Redis when it is). */
  secret: Buffer;
  /** Items a repository is asked for per page (the module's `pageSize`). */
  pageSize: number;
  /** `limits.repositoryPageItems`: a page with more items is refused. */
  maxPageItems: number;
  /** `limits.repositoryCursorLength`: a longer cursor of the repository's own is refused. */
  maxCursorLength: number;
}

/** Defaults for a dispatcher built without McpModule (unit tests, the in-process transport). */
export function defaultRepositoryLimits(pageSize = DEFAULT_PAGE_SIZE): RepositoryLimits {
  return { secret: randomBytes(32), pageSize, maxPageItems: 1000, maxCursorLength: 1024 };
}

interface Position {
  /** Index of the repository, in registration order. */
  repository: number;
  /** The repository's own cursor; absent for its first page. */
  inner?: string;
}

/**
 * The cursors of repository pages: the list, the catalog version, the repository and its own
 * cursor, base64url JSON followed by an HMAC that also covers who holds it (see {@link cursorHolder})
 * and the repository it points into (its label: class and prefix). A client can neither forge a
 * repository cursor nor replay another caller's, nor carry one to another McpModule that shares
 * the secret; static pages keep their unsigned cursors (which never contain a ".").
 */
export class RepositoryCursors {
  readonly maxLength: number;

  constructor(private readonly limits: RepositoryLimits) {
    // JSON may escape each character of the inner cursor into six, base64 grows by 4/3, and the
    // signature adds 44: anything longer cannot be a cursor this server issued.
    this.maxLength = Math.ceil(((limits.maxCursorLength * 6 + 96) * 4) / 3) + 44;
  }

  static isRepositoryCursor(cursor: unknown): cursor is string {
    return typeof cursor === 'string' && cursor.includes('.');
  }

  encode(kind: string, version: number, position: Position, holder: string, repository: string): string {
    const payload: JsonObject = { k: kind, v: version, r: position.repository };
    if (position.inner !== undefined) payload.c = position.inner;
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${body}.${this.sign(body, holder, repository)}`;
  }

  /**
   * The position a cursor points at. Its body is read before the signature is checked, only to
   * learn which repository's label the signature covers; nothing of it is used unless it verifies.
   */
  decode(
    cursor: string,
    expected: {
      kind: string;
      method: string;
      version: number;
      holder: string;
      repository(index: number): string | undefined;
    },
  ): Position {
    const invalid = () => invalidCursorError(expected.method);
    if (cursor.length > this.maxLength) throw invalid();
    const dot = cursor.indexOf('.');
    const body = cursor.slice(0, dot);
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    const repository =
      isPlainObject(payload) && Number.isSafeInteger(payload.r) ? expected.repository(payload.r as number) : undefined;
    if (repository === undefined) throw invalid();
    const signature = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const wanted = Buffer.from(this.sign(body, expected.holder, repository), 'base64url');
    if (signature.length !== wanted.length || !timingSafeEqual(signature, wanted)) throw invalid();
    const verified = payload as JsonObject;
    if (verified.k !== expected.kind || (verified.c !== undefined && typeof verified.c !== 'string')) throw invalid();
    if (verified.v !== expected.version) throw expiredCursorError(expected.method);
    return { repository: verified.r as number, ...(verified.c !== undefined ? { inner: verified.c as string } : {}) };
  }

  private sign(body: string, holder: string, repository: string): string {
    // The body is base64url (no newline) and comes last; the holder is escaped so that no holder
    // and label can pass for another pair.
    return createHmac('sha256', this.limits.secret)
      .update(`mcp-list-cursor\n${JSON.stringify([holder, repository])}\n${body}`)
      .digest('base64url');
  }
}

/**
 * Who a repository cursor belongs to: the principal when there is one; else the 2025-11-25
 * session, which only its client holds (anonymous callers are many people, and one anonymous
 * client must not page on with another's cursor); else nobody in particular (an anonymous
 * 2026-07-28 request has nothing that tells one caller from another).
 */
export function cursorHolder(ctx: McpContext): string {
  if (ctx.principal !== undefined) return `principal:${ctx.principal}`;
  const session = ctx.sessionId;
  return session !== undefined ? `session:${session}` : '';
}

/** How one list merges its repositories' pages after its static items. */
export interface RepositoryListSpec<R extends RepositoryRuntime> {
  /** `resources` or `prompts`: the result key, also bound into cursors. */
  key: string;
  method: string;
  /** What the repositories are called in messages: `Resource repository`, `Prompt repository`. */
  what: string;
  repositories(): readonly R[];
  /** The catalog version, bound into cursors. */
  version(): number;
  /** Checks and copies one listed item; throws a message naming what is wrong. */
  item(raw: unknown, repository: R): JsonObject;
}

/**
 * The handler of a list method that has repositories: its static pages as they are while no
 * repository is registered, and merged with the repositories' pages otherwise.
 */
export function repositoryAwareList<T extends McpAccess, R extends RepositoryRuntime>(
  host: McpFeatureHost,
  list: PagedList<T>,
  spec: RepositoryListSpec<R>,
  options: McpFeatureOptions,
): (params: JsonObject, ctx: McpContext) => JsonObject | Promise<JsonObject> {
  const limits = options.repositories ?? defaultRepositoryLimits();
  const cursors = new RepositoryCursors(limits);
  return (params, ctx) =>
    spec.repositories().length === 0
      ? host.listPage(list, params, ctx, ctx.era)
      : repositoryListPage(host, list, spec, cursors, limits, options, params, ctx, ctx.era);
}

/**
 * One page of a list with repositories: the static items first (the list's own cached pages and
 * cursors, untouched), then each repository's pages in registration order, one repository fetch
 * per request. Repositories the caller may not list (scopes, guards) are skipped.
 */
export async function repositoryListPage<T extends McpAccess, R extends RepositoryRuntime>(
  host: McpFeatureHost,
  list: PagedList<T>,
  spec: RepositoryListSpec<R>,
  cursors: RepositoryCursors,
  limits: RepositoryLimits,
  options: McpFeatureOptions,
  params: JsonObject,
  ctx: McpContext,
  era: ProtocolEra,
): Promise<JsonObject> {
  const repositories = spec.repositories();
  const cursor = params.cursor;
  const holder = cursorHolder(ctx);
  const bind = {
    kind: spec.key,
    method: spec.method,
    version: spec.version(),
    holder,
    repository: (index: number) => repositories[index]?.label,
  };
  const nextVisible = async (from: number): Promise<number | undefined> => {
    for (let index = from; index < repositories.length; index++) {
      if (await host.mayList(repositories[index]!.listAccess, ctx)) return index;
    }
    return undefined;
  };
  const encode = (position: Position) =>
    cursors.encode(spec.key, bind.version, position, holder, repositories[position.repository]!.label);

  const servePage = async (position: Position): Promise<JsonObject> => {
    const index = await nextVisible(position.repository);
    // A repository that turned invisible to this caller (its rights changed) ends its pages.
    if (index === undefined) return finish({ [spec.key]: [] }, []);
    const repository = repositories[index]!;
    const inner = index === position.repository ? position.inner : undefined;
    const request: McpRepositoryPageRequest = {
      limit: limits.pageSize,
      ...(inner !== undefined ? { cursor: inner } : {}),
    };
    const subject = `${spec.what} ${repository.label}`;
    let raw: unknown;
    try {
      raw = await firstValueFrom(lastValue(repository.list(request, ctx)));
    } catch (error) {
      throw handlerError(error, subject, options);
    }
    let items: JsonObject[];
    let next: string | undefined;
    try {
      ({ items, next } = readPage(raw, spec, repository, limits));
    } catch (error) {
      throw handlerError(
        new Error(`its list() returned an invalid page: ${(error as Error).message}`),
        subject,
        options,
      );
    }
    const body: JsonObject = { [spec.key]: items };
    if (next !== undefined) body.nextCursor = encode({ repository: index, inner: next });
    else {
      const following = await nextVisible(index + 1);
      if (following !== undefined) body.nextCursor = encode({ repository: following });
    }
    return finish(body, [repository]);
  };

  const finish = (body: JsonObject, listed: readonly R[]): JsonObject => {
    if (era !== 'modern') return body;
    const hint = host.pageHint(spec.key, ctx, listed);
    const caller =
      ctx.principal !== undefined ||
      listed.some((r) => r.listAccess.authorize !== undefined || (r.listAccess.requiredScopes?.length ?? 0) > 0);
    return host.decorate({ ...body, ttlMs: hint.ttlMs, cacheScope: caller ? 'private' : hint.cacheScope }, 'modern');
  };

  if (RepositoryCursors.isRepositoryCursor(cursor)) {
    return servePage(cursors.decode(cursor, bind));
  }
  const page = await host.listPage(list, params, ctx, era);
  if (page.nextCursor !== undefined) return page;
  const first = await nextVisible(0);
  if (first === undefined) return page;
  const opening = cursor === undefined || cursor === null || cursor === '';
  if (opening && Array.isArray(page[spec.key]) && (page[spec.key] as unknown[]).length === 0)
    return servePage({ repository: first });
  // The cached last static page gets the cursor into the first repository; bound to a principal
  // or a session, it is this caller's alone.
  const joined: JsonObject = { ...page, nextCursor: encode({ repository: first }) };
  if (era === 'modern' && holder !== '') joined.cacheScope = 'private';
  return joined;
}

function readPage<R extends RepositoryRuntime>(
  raw: unknown,
  spec: RepositoryListSpec<R>,
  repository: R,
  limits: RepositoryLimits,
): { items: JsonObject[]; next?: string } {
  if (!isPlainObject(raw) || !Array.isArray(raw[spec.key])) {
    throw new Error(`return { ${spec.key}: [...], nextCursor?: string }`);
  }
  const listed = raw[spec.key] as unknown[];
  if (listed.length > limits.maxPageItems) {
    throw new Error(
      `it holds ${listed.length} items; the limit is ${limits.maxPageItems} (limits.repositoryPageItems). Return at most request.limit (${limits.pageSize}) items and a nextCursor for the rest.`,
    );
  }
  const items = listed.map((item, index) => {
    try {
      return spec.item(item, repository);
    } catch (error) {
      throw new Error(`item ${index}: ${(error as Error).message}`);
    }
  });
  const next = raw.nextCursor;
  if (next === undefined || next === null) return { items };
  if (typeof next !== 'string' || next.length === 0)
    throw new Error('"nextCursor" must be a non-empty string, or absent on the last page');
  if (next.length > limits.maxCursorLength) {
    throw new Error(
      `its nextCursor is ${next.length} characters long; the limit is ${limits.maxCursorLength} (limits.repositoryCursorLength). Keep cursors short (an offset or the last key), or raise the limit.`,
    );
  }
  return { items, next };
}

const text = (value: unknown, field: string): string | undefined => {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new Error(`"${field}" must be a string`);
  return value;
};

/** Checks and copies one resource a repository listed: its URI must be under the repository's prefix. */
export function repositoryResource(raw: unknown, repository: ResourceRepositoryRuntime): JsonObject {
  if (!isPlainObject(raw)) throw new Error('it is not an object { uri, name, ... }');
  const { uri, name } = raw;
  if (typeof uri !== 'string' || !uri.startsWith(repository.uriPrefix)) {
    throw new Error(
      `its "uri" ${JSON.stringify(typeof uri === 'string' ? uri.slice(0, 200) : (uri ?? null))} is not under the repository's prefix "${repository.uriPrefix}"`,
    );
  }
  const problem = uriProblem(uri);
  if (problem !== undefined) throw new Error(`its "uri" is invalid: ${problem}`);
  if (typeof name !== 'string' || name.length === 0) throw new Error('"name" must be a non-empty string');
  const out: JsonObject = { uri, name };
  for (const field of ['title', 'description', 'mimeType'] as const) {
    const value = text(raw[field], field);
    if (value !== undefined) out[field] = value;
  }
  if (out.mimeType === undefined && repository.mimeType !== undefined) out.mimeType = repository.mimeType;
  if (raw.size !== undefined) {
    if (!Number.isSafeInteger(raw.size) || (raw.size as number) < 0)
      throw new Error('"size" must be a non-negative integer (bytes)');
    out.size = raw.size;
  }
  copyObjects(raw, out);
  return out;
}

/** Checks and copies one prompt a repository listed: its name must start with the repository's prefix. */
export function repositoryPrompt(raw: unknown, repository: PromptRepositoryRuntime): JsonObject {
  if (!isPlainObject(raw)) throw new Error('it is not an object { name, description?, arguments? }');
  const { name } = raw;
  if (typeof name !== 'string' || !name.startsWith(repository.namePrefix)) {
    throw new Error(
      `its "name" ${JSON.stringify(typeof name === 'string' ? name.slice(0, 200) : (name ?? null))} does not start with the repository's prefix "${repository.namePrefix}"`,
    );
  }
  const out: JsonObject = { name };
  for (const field of ['title', 'description'] as const) {
    const value = text(raw[field], field);
    if (value !== undefined) out[field] = value;
  }
  if (raw.arguments !== undefined) {
    if (!Array.isArray(raw.arguments))
      throw new Error('"arguments" must be an array of { name, description?, required? }');
    out.arguments = raw.arguments.map((argument, index) => {
      if (!isPlainObject(argument) || typeof argument.name !== 'string' || argument.name.length === 0) {
        throw new Error(`arguments[${index}] must be { name: a non-empty string, description?, required? }`);
      }
      const copy: JsonObject = { name: argument.name };
      const description = text(argument.description, `arguments[${index}].description`);
      if (description !== undefined) copy.description = description;
      if (argument.required !== undefined) {
        if (typeof argument.required !== 'boolean') throw new Error(`arguments[${index}].required must be a boolean`);
        copy.required = argument.required;
      }
      return copy;
    });
  }
  copyObjects(raw, out);
  return out;
}

function copyObjects(raw: JsonObject, out: JsonObject): void {
  for (const field of ['annotations', '_meta'] as const) {
    if (raw[field] === undefined) continue;
    if (!isPlainObject(raw[field])) throw new Error(`"${field}" must be an object`);
    out[field] = raw[field];
  }
  if (raw.icons !== undefined) {
    if (!Array.isArray(raw.icons) || !raw.icons.every((icon) => isPlainObject(icon) && typeof icon.src === 'string')) {
      throw new Error('"icons" must be an array of { src, mimeType?, sizes? }');
    }
    out.icons = raw.icons;
  }
}

/**
 * Whether a URI's path walks up or in place: a `.` or `..` segment, written plainly, percent-encoded
 * (`%2e%2e`) or hidden behind an encoded or backslash separator (`..%2F`, `..\`). Such a URI
 * under a repository's prefix names something outside it once resolved (RFC 3986 removes dot
 * segments), so no repository is asked for it.
 */
export function hasDotSegment(uri: string): boolean {
  const path = uri.split(/[?#]/, 1)[0]!;
  for (const raw of path.split('/')) {
    if (!raw.includes('.') && !/%2e/i.test(raw)) continue;
    let segment = raw;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      // Not valid percent-encoding: checked as written.
    }
    if (segment.split(/[\\/]/).some((part) => part === '.' || part === '..')) return true;
  }
  return false;
}
