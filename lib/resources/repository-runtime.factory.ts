import type { McpAccess, McpListed } from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type {
  McpRepositoryPageRequest,
  PromptRepositoryRuntime,
  ResourceRepositoryRuntime,
} from '../protocol/repositories.js';
import { uriProblem } from '../protocol/resource-contents.js';
import type { PromptRepositoryOptions, ResourceRepositoryOptions } from './repository.decorator.js';
import type { McpInvoker } from '../execution/mcp-handler.factory.js';
import * as messages from '../common/mcp.messages.js';
import { checkListCache } from '../discovery/list-cache.js';
import { checkCache } from '../discovery/resource-runtime.factory.js';

/** What discovery found on a repository class: its invokers and access, per method. */
export interface RepositoryParts {
  /** `ClassName` (and the toolset), for messages. */
  site: string;
  invoke(method: string): McpInvoker;
  access(method: string, name: string): McpAccess;
}

const MIME = /^[^\s/]+\/[^\s]+$/;

/** The methods a repository class must have, checked at bootstrap. */
export function checkRepositoryMethods(
  prototype: object,
  methods: readonly string[],
  decorator: string,
  site: string,
): void {
  for (const method of methods) {
    if (typeof (prototype as Record<string, unknown>)[method] !== 'function') {
      throw new Error(
        messages.INVALID_REPOSITORY(
          site,
          `${decorator} needs a ${method}() method (implement ${decorator === '@ResourceRepository' ? 'McpResourceRepository' : 'McpPromptRepository'})`,
        ),
      );
    }
  }
}

/** Builds a resource repository's runtime; its list and read calls go through the Nest pipeline. */
export function buildResourceRepository(
  options: ResourceRepositoryOptions,
  parts: RepositoryParts,
): ResourceRepositoryRuntime {
  const { site } = parts;
  const prefix = options.uriPrefix;
  if (typeof prefix !== 'string' || prefix.length === 0)
    throw new Error(messages.INVALID_REPOSITORY(site, '"uriPrefix" must be a non-empty string such as "docs://kb/"'));
  const problem = /[{}]/.test(prefix) ? 'it contains "{" or "}"; a prefix is literal text' : uriProblem(prefix);
  if (problem !== undefined)
    throw new Error(messages.INVALID_REPOSITORY(site, `"uriPrefix" ${JSON.stringify(prefix)} is invalid: ${problem}`));
  if (options.mimeType !== undefined && (typeof options.mimeType !== 'string' || !MIME.test(options.mimeType))) {
    throw new Error(
      messages.INVALID_REPOSITORY(
        site,
        `"mimeType" ${JSON.stringify(options.mimeType)} is not a MIME type such as "text/plain"`,
      ),
    );
  }
  const list = parts.invoke('list');
  const read = parts.invoke('read');
  const readAccess = parts.access('read', prefix);
  return {
    uriPrefix: prefix,
    label: `${site} ("${prefix}")`,
    mimeType: options.mimeType,
    cache: checkCache(options.cache, site),
    ...listed(options, site),
    listAccess: parts.access('list', prefix),
    requiredScopes: readAccess.requiredScopes,
    authorize: readAccess.authorize,
    list: (request, context) => list(listCall('resources/list', prefix, request, context)),
    read: (uri, context) =>
      read({ method: 'resources/read', name: uri, rawArguments: { uri }, arguments: { uri }, context }),
  };
}

/** Builds a prompt repository's runtime. */
export function buildPromptRepository(
  options: PromptRepositoryOptions,
  parts: RepositoryParts,
): PromptRepositoryRuntime {
  const { site } = parts;
  const prefix = options.namePrefix;
  if (typeof prefix !== 'string' || prefix.length === 0)
    throw new Error(messages.INVALID_REPOSITORY(site, '"namePrefix" must be a non-empty string such as "kb_"'));
  const list = parts.invoke('list');
  const get = parts.invoke('get');
  const getAccess = parts.access('get', prefix);
  return {
    namePrefix: prefix,
    label: `${site} ("${prefix}")`,
    ...listed(options, site),
    listAccess: parts.access('list', prefix),
    requiredScopes: getAccess.requiredScopes,
    authorize: getAccess.authorize,
    list: (request, context) => list(listCall('prompts/list', prefix, request, context)),
    get: (name, args, context) =>
      get({ method: 'prompts/get', name, rawArguments: args, arguments: { name, arguments: args }, context }),
  };
}

function listed(options: { listCache?: McpListed['listCache'] }, site: string): McpListed {
  return { listCache: checkListCache(options.listCache, site) };
}

function listCall(method: string, prefix: string, request: McpRepositoryPageRequest, context: McpContext) {
  const rawArguments: JsonObject = request.cursor === undefined ? {} : { cursor: request.cursor };
  return { method, name: prefix, rawArguments, arguments: request, context };
}
