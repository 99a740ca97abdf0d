import { from, isObservable, of, type Observable } from 'rxjs';
import type { Completer, McpAccess } from '../protocol/catalog.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { McpContext } from '../protocol/context.js';
import type { McpGuardCheck, McpInvoker } from '../execution/mcp-handler.factory.js';
import type { ToolInvoke } from './tool-types.js';
import type { ResourceInvoke, ResourceTemplateInvoke } from './resource-runtime.factory.js';
import type { PromptInvoke } from './prompt-runtime.factory.js';

/*
 * How each kind of capability hands its call to the Nest pipeline, in one place for decorated
 * methods (McpDiscovery) and runtime-registered handlers (McpRegistry) alike. The call is the
 * request's own McpContext, named and given its arguments here: guards, interceptors, pipes,
 * filters, policies and `@Ctx()` all see that one object.
 */

/** The call object, named for its capability and carrying its arguments. */
function named(context: McpContext, name: string, rawArguments: JsonObject, args: unknown): McpContext {
  context.name = name;
  context.rawArguments = rawArguments;
  context.arguments = args;
  return context;
}

const NO_ARGUMENTS: JsonObject = Object.freeze({}) as JsonObject;

export const toolCall = (name: string, invoker: McpInvoker): ToolInvoke => {
  const { admit } = invoker;
  // A task call is admitted (its rate limits counted) before its task exists; see McpInvoker.
  return Object.assign(
    (args: unknown, rawArguments: JsonObject, context: McpContext) => invoker(named(context, name, rawArguments, args)),
    admit && {
      admit: (args: unknown, rawArguments: JsonObject, context: McpContext) =>
        admit(named(context, name, rawArguments, args)),
    },
  );
};

export const resourceCall =
  (uri: string, invoker: McpInvoker): ResourceInvoke =>
  (context) =>
    invoker(named(context, uri, {}, {}));

export const templateCall =
  (invoker: McpInvoker): ResourceTemplateInvoke =>
  (variables, raw, uri, context) =>
    invoker(named(context, uri, raw as JsonObject, variables));

export const promptCall =
  (name: string, invoker: McpInvoker): PromptInvoke =>
  (args, rawArguments, context) =>
    invoker(named(context, name, rawArguments, args));

export const completerCall = (name: string, invoker: McpInvoker, requiredScopes?: readonly string[]): Completer =>
  Object.assign(
    (request: Parameters<Completer>[0], context: Parameters<Completer>[1]) =>
      invoker(
        named(
          context,
          name,
          { argument: { name: request.argument, value: request.value }, context: request.context },
          request,
        ),
      ),
    { requiredScopes },
  );

/**
 * A capability's guard check as the catalog asks it: for a list, before a completion, or before
 * a call's handler runs. Lists ask many capabilities at once, so the guards get a view of the
 * call naming the capability asked about (its `context` is the call itself).
 */
export const capabilityAccess = (
  name: string,
  check: McpGuardCheck | undefined,
  requiredScopes: readonly string[] | undefined,
): McpAccess => ({
  requiredScopes,
  authorize: check
    ? (context, method, request) =>
        check(context.viewAs(method, name, request?.rawArguments ?? NO_ARGUMENTS, request?.arguments))
    : undefined,
});

/** Normalises a plain handler result (value, Promise or Observable) into an Observable. */
export function toObservable(result: unknown): Observable<unknown> {
  if (isObservable(result)) return result;
  if (result instanceof Promise) return from(result);
  return of(result);
}
