import { Inject, Injectable, Optional } from '@nestjs/common';
import { Subject, defer } from 'rxjs';
import type {
  CompletableArgument,
  Completer,
  CompletionTarget,
  McpFeatureCatalog,
  PromptRuntime,
  ResourceRuntime,
  ResourceTemplateRuntime,
  ToolRuntime,
} from '../protocol/catalog.js';
import type {
  CompleteFunction,
  DynamicPromptDefinition,
  DynamicResourceDefinition,
  DynamicResourceTemplateDefinition,
  DynamicToolDefinition,
  McpRegistryChange,
} from './dynamic-definitions.js';
import * as messages from '../mcp.messages.js';
import { ToolRuntimeFactory, toObservable } from './tool-runtime.factory.js';
import { ResourceRuntimeFactory } from './resource-runtime.factory.js';
import { PromptRuntimeFactory } from './prompt-runtime.factory.js';
import { McpHandlerFactory, type McpRuntimeHandler } from '../execution/mcp-handler.factory.js';
import type { McpCall } from '../execution/mcp-call.interface.js';
import { capabilityAccess, completerCall, promptCall, resourceCall, templateCall, toolCall } from './capability-calls.js';
import { CapabilityToggles, type McpCapabilityUpdate, type McpToggleOptions } from './capability-toggles.js';
import type { McpChangeEvent, McpToggleTarget } from '../protocol/notification-bus.js';
import { hasDotSegment, type PromptRepositoryRuntime, type ResourceRepositoryRuntime } from '../protocol/repositories.js';
import type { McpToolSource } from '../catalog/catalog.js';


interface Registered<T> {
  runtime: T;
  site: string;
}

/**
 * The capabilities one McpModule serves. Filled by discovery at bootstrap; add and remove tools,
 * resources, resource templates and prompts at runtime through it, and announce resource changes
 * with `notifyResourceUpdated()`. Each McpModule has its own registry.
 *
 * @publicApi
 */
@Injectable()
export class McpRegistry implements McpFeatureCatalog {
  private readonly toolMap = new Map<string, { runtime: ToolRuntime; site: string; source: McpToolSource; rename?: string }>();
  private toolList: ToolRuntime[] = [];
  private changeCount = 0;
  private readonly changeSubject = new Subject<McpRegistryChange>();
  private readonly resourceMap = new Map<string, Registered<ResourceRuntime>>();
  private resourceList: ResourceRuntime[] = [];
  private readonly templateMap = new Map<string, Registered<ResourceTemplateRuntime>>();
  private templateList: ResourceTemplateRuntime[] = [];
  private readonly promptMap = new Map<string, Registered<PromptRuntime>>();
  private promptList: PromptRuntime[] = [];
  private readonly completers = new Map<string, { completer: Completer; site: string; inline: boolean }>();
  private readonly resourceRepositoryList: Array<Registered<ResourceRepositoryRuntime>> = [];
  private readonly promptRepositoryList: Array<Registered<PromptRepositoryRuntime>> = [];
  private readonly toggles = new CapabilityToggles();
  /** @internal */
  resourceFactory = new ResourceRuntimeFactory();
  /** @internal */
  promptFactory = new PromptRuntimeFactory();
  /** @internal */
  factory!: ToolRuntimeFactory;
  /** @internal */
  namePattern: RegExp = /^[A-Za-z0-9_-]{1,64}$/;
  /** @internal Checks every tool as it registers (tool sets: its sets exist); set at bootstrap. */
  toolCheck?: (runtime: ToolRuntime, site: string) => void;
  /** @internal The Nest pipeline for runtime handlers, set by McpExplorer once discovery ran. */
  pipeline?: McpHandlerFactory;

  constructor(@Optional() @Inject(McpHandlerFactory) private readonly handlers?: McpHandlerFactory) {}

  /** Emits after every runtime change (not for bootstrap discovery). */
  readonly changes$ = this.changeSubject.asObservable();

  get version(): number {
    return this.changeCount;
  }

  tools(): readonly ToolRuntime[] {
    return this.toggles.viewList('tool', this.toolList, (t) => t.name, this.changeCount);
  }

  tool(name: string): ToolRuntime | undefined {
    return this.toggles.view('tool', name, this.toolMap.get(name)?.runtime);
  }

  /** Names of the registered tools, in list order. */
  toolNames(): string[] {
    return this.toolList.map((t) => t.name);
  }

  /** @internal Where a tool was declared (a `@Tool()` method, an exposed route, a CQRS message, `addTool`), for advice naming the right place. */
  toolSource(name: string): McpToolSource | undefined {
    return this.toolMap.get(name)?.source;
  }

  /** Adds a tool at runtime; clients are told the list changed. */
  addTool<TArgs>(definition: DynamicToolDefinition<TArgs>): void {
    const { handler, decorators, ...rest } = definition;
    if (this.toolMap.has(definition.name)) throw new Error(messages.TOOL_DUPLICATE_RUNTIME(definition.name));
    const site = `McpRegistry.addTool(${definition.name})`;
    const runtime = this.runtime(site, decorators, (call) => handler(call.arguments as TArgs, call.context), `tool:${rest.name}`, `tool "${rest.name}"`);
    this.register(
      this.factory.build({ ...rest, ...capabilityAccess(rest.name, runtime.authorize, runtime.requiredScopes) }, toolCall(rest.name, runtime.invoke), site),
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
   * @internal Registers a built tool, failing on an invalid or duplicate name. `rename` says how
   * the site's tool is renamed, when not with `@Tool({ name })` (exposed routes and messages).
   */
  register(runtime: ToolRuntime, site: string, source: McpToolSource = 'tool', rename?: string): void {
    if (!this.namePattern.test(runtime.name)) {
      throw new Error(messages.INVALID_TOOL_NAME(runtime.name, site, this.namePattern));
    }
    this.toolCheck?.(runtime, site);
    const existing = this.toolMap.get(runtime.name);
    if (existing) throw new Error(messages.DUPLICATE_TOOL(runtime.name, { site: existing.site, rename: existing.rename }, { site, rename }));
    this.toolMap.set(runtime.name, { runtime, site, source, rename });
    this.toolList = [...this.toolList, runtime];
    this.changeCount++;
  }

  resources(): readonly ResourceRuntime[] {
    return this.toggles.viewList('resource', this.resourceList, (r) => r.uri, this.changeCount);
  }

  resource(uri: string): ResourceRuntime | undefined {
    return this.toggles.view('resource', uri, this.resourceMap.get(uri)?.runtime);
  }

  resourceTemplates(): readonly ResourceTemplateRuntime[] {
    return this.toggles.viewList('resourceTemplate', this.templateList, (t) => t.uriTemplate, this.changeCount);
  }

  resourceTemplate(uriTemplate: string): ResourceTemplateRuntime | undefined {
    return this.toggles.view('resourceTemplate', uriTemplate, this.templateMap.get(uriTemplate)?.runtime);
  }

  prompts(): readonly PromptRuntime[] {
    return this.toggles.viewList('prompt', this.promptList, (p) => p.name, this.changeCount);
  }

  prompt(name: string): PromptRuntime | undefined {
    return this.toggles.view('prompt', name, this.promptMap.get(name)?.runtime);
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
      throw new Error(`McpRegistry.update(${JSON.stringify(name)}) needs the fields to change: { title?, description?, annotations? }.`);
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

  private toggle(target: McpToggleTarget, name: string, next: { enabled?: boolean; update?: McpCapabilityUpdate }, type: 'enabled' | 'disabled' | 'updated'): boolean {
    const known =
      target === 'tool' ? this.toolMap.has(name) : target === 'prompt' ? this.promptMap.has(name) : target === 'resource' ? this.resourceMap.has(name) : this.templateMap.has(name);
    const state = this.toggles.change(target, name, next);
    this.changeCount++;
    const kind = target === 'tool' ? 'tools' : target === 'prompt' ? 'prompts' : 'resources';
    this.changeSubject.next({ kind, type, name, toggle: state });
    return known;
  }

  completer(target: CompletionTarget, argument: string): Completer | undefined {
    return this.completers.get(completerKey(target, argument))?.completer;
  }

  /** Adds a resource at runtime; clients are told the resource list changed. */
  addResource(definition: DynamicResourceDefinition): void {
    const { handler, decorators, ...rest } = definition;
    if (this.resourceMap.has(definition.uri)) throw new Error(messages.RUNTIME_DUPLICATE('Resource', definition.uri, 'removeResource'));
    const site = `McpRegistry.addResource(${definition.uri})`;
    const runtime = this.runtime(site, decorators, (call) => handler(call.context), `resource:${rest.uri}`, `resource "${rest.uri}"`);
    this.registerResource(
      this.resourceFactory.buildResource({ ...rest, ...capabilityAccess(rest.uri, runtime.authorize, runtime.requiredScopes) }, resourceCall(rest.uri, runtime.invoke), site),
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
  addResourceTemplate<TVars = Record<string, string | string[]>>(definition: DynamicResourceTemplateDefinition<TVars>): void {
    const { handler, complete, decorators, ...rest } = definition;
    const key = definition.uriTemplate;
    if (this.templateMap.has(key)) throw new Error(messages.RUNTIME_DUPLICATE('Resource template', key, 'removeResourceTemplate'));
    const site = `McpRegistry.addResourceTemplate(${key})`;
    const pipeline = this.runtime(site, decorators, (call) => handler(call.arguments as TVars, call.name, call.context), `template:${key}`, `resource template "${key}"`);
    const runtime = this.resourceFactory.buildTemplate(
      { ...rest, ...capabilityAccess(key, pipeline.authorize, pipeline.requiredScopes) },
      templateCall(pipeline.invoke),
      site,
    );
    const target: CompletionTarget = { kind: 'resourceTemplate', uriTemplate: key };
    const inline = this.inlineCompleters(target, runtime.arguments, complete, site);
    this.registerResourceTemplate(runtime, site);
    for (const [argument, completer] of inline) this.completers.set(completerKey(target, argument), { completer, site, inline: true });
    this.changeSubject.next({ kind: 'resources', type: 'added', name: key });
  }

  /** Removes a resource template (by its exact uriTemplate); returns false when there was none. */
  removeResourceTemplate(uriTemplate: string): boolean {
    if (!this.templateMap.delete(uriTemplate)) return false;
    this.templateList = this.templateList.filter((t) => t.uriTemplate !== uriTemplate);
    this.dropInlineCompleters({ kind: 'resourceTemplate', uriTemplate });
    this.changeCount++;
    this.changeSubject.next({ kind: 'resources', type: 'removed', name: uriTemplate });
    return true;
  }

  /** Adds a prompt at runtime; clients are told the prompt list changed. */
  addPrompt<TArgs = Record<string, never>>(definition: DynamicPromptDefinition<TArgs>): void {
    const { handler, complete, decorators, ...rest } = definition;
    if (this.promptMap.has(definition.name)) throw new Error(messages.RUNTIME_DUPLICATE('Prompt', definition.name, 'removePrompt'));
    const site = `McpRegistry.addPrompt(${definition.name})`;
    const pipeline = this.runtime(site, decorators, (call) => handler(call.arguments as TArgs, call.context), `prompt:${rest.name}`, `prompt "${rest.name}"`);
    const runtime = this.promptFactory.build(
      { ...rest, ...capabilityAccess(rest.name, pipeline.authorize, pipeline.requiredScopes) },
      promptCall(rest.name, pipeline.invoke),
      site,
    );
    const target: CompletionTarget = { kind: 'prompt', name: definition.name };
    const inline = this.inlineCompleters(target, runtime.arguments, complete, site);
    this.registerPrompt(runtime, site);
    for (const [argument, completer] of inline) this.completers.set(completerKey(target, argument), { completer, site, inline: true });
    this.changeSubject.next({ kind: 'prompts', type: 'added', name: definition.name });
  }

  /** Removes a prompt; returns false when there was none by that name. */
  removePrompt(name: string): boolean {
    if (!this.promptMap.delete(name)) return false;
    this.promptList = this.promptList.filter((p) => p.name !== name);
    this.dropInlineCompleters({ kind: 'prompt', name });
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
      throw new Error('McpRegistry.notifyResourceUpdated needs the URI of the resource that changed, as a non-empty string.');
    }
    this.changeSubject.next({ kind: 'resource-updated', uri });
  }

  /** @internal Registers a built resource, failing on a duplicate URI or one a template shadows. */
  registerResource(runtime: ResourceRuntime, site: string): void {
    const existing = this.resourceMap.get(runtime.uri);
    if (existing) throw new Error(messages.DUPLICATE_RESOURCE(runtime.uri, existing.site, site));
    for (const { runtime: template, site: templateSite } of this.templateMap.values()) {
      if (template.template.match(runtime.uri)) {
        throw new Error(messages.RESOURCE_SHADOWED(runtime.uri, site, template.uriTemplate, templateSite));
      }
    }
    const owner = this.resourceRepositoryList.find(({ runtime: r }) => runtime.uri.startsWith(r.uriPrefix));
    if (owner) throw new Error(messages.RESOURCE_UNDER_REPOSITORY(runtime.uri, site, owner.runtime.uriPrefix, owner.site));
    this.resourceMap.set(runtime.uri, { runtime, site });
    this.resourceList = [...this.resourceList, runtime];
    this.changeCount++;
  }

  /** @internal Registers a built template, failing on a duplicate or on a resource it would shadow. */
  registerResourceTemplate(runtime: ResourceTemplateRuntime, site: string): void {
    const existing = this.templateMap.get(runtime.uriTemplate);
    if (existing) throw new Error(messages.DUPLICATE_RESOURCE_TEMPLATE(runtime.uriTemplate, existing.site, site));
    for (const { runtime: resource, site: resourceSite } of this.resourceMap.values()) {
      if (runtime.template.match(resource.uri)) {
        throw new Error(messages.RESOURCE_SHADOWED(resource.uri, resourceSite, runtime.uriTemplate, site));
      }
    }
    const owner = this.resourceRepositoryList.find(({ runtime: r }) => runtime.template.mayMatchUnder(r.uriPrefix));
    if (owner) throw new Error(messages.TEMPLATE_OVERLAPS_REPOSITORY(runtime.uriTemplate, site, owner.runtime.uriPrefix, owner.site));
    this.templateMap.set(runtime.uriTemplate, { runtime, site });
    this.templateList = [...this.templateList, runtime];
    this.changeCount++;
  }

  /** @internal Registers a built prompt, failing on a duplicate name. */
  registerPrompt(runtime: PromptRuntime, site: string): void {
    const existing = this.promptMap.get(runtime.name);
    if (existing) throw new Error(messages.DUPLICATE_PROMPT(runtime.name, existing.site, site));
    const owner = this.promptRepositoryList.find(({ runtime: r }) => runtime.name.startsWith(r.namePrefix));
    if (owner) throw new Error(messages.PROMPT_UNDER_REPOSITORY(runtime.name, site, owner.runtime.namePrefix, owner.site));
    this.promptMap.set(runtime.name, { runtime, site });
    this.promptList = [...this.promptList, runtime];
    this.changeCount++;
  }

  resourceRepositories(): readonly ResourceRepositoryRuntime[] {
    return this.resourceRepositoryList.map((entry) => entry.runtime);
  }

  /** The repository whose prefix a URI is under; none for a URI whose dot segments would lead out of it. */
  resourceRepositoryFor(uri: string): ResourceRepositoryRuntime | undefined {
    if (hasDotSegment(uri)) return undefined;
    return this.resourceRepositoryList.find(({ runtime }) => uri.startsWith(runtime.uriPrefix))?.runtime;
  }

  promptRepositories(): readonly PromptRepositoryRuntime[] {
    return this.promptRepositoryList.map((entry) => entry.runtime);
  }

  promptRepositoryFor(name: string): PromptRepositoryRuntime | undefined {
    return this.promptRepositoryList.find(({ runtime }) => name.startsWith(runtime.namePrefix))?.runtime;
  }

  /**
   * @internal Registers a resource repository, failing when its prefix overlaps another
   * repository's, a template's URI space or a fixed resource's URI.
   */
  registerResourceRepository(runtime: ResourceRepositoryRuntime, site: string): void {
    const prefix = runtime.uriPrefix;
    checkPrefixes('Resource repository', prefix, site, this.resourceRepositoryList.map((other) => [other.runtime.uriPrefix, other.site]));
    for (const { runtime: template, site: templateSite } of this.templateMap.values()) {
      if (template.template.mayMatchUnder(prefix)) throw new Error(messages.TEMPLATE_OVERLAPS_REPOSITORY(template.uriTemplate, templateSite, prefix, site));
    }
    for (const { runtime: resource, site: resourceSite } of this.resourceMap.values()) {
      if (resource.uri.startsWith(prefix)) throw new Error(messages.RESOURCE_UNDER_REPOSITORY(resource.uri, resourceSite, prefix, site));
    }
    this.resourceRepositoryList.push({ runtime, site });
    this.changeCount++;
  }

  /** @internal Registers a prompt repository, failing when its prefix overlaps another's or a declared prompt's name. */
  registerPromptRepository(runtime: PromptRepositoryRuntime, site: string): void {
    const prefix = runtime.namePrefix;
    checkPrefixes('Prompt repository', prefix, site, this.promptRepositoryList.map((other) => [other.runtime.namePrefix, other.site]));
    for (const { runtime: prompt, site: promptSite } of this.promptMap.values()) {
      if (prompt.name.startsWith(prefix)) throw new Error(messages.PROMPT_UNDER_REPOSITORY(prompt.name, promptSite, prefix, site));
    }
    this.promptRepositoryList.push({ runtime, site });
    this.changeCount++;
  }

  /**
   * Tells clients of both eras that a list changed when nothing registered here did: a
   * repository's pages (rows added or removed in its table), for instance. With Redis every
   * instance's clients hear it. Cursors stay valid: the catalog is unchanged, and a repository's
   * own cursor is its own to honour or refuse.
   */
  notifyListChanged(list: 'tools' | 'prompts' | 'resources'): void {
    if (list !== 'tools' && list !== 'prompts' && list !== 'resources') {
      throw new Error(`McpRegistry.notifyListChanged needs the list that changed: "resources", "prompts" or "tools" (got ${JSON.stringify(list)}).`);
    }
    this.changeSubject.next({ kind: list, type: 'changed' });
  }

  /**
   * @internal Registers a decorated completer once discovery is done, failing when its prompt or
   * template, or the argument, does not exist, or when the argument already has a completer.
   */
  registerCompleter(target: CompletionTarget, argument: string, completer: Completer, site: string): void {
    const args = this.targetArguments(target);
    const label = describeTarget(target);
    if (!args) {
      const known =
        target.kind === 'prompt'
          ? this.promptList.map((p) => `"${p.name}"`)
          : this.templateList.map((t) => `"${t.uriTemplate}"`);
      throw new Error(messages.COMPLETE_UNKNOWN_TARGET(site, label, known));
    }
    if (!args.some((a) => a.name === argument)) {
      throw new Error(messages.COMPLETE_UNKNOWN_ARGUMENT(site, label, argument, args.map((a) => a.name)));
    }
    const key = completerKey(target, argument);
    const existing = this.completers.get(key);
    if (existing) throw new Error(messages.DUPLICATE_COMPLETER(label, argument, existing.site, site));
    this.completers.set(key, { completer, site, inline: false });
  }

  private targetArguments(target: CompletionTarget): readonly CompletableArgument[] | undefined {
    return target.kind === 'prompt' ? this.prompt(target.name)?.arguments : this.resourceTemplate(target.uriTemplate)?.arguments;
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
        throw new Error(messages.COMPLETE_UNKNOWN_ARGUMENT(site, describeTarget(target), argument, args.map((a) => a.name)));
      }
      if (typeof fn !== 'function') throw new Error(`${site}: complete.${argument} must be a function.`);
      // The target's guards and scopes are checked before any completion; the completer itself
      // runs through the global enhancers, as a completer method would.
      const completion = this.runtime(`${site} complete.${argument}`, undefined, (call) => {
        const request = call.arguments as Parameters<Completer>[0];
        return fn(request.value, request.context, call.context);
      });
      out.push([argument, completerCall(target.kind === 'prompt' ? target.name : target.uriTemplate, completion.invoke)]);
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
    if (this.pipeline) {
      const handler = this.pipeline.createRuntime(run, decorators, site);
      if (policyKey === undefined || !handler.policyHost) return handler;
      return { ...handler, invoke: this.pipeline.gated({ key: policyKey, label: label ?? site, ...handler.policyHost }, handler.invoke) };
    }
    if (this.handlers) throw new Error(messages.RUNTIME_BEFORE_DISCOVERY(site));
    if (decorators?.length) throw new Error(messages.RUNTIME_DECORATORS_WITHOUT_NEST(site));
    return { invoke: (call) => defer(() => toObservable(run(call))) };
  }

  private dropInlineCompleters(target: CompletionTarget): void {
    const prefix = completerKey(target, '');
    for (const [key, entry] of this.completers) if (entry.inline && key.startsWith(prefix)) this.completers.delete(key);
  }
}

/** Fails when a new repository prefix and a registered one overlap (either starts with the other). */
function checkPrefixes(what: string, prefix: string, site: string, registered: Array<[string, string]>): void {
  for (const [other, otherSite] of registered) {
    if (prefix.startsWith(other) || other.startsWith(prefix)) throw new Error(messages.REPOSITORY_OVERLAP(what, other, otherSite, prefix, site));
  }
}

function completerKey(target: CompletionTarget, argument: string): string {
  return `${target.kind}\u0000${target.kind === 'prompt' ? target.name : target.uriTemplate}\u0000${argument}`;
}

function describeTarget(target: CompletionTarget): string {
  return target.kind === 'prompt' ? `prompt "${target.name}"` : `resource template "${target.uriTemplate}"`;
}
