import { createHash } from 'node:crypto';
import type { McpContext } from '../protocol/context.js';
import { McpError } from '../protocol/errors.js';
import type { McpFeatureHost, McpFeatureOptions } from '../protocol/feature-host.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import { decodeCursor, encodeCursor } from '../protocol/paging.js';
import { uriProblem } from '../protocol/resource-contents.js';
import type { ProtocolEra } from '../protocol/versions.js';
import { McpMethods } from '../protocol/methods.js';
import { SKILLS_EXTENSION, type DirectoryChild, type SkillRuntime } from './skill-entry.js';

/** The skills one module serves, built at bootstrap. */
export interface SkillCatalog {
  /** Bound into directory cursors: a change expires them. */
  readonly version: number;
  skills(): readonly SkillRuntime[];
  /** The skill whose SKILL.md is at this URI. */
  skill(uri: string): SkillRuntime | undefined;
  /**
   * A directory of some skill: the skills it belongs to, outermost first, each with its own
   * children of it (nested skills share directories).
   */
  directory(uri: string): ReadonlyArray<{ skill: SkillRuntime; children: readonly DirectoryChild[] }> | undefined;
}

export interface SkillsFeatureOptions extends McpFeatureOptions {
  /** Serve `resources/directory/read` and declare `directoryRead: true`. */
  directoryRead: boolean;
  /** Children per page of `resources/directory/read`. */
  pageSize: number;
}

/**
 * Installs SEP-2640 (`io.modelcontextprotocol/skills`) on both eras: declares the extension
 * inline, and serves `skills/list` (one skill entry per item, so an entry never spans pages),
 * `skills/get` and, with `directoryRead`, `resources/directory/read`. The skills' files are
 * ordinary resources the caller's catalog already serves through `resources/read`. A skill its
 * guards hide from a caller is absent for that caller: left out of lists, and `-32602` like an
 * unknown URI, so that a caller cannot probe for it.
 */
export function installSkills(host: McpFeatureHost, catalog: SkillCatalog, options: SkillsFeatureOptions): void {
  host.declareExtension(SKILLS_EXTENSION, options.directoryRead ? { directoryRead: true } : {});
  const list = host.pagedList(
    'skills',
    'skills/list',
    () => catalog.skills(),
    (skill) => skill.entry,
  );
  host.define(McpMethods.skillsList, { handler: (params, ctx) => host.listPage(list, params, ctx, ctx.era) });
  const byUri = (params: JsonObject) =>
    typeof params.uri === 'string' ? catalog.skill(params.uri)?.requiredScopes : undefined;
  host.define(McpMethods.skillsGet, {
    scopes: byUri,
    handler: async (params, ctx) => {
      const uri = requestUri(params, 'skills/get', "the URI of a skill's SKILL.md");
      const skill = catalog.skill(uri);
      if (!skill || !(await visible(skill, ctx)))
        throw unknown(
          uri,
          'skill',
          'Call skills/list to see the skills this server offers; a skill URI ends in /SKILL.md.',
        );
      return withCache({ skill: skill.entry }, ctx.era, options);
    },
  });
  if (!options.directoryRead) return;
  const directoryScopes = (params: JsonObject): readonly string[] | undefined => {
    if (typeof params.uri !== 'string') return undefined;
    return catalog.directory(params.uri)?.[0]?.skill.requiredScopes;
  };
  host.define(McpMethods.directoryRead, {
    scopes: directoryScopes,
    handler: async (params, ctx) => {
      const uri = requestUri(
        params,
        'resources/directory/read',
        'the URI of a directory resource (mimeType inode/directory), without a trailing slash',
      );
      const owners = catalog.directory(uri) ?? [];
      const seen = owners.length ? await Promise.all(owners.map(({ skill }) => visible(skill, ctx))) : [];
      // Only the children of skills this caller may see: a skill nested in a guarded one's folder
      // opens that folder's own files to no one the guarded skill hides from.
      const children = mergeChildren(owners.filter((_, i) => seen[i]).map((owner) => owner.children));
      if (!seen.some(Boolean)) {
        throw unknown(
          uri,
          'directory',
          'This method lists directory resources only (a skill root such as skill://name, or a folder in it), not files; read files with resources/read.',
        );
      }
      const kind = `dir:${createHash('sha256').update(uri).digest('base64url').slice(0, 16)}`;
      const total = children.length;
      const offset = decodeCursor(params.cursor, {
        kind,
        method: 'resources/directory/read',
        version: catalog.version,
        pageSize: options.pageSize,
        total,
      });
      const end = offset + options.pageSize;
      const result: JsonObject = { resources: children.slice(offset, end) };
      if (end < total) result.nextCursor = encodeCursor(kind, catalog.version, end);
      return withCache(result, ctx.era, options);
    },
  });
}

/** The children of one directory as several skills list it: once each, in name order. */
function mergeChildren(lists: ReadonlyArray<readonly DirectoryChild[]>): readonly DirectoryChild[] {
  if (lists.length === 1) return lists[0]!;
  const byUri = new Map<string, DirectoryChild>();
  for (const list of lists) for (const child of list) if (!byUri.has(child.uri)) byUri.set(child.uri, child);
  return [...byUri.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function visible(skill: SkillRuntime, ctx: McpContext): Promise<boolean> {
  if (!skill.authorize) return Promise.resolve(true);
  return skill.authorize(ctx, ctx.method).then(
    () => true,
    () => false,
  );
}

function requestUri(params: JsonObject, method: string, what: string): string {
  const uri = params.uri;
  if (typeof uri !== 'string')
    throw new McpError(ErrorCode.InvalidParams, `${method} needs "params.uri", ${what}, as a string.`);
  const problem = uriProblem(uri);
  if (problem !== undefined)
    throw new McpError(ErrorCode.InvalidParams, `Invalid URI ${quote(uri)} for ${method}: ${problem}.`, {
      uri: uri.slice(0, 1024),
    });
  return uri;
}

function unknown(uri: string, what: string, hint: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `No ${what} is served at ${quote(uri)}. ${hint}`, { uri });
}

/** Modern results carry the read cache hints, as `resources/read` does. */
function withCache(result: JsonObject, era: ProtocolEra, options: McpFeatureOptions): JsonObject {
  return era === 'modern'
    ? { ...result, ttlMs: options.readCache.ttlMs, cacheScope: options.readCache.cacheScope }
    : result;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
