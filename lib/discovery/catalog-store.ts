import type {
  Completer,
  CompletionTarget,
  McpFeatureCatalog,
  PromptRuntime,
  ResourceRuntime,
  ResourceTemplateRuntime,
  ToolRuntime,
} from '../protocol/catalog.js';
import {
  hasDotSegment,
  type PromptRepositoryRuntime,
  type ResourceRepositoryRuntime,
} from '../protocol/repositories.js';
import type { McpToolSource } from '../catalog/catalog.js';
import * as messages from '../common/mcp.messages.js';
import { CapabilityToggles } from './capability-toggles.js';
import { CompleterTable } from './completer-table.js';

interface Registered<T> {
  runtime: T;
  site: string;
}

/**
 * The capabilities of one module as the protocol reads them (the McpFeatureCatalog) and as
 * discovery registers them at bootstrap, with the checks every registration passes (names,
 * duplicates, repository prefixes). McpRegistry adds the runtime API on top.
 */
export abstract class McpCatalogStore implements McpFeatureCatalog {
  protected readonly toolMap = new Map<
    string,
    { runtime: ToolRuntime; site: string; source: McpToolSource; rename?: string }
  >();

  protected toolList: ToolRuntime[] = [];

  protected changeCount = 0;

  protected readonly resourceMap = new Map<string, Registered<ResourceRuntime>>();

  protected resourceList: ResourceRuntime[] = [];

  protected readonly templateMap = new Map<string, Registered<ResourceTemplateRuntime>>();

  protected templateList: ResourceTemplateRuntime[] = [];

  protected readonly promptMap = new Map<string, Registered<PromptRuntime>>();

  protected promptList: PromptRuntime[] = [];

  protected readonly completers = new CompleterTable();

  protected readonly resourceRepositoryList: Array<Registered<ResourceRepositoryRuntime>> = [];

  protected readonly promptRepositoryList: Array<Registered<PromptRepositoryRuntime>> = [];

  protected readonly toggles = new CapabilityToggles();

  /** @internal Checks every tool as it registers (tool sets: its sets exist); set at bootstrap. */
  toolCheck?: (runtime: ToolRuntime, site: string) => void;

  protected constructor(private readonly namePattern: RegExp) {}

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
    if (existing)
      throw new Error(
        messages.DUPLICATE_TOOL(runtime.name, { site: existing.site, rename: existing.rename }, { site, rename }),
      );
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

  completer(target: CompletionTarget, argument: string): Completer | undefined {
    return this.completers.get(target, argument);
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
    if (owner)
      throw new Error(messages.RESOURCE_UNDER_REPOSITORY(runtime.uri, site, owner.runtime.uriPrefix, owner.site));
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
    if (owner)
      throw new Error(
        messages.TEMPLATE_OVERLAPS_REPOSITORY(runtime.uriTemplate, site, owner.runtime.uriPrefix, owner.site),
      );
    this.templateMap.set(runtime.uriTemplate, { runtime, site });
    this.templateList = [...this.templateList, runtime];
    this.changeCount++;
  }

  /** @internal Registers a built prompt, failing on a duplicate name. */
  registerPrompt(runtime: PromptRuntime, site: string): void {
    const existing = this.promptMap.get(runtime.name);
    if (existing) throw new Error(messages.DUPLICATE_PROMPT(runtime.name, existing.site, site));
    const owner = this.promptRepositoryList.find(({ runtime: r }) => runtime.name.startsWith(r.namePrefix));
    if (owner)
      throw new Error(messages.PROMPT_UNDER_REPOSITORY(runtime.name, site, owner.runtime.namePrefix, owner.site));
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
    checkPrefixes(
      'Resource repository',
      prefix,
      site,
      this.resourceRepositoryList.map((other) => [other.runtime.uriPrefix, other.site]),
    );
    for (const { runtime: template, site: templateSite } of this.templateMap.values()) {
      if (template.template.mayMatchUnder(prefix))
        throw new Error(messages.TEMPLATE_OVERLAPS_REPOSITORY(template.uriTemplate, templateSite, prefix, site));
    }
    for (const { runtime: resource, site: resourceSite } of this.resourceMap.values()) {
      if (resource.uri.startsWith(prefix))
        throw new Error(messages.RESOURCE_UNDER_REPOSITORY(resource.uri, resourceSite, prefix, site));
    }
    this.resourceRepositoryList.push({ runtime, site });
    this.changeCount++;
  }

  /** @internal Registers a prompt repository, failing when its prefix overlaps another's or a declared prompt's name. */
  registerPromptRepository(runtime: PromptRepositoryRuntime, site: string): void {
    const prefix = runtime.namePrefix;
    checkPrefixes(
      'Prompt repository',
      prefix,
      site,
      this.promptRepositoryList.map((other) => [other.runtime.namePrefix, other.site]),
    );
    for (const { runtime: prompt, site: promptSite } of this.promptMap.values()) {
      if (prompt.name.startsWith(prefix))
        throw new Error(messages.PROMPT_UNDER_REPOSITORY(prompt.name, promptSite, prefix, site));
    }
    this.promptRepositoryList.push({ runtime, site });
    this.changeCount++;
  }

  /**
   * @internal Registers a decorated completer once discovery is done, failing when its prompt or
   * template, or the argument, does not exist, or when the argument already has a completer.
   */
  registerCompleter(target: CompletionTarget, argument: string, completer: Completer, site: string): void {
    const args =
      target.kind === 'prompt'
        ? this.prompt(target.name)?.arguments
        : this.resourceTemplate(target.uriTemplate)?.arguments;
    const known = () =>
      target.kind === 'prompt'
        ? this.promptList.map((p) => `"${p.name}"`)
        : this.templateList.map((t) => `"${t.uriTemplate}"`);
    this.completers.register(target, argument, completer, site, args, known);
  }
}

/** Fails when a new repository prefix and a registered one overlap (either starts with the other). */
function checkPrefixes(what: string, prefix: string, site: string, registered: Array<[string, string]>): void {
  for (const [other, otherSite] of registered) {
    if (prefix.startsWith(other) || other.startsWith(prefix))
      throw new Error(messages.REPOSITORY_OVERLAP(what, other, otherSite, prefix, site));
  }
}
