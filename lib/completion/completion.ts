import { catchError, defer, from, isObservable, map, of, switchMap, throwError, type Observable } from 'rxjs';
import type { CompletableArgument, CompletionTarget, McpAccess, McpFeatureCatalog } from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import { McpError } from '../protocol/errors.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import {
  handlerError,
  lastValue,
  union,
  type McpFeatureHost,
  type McpFeatureOptions,
} from '../protocol/feature-host.js';
import { McpMethods } from '../protocol/methods.js';

/** The most values one `completion/complete` result carries (the spec's limit). */
export const MAX_COMPLETION_VALUES = 100;

/**
 * What a completer returns when a plain string array is not enough: the full list size when it
 * is known (`total`) and whether more exist than were returned (`hasMore`).
 *
 * @publicApi
 */
export interface CompletionValues {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

/** The `completion` of a `completion/complete` result. */
export interface CompletionResult {
  values: string[];
  total: number;
  hasMore: boolean;
}

const REF_HELP =
  'Send { "type": "ref/prompt", "name": <prompt name> } or { "type": "ref/resource", "uri": <URI template> }.';

/** Registers `completion/complete` (both eras) and declares the `completions` capability. */
export function installCompletion(host: McpFeatureHost, catalog: McpFeatureCatalog, options: McpFeatureOptions): void {
  host.define(McpMethods.complete, {
    // Completing an argument reveals what the target holds, so it needs the target's scopes (and
    // those of the argument's completer, when it has its own).
    scopes: (params) => {
      const found = refTarget(catalog, params.ref);
      if (!found) return undefined;
      const argument =
        isObject(params.argument) && typeof params.argument.name === 'string' ? params.argument.name : undefined;
      const completer = argument === undefined ? undefined : catalog.completer(found.target, argument);
      return union([found.access.requiredScopes, completer?.requiredScopes]);
    },
    handler: (params, ctx) => complete(catalog, options, params, ctx),
  });
  host.declareCapability('completions', {});
}

/**
 * `completion/complete`. The target's guards run first, before the argument is even looked at:
 * a caller they refuse gets the error a refused `prompts/get` or `resources/read` of that target
 * gets (the guard's exception, mapped the same way), and learns neither values nor argument names.
 */
function complete(
  catalog: McpFeatureCatalog,
  options: McpFeatureOptions,
  params: JsonObject,
  ctx: McpContext,
): JsonObject | Observable<JsonObject> {
  const resolved = resolveRef(catalog, params.ref);
  const { authorize } = resolved.access;
  if (!authorize) return completeArgument(catalog, options, params, ctx, resolved);
  const rawArguments: JsonObject = {};
  if (params.argument !== undefined) rawArguments.argument = params.argument;
  if (params.context !== undefined) rawArguments.context = params.context;
  return from(authorize(ctx, 'completion/complete', { rawArguments, arguments: undefined })).pipe(
    catchError((error: unknown) => throwError(() => handlerError(error, capitalize(resolved.subject), options))),
    switchMap(() => {
      const outcome = completeArgument(catalog, options, params, ctx, resolved);
      return isObservable(outcome) ? outcome : of(outcome);
    }),
  );
}

function completeArgument(
  catalog: McpFeatureCatalog,
  options: McpFeatureOptions,
  params: JsonObject,
  ctx: McpContext,
  { target, subject, args }: { target: CompletionTarget; subject: string; args: readonly CompletableArgument[] },
): JsonObject | Observable<JsonObject> {
  const argument = params.argument;
  if (!isObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string') {
    throw new McpError(
      ErrorCode.InvalidParams,
      'completion/complete needs "params.argument": { "name": <argument name>, "value": <text typed so far> }, both strings.',
    );
  }
  const declared = args.find((a) => a.name === argument.name);
  if (!declared) {
    const known = args.map((a) => `"${a.name}"`).join(', ') || 'none';
    throw new McpError(
      ErrorCode.InvalidParams,
      `${capitalize(subject)} has no argument ${quote(argument.name)} to complete. Its arguments: ${known}.`,
    );
  }
  const context = completionContext(params.context);
  const value = argument.value;
  const completer = catalog.completer(target, declared.name);
  if (completer) {
    const where = `Completion of ${subject} argument "${declared.name}"`;
    return lastValue(defer(() => completer({ argument: declared.name, value, context }, ctx))).pipe(
      map((produced) => {
        const result = toCompletionResult(produced);
        if (typeof result === 'string')
          throw new Error(`the completer returned ${result}. Return a string array or { values, total?, hasMore? }.`);
        return { completion: result } as JsonObject;
      }),
      catchError((error: unknown) => throwError(() => handlerError(error, where, options))),
    );
  }
  const values = declared.enumValues ? filterByPrefix(declared.enumValues, value) : [];
  return { completion: toCompletionResult(values) as CompletionResult };
}

/** The prompt or template a ref names, if it exists (no errors: the scope check asks it first). */
function refTarget(
  catalog: McpFeatureCatalog,
  ref: unknown,
): { target: CompletionTarget; access: McpAccess } | undefined {
  if (!isObject(ref)) return undefined;
  if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
    const prompt = catalog.prompt(ref.name);
    return prompt && { target: { kind: 'prompt', name: ref.name }, access: prompt };
  }
  if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
    const template = catalog.resourceTemplate(ref.uri);
    return template && { target: { kind: 'resourceTemplate', uriTemplate: ref.uri }, access: template };
  }
  return undefined;
}

function resolveRef(
  catalog: McpFeatureCatalog,
  ref: unknown,
): { target: CompletionTarget; subject: string; args: readonly CompletableArgument[]; access: McpAccess } {
  if (!isObject(ref))
    throw new McpError(ErrorCode.InvalidParams, `completion/complete needs "params.ref". ${REF_HELP}`);
  if (ref.type === 'ref/prompt') {
    if (typeof ref.name !== 'string')
      throw new McpError(ErrorCode.InvalidParams, `A ref/prompt needs "name" as a string. ${REF_HELP}`);
    const prompt = catalog.prompt(ref.name);
    if (!prompt) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown prompt ${quote(ref.name)}. Call prompts/list to see the prompts this server offers.`,
      );
    }
    return {
      target: { kind: 'prompt', name: ref.name },
      subject: `prompt "${ref.name}"`,
      args: prompt.arguments,
      access: prompt,
    };
  }
  if (ref.type === 'ref/resource') {
    if (typeof ref.uri !== 'string')
      throw new McpError(ErrorCode.InvalidParams, `A ref/resource needs "uri" as a string. ${REF_HELP}`);
    const template = catalog.resourceTemplate(ref.uri);
    if (!template) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown resource template ${quote(ref.uri)}. Completion works on the variables of the templates listed by resources/templates/list; send one of their uriTemplate values exactly.`,
      );
    }
    return {
      target: { kind: 'resourceTemplate', uriTemplate: ref.uri },
      subject: `resource template "${ref.uri}"`,
      args: template.arguments,
      access: template,
    };
  }
  // JSON, not String(): a client's object may carry a `toString` that is no function.
  const type = typeof ref.type === 'string' ? ref.type : (JSON.stringify(ref.type) ?? 'undefined');
  throw new McpError(ErrorCode.InvalidParams, `Unknown completion ref type ${quote(type)}. ${REF_HELP}`);
}

function completionContext(context: unknown): { arguments?: Record<string, string> } {
  if (context === undefined || context === null) return {};
  const args = isObject(context) ? context.arguments : undefined;
  if (
    !isObject(context) ||
    (args !== undefined && (!isObject(args) || !Object.values(args).every((v) => typeof v === 'string')))
  ) {
    throw new McpError(
      ErrorCode.InvalidParams,
      'completion/complete "params.context" must be { "arguments": { <name>: <string value>, ... } }.',
    );
  }
  return args === undefined ? {} : { arguments: { ...(args as Record<string, string>) } };
}

/** Values that start with what was typed, ignoring case, in their declared order. */
export function filterByPrefix(values: readonly string[], prefix: string): string[] {
  const lower = prefix.toLowerCase();
  return values.filter((v) => v.toLowerCase().startsWith(lower));
}

/** Caps what a completer produced at {@link MAX_COMPLETION_VALUES}, or says what is wrong with it. */
export function toCompletionResult(value: unknown): CompletionResult | string {
  let values: unknown;
  let total: unknown;
  let hasMore: unknown;
  if (Array.isArray(value)) values = value;
  else if (isObject(value)) ({ values, total, hasMore } = value);
  else return value === undefined || value === null ? 'nothing' : `a ${typeof value}`;
  if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) return 'values that are not all strings';
  if (total !== undefined && (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0))
    return 'an invalid "total"';
  if (hasMore !== undefined && typeof hasMore !== 'boolean') return 'an invalid "hasMore"';
  const all = values as string[];
  return {
    values: all.slice(0, MAX_COMPLETION_VALUES),
    total: (total as number | undefined) ?? all.length,
    hasMore: (hasMore as boolean | undefined) ?? all.length > MAX_COMPLETION_VALUES,
  };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
