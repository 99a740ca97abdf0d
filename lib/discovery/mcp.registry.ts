import { Inject, Injectable, Optional } from '@nestjs/common';
import { Subject, defer } from 'rxjs';
import type { CompletableArgument, Completer, CompletionTarget } from '../protocol/catalog.js';
import type {
  CompleteFunction,
  DynamicPromptDefinition,
  DynamicResourceDefinition,
  DynamicResourceTemplateDefinition,
  DynamicToolDefinition,
  McpRegistryChange,
} from './dynamic-definitions.js';
import * as messages from '../common/mcp.messages.js';
import { DEFAULT_TOOL_NAME_PATTERN, MCP_TOOL_BUILDER, type McpToolBuilder } from './tool-types.js';
import type { DtoCompiler } from './dto-compiler.js';
import { ResourceRuntimeFactory } from './resource-runtime.factory.js';
import { PromptRuntimeFactory } from './prompt-runtime.factory.js';
import { McpHandlerFactory, type McpRuntimeHandler } from '../execution/mcp-handler.factory.js';
import type { McpCall } from '../protocol/mcp-call.js';
import {
  capabilityAccess,
  completerCall,
  promptCall,
  resourceCall,
  templateCall,
  toObservable,
  toolCall,
} from './capability-calls.js';
import { describeCompletionTarget } from './completer-table.js';
import { McpCatalogStore } from './catalog-store.js';
import type { McpCapabilityUpdate, McpToggleOptions } from './capability-toggles.js';
import type { McpChangeEvent, McpToggleTarget } from '../protocol/notification-bus.js';

/** The registry's slice of the module options, provided by McpModule. @internal */
export interface McpRegistrySettings {
  /** `toolNamePattern`. */
  toolNamePattern: RegExp;
  /** How DTO classes compile (`schemas.nullableOptionals`). */
  dtos: DtoCompiler;
}

/** The DI token of {@link McpRegistrySettings}. @internal */
export const MCP_REGISTRY_SETTINGS = Symbol.for('nestjs-model-context:McpRegistrySettings');

/**
 * The capabilities one McpModule serves (read through {@link McpCatalogStore}). Filled by discovery at bootstrap; add and remove tools,
 * resources, resource templates and prompts at runtime through it, and announce resource changes
 * with `notifyResourceUpdated()`. Each McpModule has its own registry.
 *
 * @publicApi
 */
@Injectable()
export class McpRegistry extends McpCatalogStore {
  private readonly changeSubject = new Subject<McpRegistryChange>();

  /** @internal Builds tool runtimes (schemas and validators compiled once); the tools pack's. */
  readonly toolFactory?: McpToolBuilder;

  /** @internal */
  readonly resourceFactory: ResourceRuntimeFactory;

  /** @internal */
  readonly promptFactory: PromptRuntimeFactory;

  /**
   * Everything the registry needs comes in here, at construction: the Nest pipeline runtime
   * handlers take, and its slice of the module options. A registry made outside McpModule
   * (`new McpRegistry()`) has neither: its runtime handlers are called as they are.
   */
  constructor(
    @Optional() @Inject(McpHandlerFactory) private readonly handlers?: McpHandlerFactory,
    @Optional() @Inject(MCP_REGISTRY_SETTINGS) settings?: McpRegistrySettings,
    @Optional() @Inject(MCP_TOOL_BUILDER) tools?: McpToolBuilder,
  ) {
    super(settings?.toolNamePattern ?? DEFAULT_TOOL_NAME_PATTERN);
    const dtos = settings?.dtos;
    this.toolFactory = tools;
    this.resourceFactory = new ResourceRuntimeFactory(dtos);
    this.promptFactory = new PromptRuntimeFactory(dtos);
  }

  /** Emits after every runtime change (not for bootstrap discovery). */
  readonly changes$ = this.changeSubject.asObservable();

  /** Adds a tool at runtime; clients are told the list changed. */
  addTool<TArgs>(definition: DynamicToolDefinition<TArgs>): void {
    const { handler, decorators, ...rest } = definition;
    if (this.toolMap.has(definition.name)) throw new Error(messages.TOOL_DUPLICATE_RUNTIME(definition.name));
    const site = `McpRegistry.addTool(${definition.name})`;
    const runtime = this.runtime(
      site,
      decorators,
      (call) => handler(call.arguments as TArgs, call.context),
      `tool:${rest.name}`,
      `tool "${rest.name}"`,
    );
    if (!this.toolFactory) throw new Error(messages.TOOLS_NEED_MODULE(definition.name));
    this.register(
      this.toolFactory.build(
        { ...rest, ...capabilityAccess(rest.name, runtime.authorize, runtime.requiredScopes) },
        toolCall(rest.name, runtime.invoke),
        site,
      ),
      site,
      'runtime',
    );
    this.changeSubject.next({ kind: 'tools', type: 'added', name: definition.name });
  }

  /** Removes a tool; returns false when there was none by that name. */
  removeTool(name: string): boolean {
    if (!this.toolMap.delete(name)) return false;
    this.toolList = this.toolList.filter((t) => t.name !== name);
    this.changeCount++;
    this.changeSubject.next({ kind: 'tools', type: 'removed', name });
    return true;
  }

  /**
   * Hides a tool (or, with `kind`, a prompt, resource or resource template) from lists and calls
   * at once: a call gets the error of an unknown one. Clients of both eras get `list_changed`;
   * with Redis, every instance follows. The state is kept by name, across remove and re-add.
   * Returns false when nothing by that name is registered here.
   */
  disable(name: string, options: McpToggleOptions = {}): boolean {
    return this.toggle(options.kind ?? 'tool', name, { enabled: false }, 'disabled');
  }

  /** Shows again what `disable()` hid. Returns false when nothing by that name is registered here. */
  enable(name: string, options: McpToggleOptions = {}): boolean {
    return this.toggle(options.kind ?? 'tool', name, { enabled: true }, 'enabled');
  }

  /**
   * Replaces the title, description or annotations clients see for a capability, at once and
   * on every instance. Fields left out keep their current value.
   */
  update(name: string, changes: McpCapabilityUpdate, options: McpToggleOptions = {}): boolean {
    if (typeof changes !== 'object' || changes === null) {
      throw new Error(
        `McpRegistry.update(${JSON.stringify(name)}) needs the fields to change: { title?, description?, annotations? }.`,
      );
    }
    return this.toggle(options.kind ?? 'tool', name, { update: changes }, 'updated');
  }

  /** Whether a capability is enabled (true for one never toggled). */
  isEnabled(name: string, options: McpToggleOptions = {}): boolean {
    return this.toggles.isEnabled(options.kind ?? 'tool', name);
  }

  /**
   * @internal Applies a toggle another instance published. Runs before the streams of this
   * instance hear of the change, so a client that re-lists on `list_changed` sees the new state.
   */
  applyRemoteChange(event: McpChangeEvent): void {
    if (this.toggles.applyRemote(event)) this.changeCount++;
  }

  private toggle(
    target: McpToggleTarget,
    name: string,
    next: { enabled?: boolean; update?: McpCapabilityUpdate },
    type: 'enabled' | 'disabled' | 'updated',
  ): boolean {
    const known =
      target === 'tool'
        ? this.toolMap.has(name)
        : target === 'prompt'
          ? this.promptMap.has(name)
          : target === 'resource'
            ? this.resourceMap.has(name)
            : this.templateMap.has(name);
    const state = this.toggles.change(target, name, next);
    this.changeCount++;
    const kind = target === 'tool' ? 'tools' : target === 'prompt' ? 'prompts' : 'resources';
    this.changeSubject.next({ kind, type, name, toggle: state });
    return known;
  }

  /** Adds a resource at runtime; clients are told the resource list changed. */
  addResource(definition: DynamicResourceDefinition): void {
    const { handler, decorators, ...rest } = definition;
    if (this.resourceMap.has(definition.uri))
      throw new Error(messages.RUNTIME_DUPLICATE('Resource', definition.uri, 'removeResource'));
    const site = `McpRegistry.addResource(${definition.uri})`;
    const runtime = this.runtime(
      site,
      decorators,
      (call) => handler(call.context),
      `resource:${rest.uri}`,
      `resource "${rest.uri}"`,
    );
    this.registerResource(
      this.resourceFactory.buildResource(
        { ...rest, ...capabilityAccess(rest.uri, runtime.authorize, runtime.requiredScopes) },
        resourceCall(rest.uri, runtime.invoke),
        site,
      ),
      site,
    );
    this.changeSubject.next({ kind: 'resources', type: 'added', name: definition.uri });
  }

  /** Removes a resource; returns false when there was none at that URI. */
  removeResource(uri: string): boolean {
    if (!this.resourceMap.delete(uri)) return false;
    this.resourceList = this.resourceList.filter((r) => r.uri !== uri);
    this.changeCount++;
    this.changeSubject.next({ kind: 'resources', type: 'removed', name: uri });
    return true;
  }

  /** Adds a resource template at runtime; clients are told the resource list changed. */
  addResourceTemplate<TVars = Record<string, string | string[]>>(
    definition: DynamicResourceTemplateDefinition<TVars>,
  ): void {
    const { handler, complete, decorators, ...rest } = definition;
    const key = definition.uriTemplate;
    if (this.templateMap.has(key))
      throw new Error(messages.RUNTIME_DUPLICATE('Resource template', key, 'removeResourceTemplate'));
    const site = `McpRegistry.addResourceTemplate(${key})`;
    const pipeline = this.runtime(
      site,
      decorators,
      (call) => handler(call.arguments as TVars, call.name, call.context),
      `template:${key}`,
      `resource template "${key}"`,
    );
    const runtime = this.resourceFactory.buildTemplate(
      { ...rest, ...capabilityAccess(key, pipeline.authorize, pipeline.requiredScopes) },
      templateCall(pipeline.invoke),
      site,
    );
    const target: CompletionTarget = { kind: 'resourceTemplate', uriTemplate: key };
    const inline = this.inlineCompleters(target, runtime.arguments, complete, site);
    this.registerResourceTemplate(runtime, site);
    this.completers.setInline(target, inline, site);
    this.changeSubject.next({ kind: 'resources', type: 'added', name: key });
  }

  /** Removes a resource template (by its exact uriTemplate); returns false when there was none. */
  removeResourceTemplate(uriTemplate: string): boolean {
    if (!this.templateMap.delete(uriTemplate)) return false;
    this.templateList = this.templateList.filter((t) => t.uriTemplate !== uriTemplate);
    this.completers.dropInline({ kind: 'resourceTemplate', uriTemplate });
    this.changeCount++;
    this.changeSubject.next({ kind: 'resources', type: 'removed', name: uriTemplate });
    return true;
  }

  /** Adds a prompt at runtime; clients are told the prompt list changed. */
  addPrompt<TArgs = Record<string, never>>(definition: DynamicPromptDefinition<TArgs>): void {
    const { handler, complete, decorators, ...rest } = definition;
    if (this.promptMap.has(definition.name))
      throw new Error(messages.RUNTIME_DUPLICATE('Prompt', definition.name, 'removePrompt'));
    const site = `McpRegistry.addPrompt(${definition.name})`;
    const pipeline = this.runtime(
      site,
      decorators,
      (call) => handler(call.arguments as TArgs, call.context),
      `prompt:${rest.name}`,
      `prompt "${rest.name}"`,
    );
    const runtime = this.promptFactory.build(
      { ...rest, ...capabilityAccess(rest.name, pipeline.authorize, pipeline.requiredScopes) },
      promptCall(rest.name, pipeline.invoke),
      site,
    );
    const target: CompletionTarget = { kind: 'prompt', name: definition.name };
    const inline = this.inlineCompleters(target, runtime.arguments, complete, site);
    this.registerPrompt(runtime, site);
    this.completers.setInline(target, inline, site);
    this.changeSubject.next({ kind: 'prompts', type: 'added', name: definition.name });
  }

  /** Removes a prompt; returns false when there was none by that name. */
  removePrompt(name: string): boolean {
    if (!this.promptMap.delete(name)) return false;
    this.promptList = this.promptList.filter((p) => p.name !== name);
    this.completers.dropInline({ kind: 'prompt', name });
    this.changeCount++;
    this.changeSubject.next({ kind: 'prompts', type: 'removed', name });
    return true;
  }

  /**
   * Tells subscribed clients that the content of a resource changed (they read it again). Use it
   * for fixed URIs and for URIs a template serves alike; the catalog itself is unchanged.
   */
  notifyResourceUpdated(uri: string): void {
    if (typeof uri !== 'string' || uri.length === 0) {
      throw new Error(
        'McpRegistry.notifyResourceUpdated needs the URI of the resource that changed, as a non-empty string.',
      );
    }
    this.changeSubject.next({ kind: 'resource-updated', uri });
  }

  /**
   * Tells clients of both eras that a list changed when nothing registered here did: a
   * repository's pages (rows added or removed in its table), for instance. With Redis every
   * instance's clients hear it. Cursors stay valid: the catalog is unchanged, and a repository's
   * own cursor is its own to honour or refuse.
   */
  notifyListChanged(list: 'tools' | 'prompts' | 'resources'): void {
    if (list !== 'tools' && list !== 'prompts' && list !== 'resources') {
      throw new Error(
        `McpRegistry.notifyListChanged needs the list that changed: "resources", "prompts" or "tools" (got ${JSON.stringify(list)}).`,
      );
    }
    this.changeSubject.next({ kind: list, type: 'changed' });
  }

  private inlineCompleters(
    target: CompletionTarget,
    args: readonly CompletableArgument[],
    complete: Record<string, CompleteFunction> | undefined,
    site: string,
  ): Array<[string, Completer]> {
    const out: Array<[string, Completer]> = [];
    for (const [argument, fn] of Object.entries(complete ?? {})) {
      if (!args.some((a) => a.name === argument)) {
        throw new Error(
          messages.COMPLETE_UNKNOWN_ARGUMENT(
            site,
            describeCompletionTarget(target),
            argument,
            args.map((a) => a.name),
          ),
        );
      }
      if (typeof fn !== 'function') throw new Error(`${site}: complete.${argument} must be a function.`);
      // The target's guards and scopes are checked before any completion; the completer itself
      // runs through the global enhancers, as a completer method would.
      const completion = this.runtime(`${site} complete.${argument}`, undefined, (call) => {
        const request = call.arguments as Parameters<Completer>[0];
        return fn(request.value, request.context, call.context);
      });
      out.push([
        argument,
        completerCall(target.kind === 'prompt' ? target.name : target.uriTemplate, completion.invoke),
      ]);
    }
    return out;
  }

  /** Runtime handlers take the Nest pipeline's path; outside Nest (a bare registry) they are called as they are. */
  private runtime(
    site: string,
    decorators: readonly MethodDecorator[] | undefined,
    run: (call: McpCall) => unknown,
    policyKey?: string,
    label?: string,
  ): McpRuntimeHandler {
    const pipeline = this.handlers;
    if (pipeline) {
      const handler = pipeline.createRuntime(run, decorators, site);
      if (policyKey === undefined || !handler.policyHost) return handler;
      return {
        ...handler,
        invoke: pipeline.gated({ key: policyKey, label: label ?? site, ...handler.policyHost }, handler.invoke),
      };
    }
    if (decorators?.length) throw new Error(messages.RUNTIME_DECORATORS_WITHOUT_NEST(site));
    return { invoke: (call) => defer(() => toObservable(run(call))) };
  }
}
