import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Observable } from 'rxjs';
import { McpRegistry } from '../discovery/mcp.registry.js';
import type { McpContext } from '../protocol/context.js';
import { Emit } from '../protocol/emission.js';
import { ToolError } from '../protocol/errors.js';
import { isInputRequiredSignal } from '../protocol/interaction.js';
import type { JsonObject, ToolDescriptor } from '../protocol/mcp-types.js';
import type { PromptDescriptor } from '../protocol/prompt-messages.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';
import type { McpClient } from './mcp-client.js';
import { McpClientError } from './mcp-client.error.js';
import type { McpClientCaller } from './mcp-client.interfaces.js';
import { McpClients } from './mcp-clients.js';
import type { McpMountModuleOptions, McpMountOptions } from './mcp-mount.interfaces.js';

/** @internal */
export const MCP_MOUNT_OPTIONS = Symbol('MCP_MOUNT_OPTIONS');

const MOUNT_CLASH = (kind: string, name: string, client: string) =>
  `McpMountModule: the ${kind} "${name}" of upstream "${client}" clashes with a ${kind} this app already serves under that name. Give the mount another "prefix", or "exclude" the upstream's one.`;
const NO_REGISTRY =
  'McpMountModule found no McpModule in this application: import McpModule.forRoot({ name, version }) beside it.';
const UPSTREAM_FAILED = (client: string, name: string, detail: string) =>
  `The upstream MCP server "${client}" could not run "${name}": ${detail}`;

/**
 * Mounts upstream servers into the endpoint at bootstrap, through the registry's runtime API: each
 * mounted capability is a runtime capability of this app, so lists, paging, guard-aware lists,
 * tool sets, toggles and the whole call pipeline treat it as one of the app's own.
 */
@Injectable()
export class McpMounter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('McpMountModule');
  private readonly stops: Array<() => void> = [];

  constructor(
    @Inject(MCP_MOUNT_OPTIONS) private readonly options: McpMountModuleOptions,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    let registry: McpRegistry;
    try {
      registry = this.moduleRef.get(McpRegistry, { strict: false });
    } catch {
      throw new Error(NO_REGISTRY);
    }
    const clients = this.moduleRef.get(McpClients, { strict: false });
    try {
      for (const mount of this.options.mounts) {
        const client = clients.get(mount.client);
        // Listening starts before the first listing, and a change it hears waits for that listing.
        const mounted = this.mount(registry, client, mount);
        this.follow(registry, client, mount, mounted);
        await mounted;
      }
    } catch (error) {
      // A failed bootstrap runs no shutdown hook: stdio children started for the mounts would outlive it.
      await clients.onApplicationShutdown();
      throw error;
    }
  }

  onApplicationShutdown(): void {
    for (const stop of this.stops.splice(0)) stop();
  }

  /**
   * Re-lists the upstream's tools when it says they changed: tools it dropped are removed, new
   * ones mounted (the registry tells this endpoint's clients). One re-list at a time, in order.
   */
  private follow(registry: McpRegistry, client: McpClient, mount: McpMountOptions, mounted: Promise<void>): void {
    let queue = mounted.catch(() => undefined);
    this.stops.push(
      client.onListChanged((list) => {
        if (list !== 'tools') return;
        queue = queue
          .then(() => this.resyncTools(registry, client, mount))
          .catch((error: unknown) =>
            this.logger.warn(
              `Upstream "${mount.client}" changed its tools and could not be listed again: ${(error as Error).message}`,
            ),
          );
      }),
    );
  }

  private async resyncTools(registry: McpRegistry, client: McpClient, mount: McpMountOptions): Promise<void> {
    const tools = (await client.listTools()).filter((t) => wanted(mount, t.name));
    const current = new Set(tools.map((t) => `${mount.prefix}${t.name}`));
    const mounted = this.mountedTools.get(mount) ?? new Set<string>();
    for (const name of [...mounted]) {
      if (current.has(name)) continue;
      registry.removeTool(name);
      mounted.delete(name);
    }
    for (const tool of tools)
      if (!mounted.has(`${mount.prefix}${tool.name}`)) this.addTool(registry, client, mount, tool);
  }

  private readonly mountedTools = new Map<McpMountOptions, Set<string>>();

  private addTool(registry: McpRegistry, client: McpClient, mount: McpMountOptions, tool: ToolDescriptor): void {
    const name = `${mount.prefix}${tool.name}`;
    if (registry.tool(name)) throw new Error(MOUNT_CLASH('tool', name, mount.client));
    registry.addTool({
      name,
      ...(tool.title ? { title: tool.title } : {}),
      description: tool.description ?? `${tool.name} of ${mount.client}`,
      input: republished(tool.inputSchema),
      ...(tool.outputSchema ? { output: republished(tool.outputSchema) } : {}),
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
      decorators: mount.decorators,
      handler: (args: unknown, ctx: McpContext) => this.forwardTool(client, mount, tool.name, args as JsonObject, ctx),
    });
    let mounted = this.mountedTools.get(mount);
    if (!mounted) this.mountedTools.set(mount, (mounted = new Set()));
    mounted.add(name);
  }

  private async mount(registry: McpRegistry, client: McpClient, mount: McpMountOptions): Promise<void> {
    // The catalog is read as the app (no caller): an upstream that lists per caller is mounted with what the app may see.
    let tools: ToolDescriptor[];
    try {
      tools = await client.listTools();
    } catch (error) {
      // The rest of the endpoint keeps working; the upstream's capabilities are simply absent.
      this.logger.warn(`Upstream "${mount.client}" was not mounted: ${(error as Error).message}`);
      return;
    }
    const capabilities = (await client.info()).capabilities ?? {};
    for (const tool of tools.filter((t) => wanted(mount, t.name))) this.addTool(registry, client, mount, tool);
    if (mount.resources !== false && capabilities.resources) {
      for (const resource of await client.listResources()) {
        if (registry.resource(resource.uri)) throw new Error(MOUNT_CLASH('resource', resource.uri, mount.client));
        registry.addResource({
          uri: resource.uri,
          ...mounted(mount, resource),
          handler: (ctx: McpContext) => this.forwardRead(client, mount, resource.uri, ctx),
        });
      }
      for (const template of await client.listResourceTemplates()) {
        if (registry.resourceTemplate(template.uriTemplate))
          throw new Error(MOUNT_CLASH('resource template', template.uriTemplate, mount.client));
        registry.addResourceTemplate({
          uriTemplate: template.uriTemplate,
          ...mounted(mount, template),
          handler: (_variables: unknown, uri: string, ctx: McpContext) => this.forwardRead(client, mount, uri, ctx),
        });
      }
    }
    if (mount.prompts !== false && capabilities.prompts) {
      for (const prompt of (await client.listPrompts()).filter((p) => wanted(mount, p.name))) {
        const name = `${mount.prefix}${prompt.name}`;
        if (registry.prompt(name)) throw new Error(MOUNT_CLASH('prompt', name, mount.client));
        registry.addPrompt({
          name,
          ...(prompt.title ? { title: prompt.title } : {}),
          description: prompt.description ?? `${prompt.name} of ${mount.client}`,
          args: promptArguments(prompt) as StandardSchemaV1<unknown, Record<string, never>>,
          decorators: mount.decorators,
          handler: (args: Record<string, never>, ctx: McpContext) =>
            this.forwardPrompt(client, mount, prompt.name, args as Record<string, string>, ctx),
        });
      }
    }
    this.logger.log(`Mounted upstream "${mount.client}" under "${mount.prefix}".`);
  }

  /** Progress flows back as the app's own; the caller's cancellation reaches the upstream. */
  private forwardTool(
    client: McpClient,
    mount: McpMountOptions,
    name: string,
    args: JsonObject,
    ctx: McpContext,
  ): Observable<unknown> {
    return new Observable((subscriber) => {
      const abort = new AbortController();
      // On 2026-07-28 the caller's answer comes in a retry of this call: the question ends it here
      // (the upstream call is cancelled), and the retry asks the upstream again, answered at once.
      let roundTrip: unknown;
      const ask = async <T>(question: () => Promise<T>): Promise<T> => {
        try {
          return await question();
        } catch (error) {
          if (isInputRequiredSignal(error)) {
            roundTrip = error;
            abort.abort();
          }
          throw error;
        }
      };
      client
        .callTool(name, args, {
          signal: abort.signal,
          caller: callerOf(mount, ctx),
          onProgress: (progress) => subscriber.next(Emit.progress(progress.progress, progress.total, progress.message)),
          onElicit: (params) =>
            ask(async () =>
              params.mode === 'url'
                ? ((await ctx.elicitUrl(
                    String(params.message ?? ''),
                    String(params.url ?? ''),
                  )) as unknown as JsonObject)
                : ((await ctx.elicit(
                    String(params.message ?? ''),
                    params.requestedSchema ?? { type: 'object', properties: {} },
                  )) as unknown as JsonObject),
            ),
          onSample: (params) => ask(async () => (await ctx.sample(params as never)) as unknown as JsonObject),
        })
        .then(
          (result) => {
            subscriber.next({
              content: result.content ?? [],
              ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
              ...(result.isError ? { isError: true } : {}),
            });
            subscriber.complete();
          },
          (error: unknown) => subscriber.error(roundTrip ?? upstreamError(mount, name, error)),
        );
      return () => abort.abort();
    });
  }

  private async forwardRead(client: McpClient, mount: McpMountOptions, uri: string, ctx: McpContext): Promise<unknown> {
    try {
      return await client.readResource(uri, { signal: ctx.signal, caller: callerOf(mount, ctx) });
    } catch (error) {
      throw upstreamError(mount, uri, error);
    }
  }

  private async forwardPrompt(
    client: McpClient,
    mount: McpMountOptions,
    name: string,
    args: Record<string, string>,
    ctx: McpContext,
  ): Promise<unknown> {
    try {
      return await client.getPrompt(name, args, { signal: ctx.signal, caller: callerOf(mount, ctx) });
    } catch (error) {
      throw upstreamError(mount, name, error);
    }
  }
}

/** The listing fields of a mounted resource or template: its name prefixed, its description and type kept. */
function mounted(
  mount: McpMountOptions,
  entry: { name: string; description?: string; mimeType?: string },
): { name: string; description?: string; mimeType?: string; decorators?: MethodDecorator[] } {
  return {
    name: `${mount.prefix}${entry.name}`,
    ...(entry.description ? { description: entry.description } : {}),
    ...(entry.mimeType ? { mimeType: entry.mimeType } : {}),
    decorators: mount.decorators,
  };
}

/**
 * An upstream's schema as this endpoint lists it (JSON Schema 2020-12). Servers built on the
 * official SDK v1 state draft-07, whose keywords their simple object schemas share with 2020-12;
 * the upstream validates the arguments again itself.
 */
function republished(schema: unknown): JsonObject {
  if (typeof schema !== 'object' || schema === null) return { type: 'object' };
  const { $schema, ...rest } = schema as JsonObject;
  return typeof $schema === 'string' && !$schema.includes('2020-12') ? rest : (schema as JsonObject);
}

/** Whether the mount takes the upstream's capability of this name (before prefixing). */
function wanted(mount: McpMountOptions, name: string): boolean {
  return (!mount.include || mount.include.includes(name)) && !mount.exclude?.includes(name);
}

/** The principal and bearer token of the call, for clients that present the caller. */
function callerOf(mount: McpMountOptions, ctx: McpContext): McpClientCaller | undefined {
  if (mount.caller) return mount.caller(ctx);
  const id = ctx.auth?.id;
  const header = (ctx.request as { headers?: Record<string, unknown> } | undefined)?.headers?.authorization;
  const token = typeof header === 'string' && /^Bearer /i.test(header) ? header.slice(7) : undefined;
  return id && token ? { id, token } : undefined;
}

/** A failed forward is a tool error the model can read, naming the upstream; a JSON-RPC error keeps its message. */
function upstreamError(mount: McpMountOptions, name: string, error: unknown): Error {
  const detail =
    error instanceof McpClientError ? error.message : error instanceof Error ? error.message : String(error);
  return new ToolError(UPSTREAM_FAILED(mount.client, name, detail));
}

/** The upstream's prompt arguments as a pass-through Standard Schema with its JSON Schema. */
function promptArguments(prompt: PromptDescriptor): StandardSchemaV1 {
  const properties: Record<string, JsonObject> = {};
  const required: string[] = [];
  for (const argument of prompt.arguments ?? []) {
    properties[argument.name] = {
      type: 'string',
      ...(argument.description ? { description: argument.description } : {}),
    };
    if (argument.required) required.push(argument.name);
  }
  const jsonSchema = { type: 'object', properties, ...(required.length ? { required } : {}) };
  return {
    '~standard': {
      version: 1,
      vendor: 'nestjs-model-context-mount',
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => jsonSchema, output: () => jsonSchema },
    },
  } as StandardSchemaV1;
}
