import { Injectable, Logger } from '@nestjs/common';
import { MCP_PROMPT_METADATA } from '../common/mcp.constants.js';
import { McpCapabilityPack } from '../discovery/capability-pack.js';
import { promptCall } from '../discovery/capability-calls.js';
import { toSnakeCase } from '../discovery/mcp-discovery.js';
import type { McpProviderMethod } from '../discovery/mcp-feature.js';
import type { McpFeatureHost } from '../protocol/feature-host.js';
import { promptOf } from './prompt.decorator.js';
import { installPrompts } from './prompts.js';

/** `prompts/list` and `prompts/get`, and the `@Prompt()` methods. */
@Injectable()
export class McpPromptsFeature extends McpCapabilityPack {
  readonly kind = 'prompts';
  readonly capabilityKeys = [MCP_PROMPT_METADATA];

  install(host: McpFeatureHost): void {
    installPrompts(host, this.registry, this.options);
  }

  protected marks({ method }: McpProviderMethod): boolean {
    return promptOf(method) !== undefined;
  }

  settle(): void {
    for (const found of this.found) {
      const site = this.siteOf(found);
      this.checkParams(found, site, 'prompt');
      const { methodName: _m, name: declaredName, args, ...rest } = promptOf(found.method)!;
      // A toolset's prompts carry its prefix, as its tools do.
      const name = (found.toolset?.prefix ?? '') + (declaredName ?? toSnakeCase(found.methodName));
      const runtime = this.registry.promptFactory.build(
        {
          ...rest,
          name,
          args: args ?? this.argsDto(found, site, 'prompt', true),
          ...this.access(found, name),
        },
        promptCall(name, this.gated(`prompt:${name}`, `prompt "${name}"`, found, this.invokerOf(found))),
        site,
      );
      this.registry.registerPrompt(runtime, site);
    }
    if (this.found.length > 0) new Logger('McpModule').log(`Discovered ${this.found.length} MCP prompt(s).`);
  }
}
