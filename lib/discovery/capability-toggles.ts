import { randomUUID } from 'node:crypto';
import type { PromptRuntime, ResourceRuntime, ResourceTemplateRuntime, ToolRuntime } from '../protocol/catalog.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { McpChangeEvent, McpToggleState, McpToggleTarget } from '../protocol/notification-bus.js';

/**
 * What `McpRegistry.update()` may change on a capability at runtime: what clients read in lists.
 * `annotations` replace the declared ones (tools: behaviour hints; resources: audience, priority).
 *
 * @publicApi
 */
export interface McpCapabilityUpdate {
  title?: string;
  description?: string;
  annotations?: JsonObject;
}

/**
 * Options of `McpRegistry.enable/disable/update`.
 *
 * @publicApi
 */
export interface McpToggleOptions {
  /** What the name designates: a tool name, a prompt name, a resource URI or a URI template. @default 'tool' */
  kind?: McpToggleTarget;
}

type AnyRuntime = ToolRuntime | PromptRuntime | ResourceRuntime | ResourceTemplateRuntime;

const TARGETS: ReadonlySet<string> = new Set(['tool', 'prompt', 'resource', 'resourceTemplate']);

/**
 * The runtime states of capabilities (enabled or not, descriptor overrides). The registry keeps
 * what was declared; these states are applied on read, and cost nothing while none is set.
 */
export class CapabilityToggles {
  /** Identifies this registry in the toggles it publishes, to skip their echo. */
  readonly origin = randomUUID();
  private readonly states = new Map<string, McpToggleState>();
  private readonly derived = new WeakMap<object, { state: McpToggleState; runtime: AnyRuntime }>();
  private readonly lists = new WeakMap<readonly object[], { version: number; list: readonly object[] }>();

  get empty(): boolean {
    return this.states.size === 0;
  }

  /** The state after a local change; the caller announces it. */
  change(
    target: McpToggleTarget,
    key: string,
    next: { enabled?: boolean; update?: McpCapabilityUpdate },
  ): McpToggleState {
    if (!TARGETS.has(target)) {
      throw new Error(
        `McpRegistry: unknown capability kind "${String(target)}". Use "tool", "prompt", "resource" or "resourceTemplate".`,
      );
    }
    const previous = this.states.get(`${target}\u0000${key}`);
    const overrides = { ...(previous?.overrides ?? {}) };
    for (const field of ['title', 'description', 'annotations'] as const) {
      const value = next.update?.[field];
      if (value !== undefined)
        (overrides as Record<string, unknown>)[field] = field === 'annotations' ? { ...(value as JsonObject) } : value;
    }
    const state: McpToggleState = {
      target,
      key,
      enabled: next.enabled ?? previous?.enabled ?? true,
      overrides,
      origin: this.origin,
    };
    this.set(state);
    return state;
  }

  /** Applies a state published by another registry; false for our own echo or a malformed one. */
  applyRemote(event: McpChangeEvent): McpToggleState | undefined {
    if (event.type !== 'list-changed' || !isToggleState(event.toggle) || event.toggle.origin === this.origin)
      return undefined;
    this.set({ ...event.toggle, origin: event.toggle.origin });
    return event.toggle;
  }

  isEnabled(target: McpToggleTarget, key: string): boolean {
    return this.states.get(`${target}\u0000${key}`)?.enabled !== false;
  }

  /** The runtime as clients see it now: undefined when disabled, else with its overrides. */
  view<T extends AnyRuntime>(target: McpToggleTarget, key: string, runtime: T | undefined): T | undefined {
    if (runtime === undefined || this.states.size === 0) return runtime;
    const state = this.states.get(`${target}\u0000${key}`);
    if (!state) return runtime;
    if (!state.enabled) return undefined;
    if (Object.keys(state.overrides).length === 0) return runtime;
    const cached = this.derived.get(runtime);
    if (cached && cached.state === state) return cached.runtime as T;
    const derived = withOverrides(target, runtime, state.overrides) as T;
    this.derived.set(runtime, { state, runtime: derived });
    return derived;
  }

  /** A list as clients see it now, rebuilt once per registry version. */
  viewList<T extends AnyRuntime>(
    target: McpToggleTarget,
    list: readonly T[],
    keyOf: (item: T) => string,
    version: number,
  ): readonly T[] {
    if (this.states.size === 0) return list;
    const cached = this.lists.get(list);
    if (cached && cached.version === version) return cached.list as readonly T[];
    const view: T[] = [];
    for (const item of list) {
      const shown = this.view(target, keyOf(item), item);
      if (shown) view.push(shown);
    }
    this.lists.set(list, { version, list: view });
    return view;
  }

  private set(state: McpToggleState): void {
    const key = `${state.target}\u0000${state.key}`;
    // A state equal to "declared" is dropped, so that a fully re-enabled catalog costs nothing again.
    if (state.enabled && Object.keys(state.overrides).length === 0) this.states.delete(key);
    else this.states.set(key, state);
  }
}

function withOverrides(
  target: McpToggleTarget,
  runtime: AnyRuntime,
  overrides: McpToggleState['overrides'],
): AnyRuntime {
  if (target === 'tool') {
    const tool = runtime as ToolRuntime;
    const legacy = Object.freeze({ ...tool.descriptors.legacy, ...overrides });
    const modern =
      tool.descriptors.modern === tool.descriptors.legacy
        ? legacy
        : Object.freeze({ ...tool.descriptors.modern, ...overrides });
    return { ...tool, descriptors: { legacy, modern } } as ToolRuntime;
  }
  // Prompts have no annotations in either era.
  const { annotations, ...rest } = overrides;
  const fields = target === 'prompt' ? rest : overrides;
  const described = runtime as { descriptor: object };
  return { ...runtime, descriptor: Object.freeze({ ...described.descriptor, ...fields }) } as AnyRuntime;
}

function isToggleState(value: unknown): value is McpToggleState {
  if (typeof value !== 'object' || value === null) return false;
  const state = value as Partial<McpToggleState>;
  return (
    typeof state.target === 'string' &&
    TARGETS.has(state.target) &&
    typeof state.key === 'string' &&
    typeof state.enabled === 'boolean' &&
    typeof state.origin === 'string' &&
    typeof state.overrides === 'object' &&
    state.overrides !== null
  );
}
