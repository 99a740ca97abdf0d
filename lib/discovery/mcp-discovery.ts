import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit, type Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { MCP_RESOLVED_OPTIONS } from '../common/mcp.constants.js';
import * as messages from '../common/mcp.messages.js';
import type { ResolvedMcpOptions } from '../interfaces/mcp-module-options.interface.js';
import { McpHandlerFactory, type McpInvoker } from '../execution/mcp-handler.factory.js';
import { MCP_REQUIRED_SCOPES, requiredScopesOf } from '../auth/require-scopes.decorator.js';
import { Args, Ctx } from '../decorators/params.decorators.js';
import {
  buildPromptRepository,
  buildResourceRepository,
  checkRepositoryMethods,
  type RepositoryParts,
} from './repository-runtime.factory.js';
import type { Completer, CompletionTarget, McpAccess } from '../protocol/catalog.js';
import { capabilityAccess, completerCall, promptCall, resourceCall, templateCall } from './capability-calls.js';
import { McpMetadataAccessor } from './mcp-metadata.accessor.js';
import { McpRegistry } from './mcp.registry.js';
import { toolsetOf } from './mcp-toolset.js';
import { MCP_FEATURES, type McpFeature } from './mcp-feature.js';

const PRIMITIVES = new Set<unknown>([Object, String, Number, Boolean, Array, Function, Promise, Symbol, BigInt]);

/** `createTask` → `create_task`, `HTTPStatus` → `http_status`. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * Walks the application's providers (or those of the `include` modules) at bootstrap and
 * registers every `@Tool()`, `@Resource()`, `@ResourceTemplate()`, `@Prompt()` and `@Complete()`
 * method it finds.
 */
@Injectable()
export class McpDiscovery implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('McpModule');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: McpMetadataAccessor,
    private readonly handlers: McpHandlerFactory,
    private readonly registry: McpRegistry,
    @Inject(MCP_RESOLVED_OPTIONS) private readonly options: ResolvedMcpOptions,
    @Inject(MCP_FEATURES) private readonly features: readonly McpFeature[],
  ) {}

  /**
   * The one provider walk: registers the tools, resources, templates, prompts and completers it
   * finds, shows every method to the packs that visit ({@link McpFeature.visit}), then lets every
   * pack settle.
   */
  async onModuleInit(): Promise<void> {
    this.walk();
    await Promise.all(this.features.map((feature) => feature.settle?.()));
  }

  /** Every pack's bootstrap checks, once every pack settled. */
  async onApplicationBootstrap(): Promise<void> {
    for (const feature of this.features) await feature.ready?.();
  }

  private walk(): void {
    const visitors = this.features.filter((feature) => feature.visit);
    const scope = this.options.include ? { include: this.options.include as Function[] } : {};
    const wrappers = [...this.discovery.getProviders(scope), ...this.discovery.getControllers(scope)];
    const seen = new Set<object>();
    const completers: PendingCompleter[] = [];
    for (const wrapper of wrappers) {
      if (wrapper.isAlias) continue;
      const scoped = !wrapper.isDependencyTreeStatic();
      // A request-scoped provider has no real instance at bootstrap: read its class, and let
      // each call resolve a fresh instance.
      const instance = scoped ? undefined : (wrapper.instance as object | undefined);
      const prototype = (
        instance ? Object.getPrototypeOf(instance) : (wrapper.metatype as Type<unknown> | null)?.prototype
      ) as object | undefined;
      if (!prototype || (!scoped && !instance)) continue;
      const identity = instance ?? prototype;
      if (seen.has(identity)) continue;
      seen.add(identity);
      const className = classNameOf(wrapper, prototype);
      const methodNames = this.scanner.getAllMethodNames(prototype);
      // A provider of McpModule.forFeature() gets its toolset's prefix, and sites say which
      // toolset, so a clash between two instances of one class names both.
      const toolset = toolsetOf(wrapper as never);
      const prefix = toolset?.prefix ?? '';
      const where = toolset ? ` in ${toolset.label}` : '';
      const repositoryMethods = this.exploreRepository(wrapper, instance, prototype, `${className}${where}`);
      this.checkScopePlacement(prototype, methodNames, className, repositoryMethods);
      for (const methodName of methodNames) {
        this.exploreFeatures(
          wrapper,
          instance,
          prototype,
          methodName,
          `${className}#${methodName}${where}`,
          completers,
          prefix,
        );
        const shown = (prototype as Record<string, unknown>)[methodName];
        const found = { wrapper, prototype, methodName, method: shown, site: `${className}#${methodName}`, instance };
        for (const visitor of visitors) visitor.visit!(toolset ? { ...found, toolset } : found);
      }
    }
    // Completers attach once every prompt and template is known, wherever it was declared.
    for (const { target, argument, completer, site } of completers)
      this.registry.registerCompleter(target, argument, completer, site);
    this.logger.log(
      `Discovered ${this.registry.tools().length} MCP tool(s): ${this.registry.toolNames().join(', ') || 'none'}`,
    );
    const { resources, templates, prompts } = {
      resources: this.registry.resources().length,
      templates: this.registry.resourceTemplates().length,
      prompts: this.registry.prompts().length,
    };
    if (resources + templates + prompts > 0) {
      this.logger.log(
        `Discovered ${resources} MCP resource(s), ${templates} resource template(s), ${prompts} prompt(s).`,
      );
    }
  }

  /** Whether a pack's decorator declares a capability on the method. */
  private packCapability(method: unknown): boolean {
    return (
      typeof method === 'function' &&
      this.features.some((feature) => feature.capabilityKeys?.some((key) => Reflect.hasMetadata(key, method)))
    );
  }

  /** Registers the `@Resource()`, `@ResourceTemplate()`, `@Prompt()` and `@Complete()` of one method. */
  private exploreFeatures(
    wrapper: InstanceWrapper,
    instance: object | undefined,
    prototype: object,
    methodName: string,
    site: string,
    completers: PendingCompleter[],
    prefix = '',
  ): void {
    const method = (prototype as Record<string, unknown>)[methodName];
    const resource = this.accessor.getResourceMetadata(method);
    const template = this.accessor.getResourceTemplateMetadata(method);
    const prompt = this.accessor.getPromptMetadata(method);
    const completes = this.accessor.getCompleteMetadata(method);
    if (!resource && !template && !prompt && completes.length === 0) return;
    this.checkParams(
      prototype,
      methodName,
      site,
      resource ? 'resource' : template ? 'resource template' : prompt ? 'prompt' : 'completer',
    );
    const registry = this.registry;
    if (completes.length > 0) this.bindCompletionParams(prototype, methodName);
    const invoker = this.invokerFor(wrapper, instance, methodName);
    if (resource) {
      const { methodName: _m, name, ...rest } = resource;
      const runtime = registry.resourceFactory.buildResource(
        {
          ...rest,
          name: name ?? toSnakeCase(methodName),
          ...this.access(wrapper, instance, prototype, methodName, rest.uri),
        },
        resourceCall(
          rest.uri,
          this.gated(`resource:${rest.uri}`, `resource "${rest.uri}"`, prototype, methodName, invoker),
        ),
        site,
      );
      registry.registerResource(runtime, site);
    }
    if (template) {
      const { methodName: _m, name, args, ...rest } = template;
      const runtime = registry.resourceFactory.buildTemplate(
        {
          ...rest,
          name: name ?? toSnakeCase(methodName),
          args: args ?? this.argsDto(prototype, methodName, site, 'resource template', false),
          ...this.access(wrapper, instance, prototype, methodName, rest.uriTemplate),
        },
        templateCall(
          this.gated(
            `template:${rest.uriTemplate}`,
            `resource template "${rest.uriTemplate}"`,
            prototype,
            methodName,
            invoker,
          ),
        ),
        site,
      );
      registry.registerResourceTemplate(runtime, site);
    }
    if (prompt) {
      const { methodName: _m, name: declaredName, args, ...rest } = prompt;
      const name = prefix + (declaredName ?? toSnakeCase(methodName));
      const runtime = registry.promptFactory.build(
        {
          ...rest,
          name,
          args: args ?? this.argsDto(prototype, methodName, site, 'prompt', true),
          ...this.access(wrapper, instance, prototype, methodName, name),
        },
        promptCall(name, this.gated(`prompt:${name}`, `prompt "${name}"`, prototype, methodName, invoker)),
        site,
      );
      registry.registerPrompt(runtime, site);
    }
    const completerScopes =
      completes.length > 0 ? requiredScopesOf(prototype.constructor, method as Function) : undefined;
    for (const declared of completes) {
      const { argument } = declared;
      // Completers of a toolset complete that toolset's (prefixed) prompts.
      const target: CompletionTarget =
        declared.target.kind === 'prompt' && prefix
          ? { kind: 'prompt', name: prefix + declared.target.name }
          : declared.target;
      const name = target.kind === 'prompt' ? target.name : target.uriTemplate;
      completers.push({ target, argument, site, completer: completerCall(name, invoker, completerScopes) });
    }
  }

  /**
   * Registers the class as a resource or prompt repository when it is decorated as one; returns
   * the methods that serve it (their @RequireScopes are enforced).
   */
  private exploreRepository(
    wrapper: InstanceWrapper,
    instance: object | undefined,
    prototype: object,
    site: string,
  ): readonly string[] {
    const ctor = prototype.constructor;
    const resources = this.accessor.getResourceRepositoryMetadata(ctor);
    const prompts = this.accessor.getPromptRepositoryMetadata(ctor);
    if (!resources && !prompts) return [];
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
    // Parameters the user left undecorated receive what the interface promises, in order.
    const bindings: Record<string, ParameterDecorator[]> = resources
      ? { list: [Args(), Ctx()], read: [Args('uri'), Ctx()] }
      : { list: [Args(), Ctx()], get: [Args('name'), Args('arguments'), Ctx()] };
    for (const [methodName, decorators] of Object.entries(bindings)) {
      this.checkParams(prototype, methodName, `${site}#${methodName}`, 'repository method');
      const decorated = this.accessor.getDecoratedParamIndices(ctor, methodName);
      decorators.forEach((decorator, index) => !decorated.has(index) && decorator(prototype, methodName, index));
    }
    const key = resources ? `resource-repository:${resources.uriPrefix}` : `prompt-repository:${prompts!.namePrefix}`;
    const parts: RepositoryParts = {
      site,
      invoke: (methodName) =>
        this.gated(key, `repository "${site}"`, prototype, methodName, this.invokerFor(wrapper, instance, methodName)),
      access: (methodName, name) => this.access(wrapper, instance, prototype, methodName, name),
    };
    if (resources) this.registry.registerResourceRepository(buildResourceRepository(resources, parts), site);
    else this.registry.registerPromptRepository(buildPromptRepository(prompts!, parts), site);
    return methods;
  }

  /** Refuses a parameter decorated by a decorator the MCP call cannot fill (it would silently get undefined). */
  private checkParams(prototype: object, methodName: string, site: string, what: string): void {
    const [foreign] = this.accessor.getForeignParams(prototype.constructor, methodName);
    if (foreign) throw new Error(messages.FOREIGN_PARAM_DECORATOR(site, what, foreign.index, foreign.type));
  }

  /**
   * @RequireScopes is enforced on MCP capabilities only (the transports ask McpDispatcher.requiredScopes);
   * anywhere else it would protect nothing while looking as if it did, so the bootstrap refuses it.
   */
  private checkScopePlacement(
    prototype: object,
    methodNames: string[],
    className: string,
    repositoryMethods: readonly string[] = [],
  ): void {
    let capabilities = repositoryMethods.length;
    for (const methodName of methodNames) {
      const method = (prototype as Record<string, unknown>)[methodName];
      if (this.accessor.hasMcpMetadata(method) || this.packCapability(method) || repositoryMethods.includes(methodName))
        capabilities++;
      else if (typeof method === 'function' && Reflect.hasOwnMetadata(MCP_REQUIRED_SCOPES, method)) {
        throw new Error(messages.SCOPES_NOT_ON_CAPABILITY(`${className}#${methodName}`));
      }
    }
    if (capabilities === 0 && Reflect.hasOwnMetadata(MCP_REQUIRED_SCOPES, prototype.constructor)) {
      throw new Error(messages.SCOPES_NOT_ON_CAPABILITY(className));
    }
  }

  /**
   * What authorization needs of one capability method: the scopes of its class and method, and
   * a check of its guards. Guards need no real instance: a request-scoped provider is probed
   * through its class.
   */
  private access(
    wrapper: InstanceWrapper,
    instance: object | undefined,
    prototype: object,
    methodName: string,
    name: string,
  ): McpAccess {
    const probeHost = instance ?? (wrapper.instance as object | undefined) ?? Object.create(prototype);
    const scopes = requiredScopesOf(prototype.constructor, (prototype as Record<string, Function>)[methodName]);
    return capabilityAccess(name, this.handlers.createGuardCheck(probeHost, methodName), scopes);
  }

  /**
   * The DTO of a whole-object `@Args()` parameter, when its type is a class. Without one a
   * template gets its variables as strings; a prompt takes no arguments.
   */
  private argsDto(
    prototype: object,
    methodName: string,
    site: string,
    what: string,
    strict: boolean,
  ): Type<unknown> | undefined {
    const whole = this.accessor.getArgsParams(prototype.constructor, methodName).filter((p) => p.data === undefined);
    if (whole.length > 1) throw new Error(messages.MULTIPLE_ARGS_PARAMS_OF(site, what));
    if (whole.length === 0) return undefined;
    const paramtypes: unknown[] = Reflect.getMetadata('design:paramtypes', prototype, methodName) ?? [];
    const type = paramtypes[whole[0]!.index];
    if (typeof type === 'function' && !PRIMITIVES.has(type)) return type as Type<unknown>;
    if (strict) throw new Error(messages.AMBIGUOUS_ARGS(site, what));
    return undefined;
  }

  /**
   * A completer's first two parameters receive the typed value and the context without
   * decorators; parameters the user decorated keep their decorator.
   */
  private bindCompletionParams(prototype: object, methodName: string): void {
    const decorated = this.accessor.getDecoratedParamIndices(prototype.constructor, methodName);
    if (!decorated.has(0)) Args('value')(prototype, methodName, 0);
    if (!decorated.has(1)) Args('context')(prototype, methodName, 1);
  }

  /**
   * Policies read their decorators from the class and method, and count by the capability's key:
   * a request-scoped provider's fresh instance per call shares one count.
   */
  private gated(key: string, label: string, prototype: object, methodName: string, invoke: McpInvoker): McpInvoker {
    return this.handlers.gated(
      { key, label, owner: prototype.constructor, method: (prototype as Record<string, Function>)[methodName]! },
      invoke,
    );
  }

  /** Singletons are wrapped once; request-scoped providers resolve an instance per call. */
  private invokerFor(wrapper: InstanceWrapper, instance: object | undefined, methodName: string): McpInvoker {
    return instance ? this.handlers.create(instance, methodName) : this.handlers.createScoped(wrapper, methodName);
  }
}

function classNameOf(wrapper: InstanceWrapper, prototype: object): string {
  const ctorName = (prototype as { constructor?: { name?: string } }).constructor?.name;
  return ctorName && ctorName !== 'Object' ? ctorName : String(wrapper.name ?? 'provider');
}

interface PendingCompleter {
  target: CompletionTarget;
  argument: string;
  completer: Completer;
  site: string;
}
