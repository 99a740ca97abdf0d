import type { CompletableArgument, Completer, CompletionTarget } from '../protocol/catalog.js';
import * as messages from '../common/mcp.messages.js';

/**
 * The completers of one registry, by prompt or template and argument: decorated ones (`@Complete()`,
 * attached after discovery, one per argument) and inline ones (`complete` of a runtime-added
 * prompt or template, which go with it when it is removed).
 */
export class CompleterTable {
  private readonly entries = new Map<string, { completer: Completer; site: string; inline: boolean }>();

  get(target: CompletionTarget, argument: string): Completer | undefined {
    return this.entries.get(completerKey(target, argument))?.completer;
  }

  /**
   * Registers a decorated completer, failing when its prompt or template (`args` undefined), or
   * the argument, does not exist, or when the argument already has a completer.
   */
  register(
    target: CompletionTarget,
    argument: string,
    completer: Completer,
    site: string,
    args: readonly CompletableArgument[] | undefined,
    known: () => string[],
  ): void {
    const label = describeCompletionTarget(target);
    if (!args) throw new Error(messages.COMPLETE_UNKNOWN_TARGET(site, label, known()));
    if (!args.some((a) => a.name === argument)) {
      throw new Error(
        messages.COMPLETE_UNKNOWN_ARGUMENT(
          site,
          label,
          argument,
          args.map((a) => a.name),
        ),
      );
    }
    const key = completerKey(target, argument);
    const existing = this.entries.get(key);
    if (existing) throw new Error(messages.DUPLICATE_COMPLETER(label, argument, existing.site, site));
    this.entries.set(key, { completer, site, inline: false });
  }

  /** The inline completers of a runtime-added prompt or template. */
  setInline(target: CompletionTarget, completers: ReadonlyArray<[string, Completer]>, site: string): void {
    for (const [argument, completer] of completers)
      this.entries.set(completerKey(target, argument), { completer, site, inline: true });
  }

  /** Drops the inline completers of a removed prompt or template. */
  dropInline(target: CompletionTarget): void {
    const prefix = completerKey(target, '');
    for (const [key, entry] of this.entries) if (entry.inline && key.startsWith(prefix)) this.entries.delete(key);
  }
}

function completerKey(target: CompletionTarget, argument: string): string {
  return `${target.kind}\u0000${target.kind === 'prompt' ? target.name : target.uriTemplate}\u0000${argument}`;
}

/** `prompt "x"` or `resource template "y"`, for messages. */
export function describeCompletionTarget(target: CompletionTarget): string {
  return target.kind === 'prompt' ? `prompt "${target.name}"` : `resource template "${target.uriTemplate}"`;
}
