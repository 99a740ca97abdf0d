import { Injectable, Logger } from '@nestjs/common';
import * as messages from '../common/mcp.messages.js';
import { MCP_RESOURCE_METADATA, MCP_RESOURCE_TEMPLATE_METADATA } from '../common/mcp.constants.js';
import { Args, Ctx } from '../decorators/params.decorators.js';
import { McpCapabilityPack } from '../discovery/capability-pack.js';
import { resourceCall, templateCall } from '../discovery/capability-calls.js';
import { toSnakeCase } from '../discovery/mcp-discovery.js';
import type { McpProviderMethod } from '../discovery/mcp-feature.js';
import type { McpFeatureHost } from '../protocol/feature-host.js';
import { promptRepositoryOf, resourceRepositoryOf } from './repository.decorator.js';
import {
  buildPromptRepository,
  buildResourceRepository,
  checkRepositoryMethods,
  type RepositoryParts,
} from './repository-runtime.factory.js';
import { resourceOf, templateOf } from './resource.decorator.js';
import { installResources } from './resources.js';

/**
 * Resources, templates, repositories (of resources and of prompts, which share their paging) and
 * subscriptions, and the `@Resource()`, `@ResourceTemplate()`, `@ResourceRepository()` and
 * `@PromptRepository()` the walk shows.
 */
@Injectable()
export class McpResourcesFeature extends McpCapabilityPack {
  readonly kind = 'resources';
  readonly capabilityKeys = [MCP_RESOURCE_METADATA, MCP_RESOURCE_TEMPLATE_METADATA];
  /** The first method of each repository instance, in walk order among the decorated methods. */
  private readonly repositories = new Set<McpProviderMethod>();
  private readonly instances = new Set<object>();

  install(host: McpFeatureHost): void {
    installResources(host, this.registry, this.options);
  }

  /** A repository's methods are capabilities: `@RequireScopes()` may sit on them. */
  classCapabilities(owner: Function): readonly string[] {
    return [
      ...(resourceRepositoryOf(owner) ? ['list', 'read'] : []),
      ...(promptRepositoryOf(owner) ? ['list', 'get'] : []),
    ];
  }

  override visit(method: McpProviderMethod): void {
    const identity = method.instance ?? method.prototype;
    if (!this.instances.has(identity)) {
      this.instances.add(identity);
      const owner = method.prototype.constructor;
      if (resourceRepositoryOf(owner) || promptRepositoryOf(owner)) {
        this.repositories.add(method);
        this.found.push(method);
        return;
      }
    }
    super.visit(method);
  }

  protected marks({ method }: McpProviderMethod): boolean {
    return resourceOf(method) !== undefined || templateOf(method) !== undefined;
  }

  settle(): void {
    for (const found of this.found) {
      // A repository is met at its class's first method, which may be a resource of its own too.
      if (this.repositories.has(found)) this.registerRepository(found);
      if (this.marks(found)) this.registerMethod(found);
    }
    const resources = this.registry.resources().length;
    const templates = this.registry.resourceTemplates().length;
    if (resources + templates > 0)
      new Logger('McpModule').log(`Discovered ${resources} MCP resource(s), ${templates} resource template(s).`);
  }

  private registerMethod(found: McpProviderMethod): void {
    const site = this.siteOf(found);
    const resource = resourceOf(found.method);
    const template = templateOf(found.method);
    this.checkParams(found, site, resource ? 'resource' : 'resource template');
    const invoker = this.invokerOf(found);
    if (resource) {
      const { methodName: _m, name, ...rest } = resource;
      const runtime = this.registry.resourceFactory.buildResource(
        { ...rest, name: name ?? toSnakeCase(found.methodName), ...this.access(found, rest.uri) },
        resourceCall(rest.uri, this.gated(`resource:${rest.uri}`, `resource "${rest.uri}"`, found, invoker)),
        site,
      );
      this.registry.registerResource(runtime, site);
    }
    if (template) {
      const { methodName: _m, name, args, ...rest } = template;
      const key = rest.uriTemplate;
      const runtime = this.registry.resourceFactory.buildTemplate(
        {
          ...rest,
          name: name ?? toSnakeCase(found.methodName),
          args: args ?? this.argsDto(found, site, 'resource template', false),
          ...this.access(found, key),
        },
        templateCall(this.gated(`template:${key}`, `resource template "${key}"`, found, invoker)),
        site,
      );
      this.registry.registerResourceTemplate(runtime, site);
    }
  }

  /** Registers the class of a method as a resource or prompt repository. */
  private registerRepository(found: McpProviderMethod): void {
    const { prototype } = found;
    const owner = prototype.constructor;
    const where = found.toolset ? ` in ${found.toolset.label}` : '';
    const site = `${found.site.slice(0, found.site.length - found.methodName.length - 1)}${where}`;
    const resources = resourceRepositoryOf(owner);
    const prompts = promptRepositoryOf(owner);
    if (resources && prompts) {
      throw new Error(
        messages.INVALID_REPOSITORY(
          site,
          'it is both a @ResourceRepository and a @PromptRepository, which would share one list() method. Split it into two classes',
        ),
      );
    }
    const methods = resources ? ['list', 'read'] : ['list', 'get'];
    checkRepositoryMethods(prototype, methods, resources ? '@ResourceRepository' : '@PromptRepository', site);
    const methodOf = (methodName: string): McpProviderMethod => ({
      ...found,
      methodName,
      method: (prototype as Record<string, unknown>)[methodName],
    });
    // Parameters the user left undecorated receive what the interface promises, in order.
    const bindings: Record<string, ParameterDecorator[]> = resources
      ? { list: [Args(), Ctx()], read: [Args('uri'), Ctx()] }
      : { list: [Args(), Ctx()], get: [Args('name'), Args('arguments'), Ctx()] };
    for (const [methodName, decorators] of Object.entries(bindings)) {
      this.checkParams(methodOf(methodName), `${site}#${methodName}`, 'repository method');
      const decorated = this.accessor.getDecoratedParamIndices(owner, methodName);
      decorators.forEach((decorator, index) => !decorated.has(index) && decorator(prototype, methodName, index));
    }
    const key = resources ? `resource-repository:${resources.uriPrefix}` : `prompt-repository:${prompts!.namePrefix}`;
    const parts: RepositoryParts = {
      site,
      invoke: (methodName) =>
        this.gated(key, `repository "${site}"`, methodOf(methodName), this.invokerOf(methodOf(methodName))),
      access: (methodName, name) => this.access(methodOf(methodName), name),
    };
    if (resources) this.registry.registerResourceRepository(buildResourceRepository(resources, parts), site);
    else this.registry.registerPromptRepository(buildPromptRepository(prompts!, parts), site);
  }
}
