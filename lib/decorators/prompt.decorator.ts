import { SetMetadata, type Type } from '@nestjs/common';
import { MCP_PROMPT_METADATA } from '../common/mcp.constants.js';
import type { JsonObject, McpIcon } from '../protocol/mcp-types.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';
import type { ListCacheHint } from '../protocol/catalog.js';

/**
 * Options of `@Prompt()`.
 *
 * @publicApi
 */
export interface PromptOptions {
  /** The prompt's name. @default the method name in snake_case */
  name?: string;
  /** A human-friendly display name. */
  title?: string;
  /** What the prompt is for: clients show it when users pick a prompt. */
  description: string;
  /**
   * A DTO class for the arguments. Each property becomes an advertised argument (its
   * `@SchemaProperty({ description })` is the argument's description, `@IsOptional()` makes it
   * optional); the string values clients send are cast and validated before the method runs.
   * Properties must be strings, numbers, integers, booleans or enums.
   * A Standard Schema object (zod 4, valibot) works too, with the same flat-properties rule.
   * @default the type of the `@Args()` parameter; without one, the prompt takes no arguments
   */
  args?: Type<unknown> | StandardSchemaV1;
  icons?: McpIcon[];
  _meta?: JsonObject;
  /**
   * How long this item's entry in its list stays fresh (2026-07-28): the list page holding it gets
   * the shortest `ttlMs` and turns `private` when this says so. A function `(ctx) => hint` is
   * computed per list request. @default the module's `cache.lists`
   */
  listCache?: ListCacheHint;
}

/** @internal */
export interface PromptMetadata extends PromptOptions {
  methodName: string;
}

/**
 * Marks a provider method as an MCP prompt. It receives its validated arguments through
 * `@Args()` and returns a string (one user message), `PromptMessage.user()/assistant()`
 * messages, or a full `{ description?, messages }` result.
 *
 * @example
 * ```ts
 * @Prompt({ description: 'Review a piece of code' })
 * reviewCode(@Args() { language, code }: ReviewArgsDto) {
 *   return `Review this ${language} code:\n\n${code}`;
 * }
 * ```
 * @publicApi
 */
export function Prompt(options: PromptOptions): MethodDecorator;
/** @publicApi */
export function Prompt(name: string, options: Omit<PromptOptions, 'name'>): MethodDecorator;
export function Prompt(
  nameOrOptions: string | PromptOptions,
  maybeOptions?: Omit<PromptOptions, 'name'>,
): MethodDecorator {
  const options: PromptOptions =
    typeof nameOrOptions === 'string' ? { ...maybeOptions!, name: nameOrOptions } : { ...nameOrOptions };
  return (target, propertyKey, descriptor) => {
    const metadata: PromptMetadata = { ...options, methodName: String(propertyKey) };
    SetMetadata(MCP_PROMPT_METADATA, metadata)(target, propertyKey, descriptor);
  };
}
