import { catchError, defer, from, map, switchMap, throwError, type Observable } from 'rxjs';
import type { McpFeatureCatalog } from '../protocol/catalog.js';
import { isContentBlock } from '../protocol/content.js';
import type { McpContext } from '../protocol/context.js';
import { McpError } from '../protocol/errors.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import {
  meetGuards,
  handlerError,
  lastValue,
  type McpFeatureHost,
  type McpFeatureOptions,
} from '../protocol/feature-host.js';
import { McpMethods } from '../protocol/methods.js';
import {
  repositoryAwareList,
  repositoryPrompt,
  type PromptRepositoryRuntime,
  type RepositoryListSpec,
} from '../protocol/repositories.js';
import { PromptMessage, type GetPromptResult } from '../protocol/prompt-messages.js';

const RESULT_KEYS = new Set(['description', 'messages', '_meta']);

/** Registers `prompts/list` and `prompts/get` (both eras) and declares the `prompts` capability. */
export function installPrompts(host: McpFeatureHost, catalog: McpFeatureCatalog, options: McpFeatureOptions): void {
  const prompts = host.pagedList(
    'prompts',
    'prompts/list',
    () => catalog.prompts(),
    (prompt) => prompt.descriptor,
  );
  const repositoryList: RepositoryListSpec<PromptRepositoryRuntime> = {
    key: 'prompts',
    method: 'prompts/list',
    what: 'Prompt repository',
    repositories: () => catalog.promptRepositories?.() ?? [],
    version: () => catalog.version,
    item: repositoryPrompt,
  };
  host.define(McpMethods.promptsList, { handler: repositoryAwareList(host, prompts, repositoryList, options) });
  host.define(McpMethods.promptsGet, {
    scopes: (params) => {
      if (typeof params.name !== 'string') return undefined;
      return catalog.prompt(params.name)?.requiredScopes ?? catalog.promptRepositoryFor?.(params.name)?.requiredScopes;
    },
    handler: (params, ctx) => getPrompt(host, catalog, options, params, ctx),
  });
  host.declareCapability('prompts', { listChanged: true });
}

function getPrompt(
  host: McpFeatureHost,
  catalog: McpFeatureCatalog,
  options: McpFeatureOptions,
  params: JsonObject,
  ctx: McpContext,
): Observable<JsonObject> {
  const name = params.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw new McpError(ErrorCode.InvalidParams, 'prompts/get needs "params.name", the name of the prompt to get.');
  }
  const prompt = catalog.prompt(name);
  const repository = prompt ? undefined : catalog.promptRepositoryFor?.(name);
  if (!prompt && !repository) throw unknownPrompt(name);
  const raw = params.arguments === undefined || params.arguments === null ? {} : params.arguments;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new McpError(ErrorCode.InvalidParams, `The "arguments" of prompt "${name}" must be an object of strings.`);
  }
  const rawArgs = raw as JsonObject;
  const subject = `Prompt "${name}"`;
  if (!prompt) {
    // A repository declares no schema: the protocol's own shape (string values) is all it is promised.
    const wrong = Object.keys(rawArgs).find((key) => typeof rawArgs[key] !== 'string');
    if (wrong !== undefined) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid arguments for prompt ${quote(name)}: argument ${quote(wrong)} must be a string (prompt arguments are strings). Send it as text.`,
      );
    }
  }
  if (!prompt)
    return host.interactive(params, name, rawArgs, ctx, () =>
      renderPrompt(repository!.get(name, rawArgs, ctx), name, undefined, subject, options),
    );
  const run = (): Observable<unknown> =>
    defer(() => from(Promise.resolve(prompt.parseArguments(rawArgs)))).pipe(
      switchMap((outcome) => {
        if (!outcome.ok) {
          const invalid = new McpError(ErrorCode.InvalidParams, outcome.message);
          return from(meetGuards(prompt, ctx, rawArgs).then(() => Promise.reject(invalid)));
        }
        return prompt.get(outcome.value, rawArgs, ctx);
      }),
    );
  return host.interactive(params, name, rawArgs, ctx, () =>
    renderPrompt(run(), name, prompt.descriptor, subject, options),
  );
}

/** What a prompt (declared, or a repository's) produced, as a `prompts/get` result; nothing from a repository means no such prompt. */
function renderPrompt(
  source: Observable<unknown>,
  name: string,
  declared: { description?: string } | undefined,
  subject: string,
  options: McpFeatureOptions,
): Observable<JsonObject> {
  const description = declared?.description;
  return lastValue(source).pipe(
    map((value) => {
      if ((value === undefined || value === null) && !declared) throw unknownPrompt(name);
      const result = toGetPromptResult(value);
      if (typeof result === 'string')
        throw new Error(
          `it returned ${result}. Return a string, PromptMessage.user()/assistant() messages, or { messages }.`,
        );
      if (result.description === undefined && description !== undefined) {
        return { description, ...result } as unknown as JsonObject;
      }
      return result as unknown as JsonObject;
    }),
    catchError((error: unknown) => throwError(() => handlerError(error, subject, options))),
  );
}

function unknownPrompt(name: string): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    `Unknown prompt ${quote(name)}. Call prompts/list to see the prompts this server offers.`,
    {
      name: name.length > 200 ? `${name.slice(0, 200)}…` : name,
    },
  );
}

/**
 * Turns what a prompt handler returned into a `prompts/get` result, or a description of what was
 * wrong with it.
 *
 * - a string → one user text message;
 * - a content item (`Content.image(...)`, ...) → one user message with it;
 * - a `PromptMessage` → that message; an array of strings, content items and messages → those;
 * - `{ messages, description?, _meta? }` → a full result.
 */
export function toGetPromptResult(value: unknown): GetPromptResult | string {
  if (value === undefined || value === null) return 'nothing';
  if (isObject(value) && Array.isArray(value.messages) && Object.keys(value).every((k) => RESULT_KEYS.has(k))) {
    const messages = toMessages(value.messages);
    if (typeof messages === 'string') return messages;
    if (value.description !== undefined && typeof value.description !== 'string') return 'a non-string "description"';
    const result: GetPromptResult = { messages };
    if (value.description !== undefined) result.description = value.description as string;
    if (value._meta !== undefined) result._meta = value._meta as JsonObject;
    return result;
  }
  const messages = toMessages(Array.isArray(value) ? value : [value]);
  return typeof messages === 'string' ? messages : { messages };
}

function toMessages(items: unknown[]): PromptMessage[] | string {
  const messages: PromptMessage[] = [];
  for (const [index, item] of items.entries()) {
    if (typeof item === 'string') messages.push(PromptMessage.user(item));
    else if (isContentBlock(item)) messages.push(PromptMessage.user(item));
    else if (isObject(item) && (item.role === 'user' || item.role === 'assistant') && isContentBlock(item.content)) {
      messages.push({ role: item.role, content: item.content });
    } else {
      return `an invalid message at index ${index} (a message is { role: "user" | "assistant", content: a content item })`;
    }
  }
  return messages;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
