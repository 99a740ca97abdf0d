import type { McpRegistry } from '../discovery/mcp.registry.js';
import type { McpFeatureHost, McpFeatureOptions } from '../protocol/feature-host.js';
import { McpMethods } from '../protocol/methods.js';
import { ToolSetGate } from './tool-set.gate.js';
import { resolveToolSetsOptions, type McpToolSetsOptions } from './tool-sets.options.js';

const gates = new WeakMap<McpFeatureHost, ToolSetGate>();

/** The tool-set gate of a module's server, when it has `toolSets`. */
export function gateOf(server: McpFeatureHost): ToolSetGate | undefined {
  return gates.get(server);
}

/**
 * Puts tool sets between the callers and the registry: every tool is checked as it registers,
 * and every request's sets are decided before the transport's checks read them.
 */
export function installToolSets(
  server: McpFeatureHost,
  registry: McpRegistry,
  options: McpToolSetsOptions,
  features: Pick<McpFeatureOptions, 'exposeInternalErrors' | 'logger'>,
): ToolSetGate {
  const gate = new ToolSetGate(server, registry, resolveToolSetsOptions(options), features);
  registry.toolCheck = (runtime, site) => gate.checkTool(runtime, site);
  for (const tool of registry.tools()) gate.checkTool(tool, `tool "${tool.name}"`);
  server.define(McpMethods.toolsCall, { prepare: gate.prepare });
  gates.set(server, gate);
  return gate;
}
