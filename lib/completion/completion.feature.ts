import { Injectable } from '@nestjs/common';
import { MCP_COMPLETE_METADATA } from '../common/mcp.constants.js';
import { requiredScopesOf } from '../auth/require-scopes.decorator.js';
import { Args } from '../decorators/params.decorators.js';
import { McpCapabilityPack } from '../discovery/capability-pack.js';
import { completerCall } from '../discovery/capability-calls.js';
import type { McpProviderMethod } from '../discovery/mcp-feature.js';
import type { CompletionTarget } from '../protocol/catalog.js';
import type { McpFeatureHost } from '../protocol/feature-host.js';
import { completesOf } from './complete.decorator.js';
import { installCompletion } from './completion.js';

/** `completion/complete` for prompt arguments and template variables, and the `@Complete()` methods. */
@Injectable()
export class McpCompletionFeature extends McpCapabilityPack {
  readonly kind = 'completion';
  readonly capabilityKeys = [MCP_COMPLETE_METADATA];

  install(host: McpFeatureHost): void {
    installCompletion(host, this.registry, this.options);
  }

  protected marks({ method }: McpProviderMethod): boolean {
    return completesOf(method).length > 0;
  }

  /**
   * Completers attach once every prompt and template is known, wherever it was declared: the
   * resources and prompts packs come before this one in MCP_FEATURE_PACKS and settle at once.
   */
  settle(): void {
    const pending = this.found.map((found) => {
      const site = this.siteOf(found);
      this.checkParams(found, site, 'completer');
      this.bindParams(found);
      const invoker = this.invokerOf(found);
      const scopes = requiredScopesOf(found.prototype.constructor, found.method as Function);
      const prefix = found.toolset?.prefix ?? '';
      return completesOf(found.method).map((declared) => {
        // Completers of a toolset complete that toolset's (prefixed) prompts.
        const target: CompletionTarget =
          declared.target.kind === 'prompt' && prefix
            ? { kind: 'prompt', name: prefix + declared.target.name }
            : declared.target;
        const name = target.kind === 'prompt' ? target.name : target.uriTemplate;
        return { target, argument: declared.argument, site, completer: completerCall(name, invoker, scopes) };
      });
    });
    for (const { target, argument, completer, site } of pending.flat())
      this.registry.registerCompleter(target, argument, completer, site);
  }

  /**
   * A completer's first two parameters receive the typed value and the context without
   * decorators; parameters the user decorated keep their decorator.
   */
  private bindParams({ prototype, methodName }: McpProviderMethod): void {
    const decorated = this.accessor.getDecoratedParamIndices(prototype.constructor, methodName);
    if (!decorated.has(0)) Args('value')(prototype, methodName, 0);
    if (!decorated.has(1)) Args('context')(prototype, methodName, 1);
  }
}
