import { SetMetadata } from '@nestjs/common';
import { MCP_PROMPT_METADATA } from '../common/mcp.constants.js';
import type { PromptOptions } from '../discovery/prompt-runtime.factory.js';

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

/** The `@Prompt()` of a method. @internal */
export function promptOf(method: unknown): PromptMetadata | undefined {
  return typeof method === 'function'
    ? (Reflect.getMetadata(MCP_PROMPT_METADATA, method) as PromptMetadata | undefined)
    : undefined;
}
