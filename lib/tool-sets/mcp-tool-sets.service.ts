import { Inject, Injectable } from '@nestjs/common';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { MCP_DISPATCHER } from '../common/mcp.constants.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import { gateOf } from './tool-sets.install.js';

/**
 * The tool sets of this McpModule at runtime: when a principal's sets change at their source (a
 * role granted, a feature flag flipped), `refresh()` makes the change take effect at once rather
 * than when the cached answer of `toolSets.select` expires, and tells clients of both eras that the
 * tools list changed, so a client that honours `list_changed` re-lists and sees the new sets.
 *
 * @publicApi
 */
@Injectable()
export class McpToolSets {
  constructor(
    @Inject(MCP_DISPATCHER) private readonly server: McpDispatcher,
    private readonly registry: McpRegistry,
  ) {}

  /**
   * Forgets the sets cached for one principal (every principal without an id), so that its next
   * request asks `toolSets.select` again, and sends `notifications/tools/list_changed`.
   *
   * @throws Error when the module has no `toolSets` option.
   */
  refresh(principalId?: string): void {
    const gate = gateOf(this.server);
    if (!gate)
      throw new Error(
        'McpToolSets.refresh(): this McpModule has no "toolSets" option, so it caches no tool sets. Configure toolSets in McpModule.forRoot().',
      );
    gate.selector.forget(principalId);
    this.registry.notifyListChanged('tools');
  }
}
