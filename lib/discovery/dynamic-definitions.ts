import type { Type } from '@nestjs/common';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';
import type { McpToggleState } from '../protocol/notification-bus.js';
import type { McpContext } from '../protocol/context.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { ToolOptions } from './tool-types.js';
import type { ResourceOptions, ResourceTemplateOptions } from './resource-runtime.factory.js';
import type { PromptOptions } from './prompt-runtime.factory.js';

/**
 * What every runtime capability may add to run through the Nest pipeline like a decorated
 * method: global guards, interceptors and filters (APP_GUARD, APP_INTERCEPTOR, APP_FILTER) apply
 * to every runtime capability with or without it.
 *
 * @publicApi
 */
export interface DynamicCapabilityOptions {
  /**
   * Method decorators applied to the handler as if it were a provider method: `UseGuards()`,
   * `UseInterceptors()`, `UseFilters()`, `UsePipes()`, `RequireScopes()`, `McpTimeout()`,
   * `McpConcurrency()`, `Throttle()` / `SkipThrottle()` (counted by the capability's name, as for a
   * decorated one) and `SetMetadata()`-based ones such as a `Roles()` decorator read by a guard. Enhancer classes
   * must be providers of the application (or pass instances); an unknown one is refused.
   *
   * @example decorators: [UseGuards(RolesGuard), Roles('admin'), RequireScopes('reports:read')]
   */
  decorators?: MethodDecorator[];
}

/**
 * What `McpRegistry.changes$` emits: a list changed (`name` is the tool or prompt name, or the
 * resource URI or URI template), or a resource's content changed (`notifyResourceUpdated`).
 *
 * @publicApi
 */
export type McpRegistryChange =
  | { kind: 'tools' | 'resources' | 'prompts'; type: 'added' | 'removed'; name: string }
  /** A runtime toggle (`enable`/`disable`/`update`); `toggle` is the capability's whole new state. */
  | {
      kind: 'tools' | 'resources' | 'prompts';
      type: 'enabled' | 'disabled' | 'updated';
      name: string;
      toggle: McpToggleState;
    }
  | { kind: 'resource-updated'; uri: string }
  /** `McpRegistry.notifyListChanged()`: a list changed outside the registry (a repository's pages). */
  | { kind: 'tools' | 'resources' | 'prompts'; type: 'changed' };

/**
 * The second parameter of a completer method: the arguments (or template variables) the client
 * has already filled in, when it sends them.
 *
 * @publicApi
 */
export interface CompletionContext {
  arguments?: Record<string, string>;
}

/**
 * A completer given inline to a dynamic prompt or template: the text typed so far and the
 * arguments already filled in; returns a string array (or `{ values, total?, hasMore? }`), as a
 * value, Promise or Observable.
 *
 * @publicApi
 */
export type CompleteFunction = (value: string, context: CompletionContext, ctx: McpContext) => unknown;

/**
 * A resource added at runtime; it goes through the same checks as a decorated one.
 *
 * @publicApi
 */
export interface DynamicResourceDefinition extends Omit<ResourceOptions, 'name'>, DynamicCapabilityOptions {
  name: string;
  /** Returns the contents, as for `@Resource()` methods. */
  handler: (ctx: McpContext) => unknown;
}

/**
 * A resource template added at runtime; it goes through the same checks as a decorated one.
 *
 * @publicApi
 */
export interface DynamicResourceTemplateDefinition<TVars = Record<string, string | string[]>>
  extends Omit<ResourceTemplateOptions, 'name' | 'args'>, DynamicCapabilityOptions {
  name: string;
  /** A DTO class for the variables (cast and validated); without one they arrive as strings. */
  args?: Type<TVars>;
  /** Returns the contents of the resource `uri` names, as for `@ResourceTemplate()` methods. */
  handler: (variables: TVars, uri: string, ctx: McpContext) => unknown;
  /** Completers by variable name. */
  complete?: Record<string, CompleteFunction>;
}

/**
 * A prompt added at runtime; it goes through the same checks as a decorated one.
 *
 * @publicApi
 */
export interface DynamicPromptDefinition<TArgs = Record<string, never>>
  extends Omit<PromptOptions, 'name' | 'args'>, DynamicCapabilityOptions {
  name: string;
  /** A DTO class for the arguments (advertised, cast and validated). */
  args?: Type<TArgs> | StandardSchemaV1<unknown, TArgs>;
  /** Renders the prompt, as for `@Prompt()` methods. */
  handler: (args: TArgs, ctx: McpContext) => unknown;
  /** Completers by argument name. */
  complete?: Record<string, CompleteFunction>;
}

/**
 * A tool added at runtime. It goes through the same schema emission and validation as a
 * decorated one.
 *
 * @publicApi
 */
export interface DynamicToolDefinition<TArgs = unknown>
  extends Omit<ToolOptions, 'name' | 'input'>, DynamicCapabilityOptions {
  name: string;
  input?: Type<TArgs> | JsonObject | StandardSchemaV1<unknown, TArgs>;
  handler: (args: TArgs, ctx: McpContext) => unknown;
}
