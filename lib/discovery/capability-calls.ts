import type { Completer, McpAccess } from '../protocol/catalog.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { McpContext } from '../protocol/context.js';
import type { McpCall } from '../execution/mcp-call.interface.js';
import type { McpGuardCheck, McpInvoker } from '../execution/mcp-handler.factory.js';
import type { ToolInvoke } from './tool-runtime.factory.js';
import type { ResourceInvoke, ResourceTemplateInvoke } from './resource-runtime.factory.js';
import type { PromptInvoke } from './prompt-runtime.factory.js';

/*
 * The McpCall each kind of capability hands to the Nest pipeline, built in one place for
 * decorated methods (McpExplorer) and runtime-registered handlers (McpRegistry) alike, so that
 * guards, interceptors and filters see the same call whichever way a capability was declared.
 */

export const toolCall = (name: string, invoker: McpInvoker): ToolInvoke => {
  const call = (args: unknown, rawArguments: JsonObject, context: McpContext): McpCall => ({ method: 'tools/call', name, rawArguments, arguments: args, context });
  const { admit } = invoker;
  return Object.assign((args: unknown, rawArguments: JsonObject, context: McpContext) => invoker(call(args, rawArguments, context)), admit && {
    admit: (args: unknown, rawArguments: JsonObject, context: McpContext) => admit(call(args, rawArguments, context)),
  });
};

export const resourceCall = (uri: string, invoker: McpInvoker): ResourceInvoke => (context) =>
  invoker({ method: 'resources/read', name: uri, rawArguments: {}, arguments: {}, context } satisfies McpCall);

export const templateCall = (invoker: McpInvoker): ResourceTemplateInvoke => (variables, raw, uri, context) =>
  invoker({ method: 'resources/read', name: uri, rawArguments: raw as JsonObject, arguments: variables, context } satisfies McpCall);

export const promptCall = (name: string, invoker: McpInvoker): PromptInvoke => (args, rawArguments, context) =>
  invoker({ method: 'prompts/get', name, rawArguments, arguments: args, context } satisfies McpCall);

export const completerCall = (name: string, invoker: McpInvoker, requiredScopes?: readonly string[]): Completer =>
  Object.assign(
    (request: Parameters<Completer>[0], context: Parameters<Completer>[1]) =>
      invoker({
        method: 'completion/complete',
        name,
        rawArguments: { argument: { name: request.argument, value: request.value }, context: request.context },
        arguments: request,
        context,
      } satisfies McpCall),
    { requiredScopes },
  );

/** A capability's guard check as the catalog asks it: for a list, or before a completion. */
export const capabilityAccess = (name: string, check: McpGuardCheck | undefined, requiredScopes: readonly string[] | undefined): McpAccess => ({
  requiredScopes,
  authorize: check
    ? (context, method, request) =>
        check({ method, name, rawArguments: request?.rawArguments ?? {}, arguments: request?.arguments, context } satisfies McpCall)
    : undefined,
});
