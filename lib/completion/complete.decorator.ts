import { MCP_COMPLETE_METADATA } from '../common/mcp.constants.js';

/**
 * What `@Complete()` completes: one argument of a prompt (by prompt name) or one variable of a
 * resource template (by its exact `uriTemplate`).
 *
 * @publicApi
 */
export type CompleteOptions = { prompt: string; argument: string } | { resourceTemplate: string; argument: string };

/** @internal */
export interface CompleteMetadata {
  target: { kind: 'prompt'; name: string } | { kind: 'resourceTemplate'; uriTemplate: string };
  argument: string;
}

/**
 * Marks a provider method as the completer of a prompt argument or template variable
 * (`completion/complete`). The method receives the text typed so far and a
 * {@link CompletionContext}, and returns the suggestions: a string array (or
 * `{ values, total?, hasMore? }`), as a value, Promise or Observable. At most 100 values are
 * sent; `total` and `hasMore` tell the client about the rest.
 *
 * The first two parameters are filled in without decorators; further ones may use `@Ctx()` and
 * friends. Guards, interceptors and filters apply as for tools. Stack several `@Complete()` to
 * let one method complete several arguments. Arguments typed by an enum in the DTO complete from
 * its values without any method.
 *
 * @example
 * ```ts
 * @Complete({ prompt: 'review_code', argument: 'language' })
 * languages(value: string, context: CompletionContext): string[] {
 *   return this.languages.filter((l) => l.startsWith(value));
 * }
 * ```
 * @publicApi
 */
export function Complete(options: CompleteOptions): MethodDecorator {
  return (_target, _propertyKey, descriptor) => {
    const method = descriptor.value as unknown as object;
    const target: CompleteMetadata['target'] =
      'prompt' in options
        ? { kind: 'prompt', name: options.prompt }
        : { kind: 'resourceTemplate', uriTemplate: options.resourceTemplate };
    const existing = (Reflect.getMetadata(MCP_COMPLETE_METADATA, method) as CompleteMetadata[] | undefined) ?? [];
    Reflect.defineMetadata(MCP_COMPLETE_METADATA, [...existing, { target, argument: options.argument }], method);
    return descriptor;
  };
}

/** Every `@Complete()` on a method (one method may complete several arguments). @internal */
export function completesOf(method: unknown): CompleteMetadata[] {
  if (typeof method !== 'function') return [];
  return (Reflect.getMetadata(MCP_COMPLETE_METADATA, method) as CompleteMetadata[] | undefined) ?? [];
}
