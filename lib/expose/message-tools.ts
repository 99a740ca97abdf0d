import type { Type } from '@nestjs/common';
import { ToolError } from '../protocol/errors.js';
import type { ArgumentsOutcome, ToolRuntime } from '../protocol/catalog.js';
import type { JsonObject, ToolDescriptor } from '../protocol/mcp-types.js';
import { union } from '../protocol/feature-host.js';
import type { McpCall } from '../protocol/mcp-call.js';
import type { McpHandlerFactory } from '../execution/mcp-handler.factory.js';
import type { DtoCompiler } from '../discovery/dto-compiler.js';
import type { ToolRuntimeFactory } from '../tools/tool-runtime.factory.js';
import { capabilityAccess, toolCall } from '../discovery/capability-calls.js';
import { toSnakeCase } from '../discovery/mcp-discovery.js';
import { isStandardSchema, standardJsonSchema } from '../schema/standard-schema.js';
import type { ExposedMessage, McpMessageCaller } from './expose.interfaces.js';

/** Nest's metadata key of `@UseGuards()`. */
const GUARDS_METADATA = '__guards__';

export type MessageBusKind = 'CommandBus' | 'QueryBus';

interface Bus {
  execute(message: unknown): Promise<unknown>;
}

/**
 * Builds the tool of one exposed `@nestjs/cqrs` command or query. The call runs through the Nest
 * pipeline as a runtime capability does (the app's global guards and interceptors, and the
 * entry's `decorators`), so the bus is reached only once the guards let the caller through;
 * fields of `fromCaller` are filled then, from the request the guards authenticated, and the
 * message is validated whole before it is built and sent.
 */
export function buildMessageTool(
  entry: ExposedMessage,
  kind: MessageBusKind,
  bus: Bus,
  deps: { handlers: McpHandlerFactory; factory: ToolRuntimeFactory; dtos: DtoCompiler; auth: boolean },
): { runtime: ToolRuntime; site: string; rename: string } {
  const message = entry.message;
  const site = `${kind} ${message.name}`;
  const list = kind === 'CommandBus' ? 'commands' : 'queries';
  const name = entry.name ?? toSnakeCase(message.name.replace(/(Command|Query)$/, ''));
  if (entry.argumentDescriptions) {
    throw new Error(
      `McpModule: ${site} sets "argumentDescriptions", which only route tools take. Describe the message's properties with @SchemaProperty({ description }) on ${message.name}.`,
    );
  }
  const source = entry.input ?? message;
  const schema = schemaOf(source, site, deps.dtos);
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  if (entry.input === undefined && Object.keys(properties).length === 0 && message.length > 0) {
    throw new Error(
      `McpModule: ${site} cannot be a tool: ${message.name} has no decorated properties to build an input schema from, and its constructor takes ${message.length} parameter(s), ` +
        `so every call would build it with those left undefined. Decorate its properties (class-validator or @SchemaProperty), or give the entry "input" (a DTO class, JSON Schema or Standard Schema such as zod) ` +
        `and "create: (input) => new ${message.name}(...)" in "expose.${list}".`,
    );
  }
  if (entry.input !== undefined && entry.create === undefined && message.length > 0) {
    throw new Error(
      `McpModule: ${site} gives "input" but no "create", and ${message.name}'s constructor takes ${message.length} parameter(s). Add "create: (input, caller) => new ${message.name}(...)" to its entry in "expose.${list}".`,
    );
  }
  const required = new Set((schema.required ?? []) as string[]);
  const fillers = Object.entries(entry.fromCaller ?? {}).filter(
    (pair): pair is [string, (caller: McpMessageCaller) => unknown] => pair[1] !== undefined,
  );
  for (const [field, fill] of fillers) {
    if (typeof fill !== 'function')
      throw new Error(
        `McpModule: ${site}: "fromCaller.${field}" must be a function of the caller, e.g. ({ request }) => request.user.id.`,
      );
    if (!properties[field]) {
      throw new Error(
        `McpModule: ${site}: "fromCaller" fills "${field}", which is not a property of ${entry.input ? 'its "input"' : message.name} (its properties: ${Object.keys(properties).join(', ') || 'none'}). Fix the name, or declare the property.`,
      );
    }
  }

  const pipeline = deps.handlers.createRuntime((call) => send(call), entry.decorators, site);
  const requiredScopes = union([entry.requiredScopes, pipeline.requiredScopes]);
  checkProtection(entry, site, list, pipeline.policyHost?.method, requiredScopes, deps.auth);
  const invoke = pipeline.policyHost
    ? deps.handlers.gated({ key: `tool:${name}`, label: `tool "${name}"`, ...pipeline.policyHost }, pipeline.invoke)
    : pipeline.invoke;
  const built = deps.factory.build(
    {
      name,
      ...(entry.title !== undefined ? { title: entry.title } : {}),
      description: entry.description ?? `Sends a ${message.name} through the ${kind}.`,
      ...(entry.annotations
        ? { annotations: entry.annotations }
        : kind === 'QueryBus'
          ? { annotations: { readOnlyHint: true } }
          : {}),
      input: source,
      ...(entry.output ? { output: entry.output } : {}),
      ...(entry.sets ? { sets: entry.sets } : {}),
      ...capabilityAccess(name, pipeline.authorize, requiredScopes ? [...requiredScopes] : undefined),
    },
    toolCall(name, invoke),
    site,
  );
  const validate = built.parseArguments;
  const filled = new Set(fillers.map(([field]) => field));
  const create =
    entry.create ??
    (entry.input !== undefined
      ? (input: unknown) => Object.assign(new (message as Type<object>)(), input)
      : (input: unknown) => input);

  async function send(call: McpCall): Promise<unknown> {
    const caller: McpMessageCaller = {
      principal: call.context.auth,
      request: call.context.request,
      context: call.context,
    };
    let input = call.arguments;
    if (fillers.length) {
      // The caller's fields, once the guards let it through; then the message is checked whole.
      const merged: JsonObject = { ...call.rawArguments };
      for (const [field, fill] of fillers) {
        const value = await fill(caller);
        if (value === undefined || value === null) {
          if (required.has(field))
            throw new ToolError(
              `Tool "${name}" takes "${field}" from the caller, and this call has none: call it as an authenticated user.`,
            );
          continue;
        }
        merged[field] = value as never;
      }
      const outcome = await validate(merged);
      if (!outcome.ok) throw new ToolError(outcome.message);
      input = outcome.value;
    }
    return bus.execute(await create(input, caller));
  }

  if (filled.size === 0) return { runtime: built, site, rename: renameHint(list, message) };
  const listed = withoutFields(schema, filled);
  const runtime: ToolRuntime = {
    ...built,
    descriptors: {
      legacy: withInput(built.descriptors.legacy, listed),
      modern: withInput(built.descriptors.modern, listed),
    },
    // What the model sends is checked whole in the pipeline, after the fields are filled.
    parseArguments: (args) => refuseFilled(args, filled, name),
  };
  return { runtime, site, rename: renameHint(list, message) };
}

/**
 * Refuses, at bootstrap, a message no guard protects that did not say it is public: a command
 * reached through MCP would otherwise skip the auth its HTTP route has. The app's global guards
 * do run, but a guard written for HTTP often steps aside for MCP calls, so they do not count.
 */
function checkProtection(
  entry: ExposedMessage,
  site: string,
  list: string,
  method: Function | undefined,
  scopes: readonly string[] | undefined,
  auth: boolean,
): void {
  const guarded =
    ((method && (Reflect.getMetadata(GUARDS_METADATA, method) as unknown[] | undefined)) ?? []).length > 0;
  if (scopes?.length && !auth) {
    throw new Error(
      `McpModule: ${site} requires the scope(s) ${scopes.join(', ')}, which only the module's "auth" option enforces, and it is not set: the tool would run for anyone. Configure "auth", or protect the message with a guard in "decorators".`,
    );
  }
  if (entry.public === true) {
    if (guarded || scopes?.length)
      throw new Error(
        `McpModule: ${site} is marked "public: true" and also has ${guarded ? 'guards' : 'required scopes'}. Remove one: "public" says nothing protects it.`,
      );
    return;
  }
  if (guarded || scopes?.length) return;
  throw new Error(
    `McpModule: ${site} would be sent by any MCP client: no guard protects it (the buses run no guards, and the HTTP route that sends it is not involved). ` +
      `Give its entry in "expose.${list}" "decorators: [UseGuards(YourAuthGuard)]" (the guard sees the MCP request, its headers and user), or "requiredScopes" with the module's "auth", ` +
      `or "public: true" if any caller may send it.`,
  );
}

function schemaOf(source: unknown, site: string, dtos: DtoCompiler): JsonObject {
  if (isStandardSchema(source)) return standardJsonSchema(source, site) as JsonObject;
  if (typeof source === 'function') return dtos.schema(source as Type<unknown>, site);
  return source as JsonObject;
}

function withoutFields(schema: JsonObject, fields: Set<string>): JsonObject {
  const properties = Object.fromEntries(
    Object.entries((schema.properties ?? {}) as JsonObject).filter(([key]) => !fields.has(key)),
  );
  const required = ((schema.required ?? []) as string[]).filter((key) => !fields.has(key));
  const { required: _dropped, ...rest } = schema;
  return { ...rest, properties, ...(required.length ? { required } : {}) } as JsonObject;
}

function withInput(descriptor: ToolDescriptor, inputSchema: JsonObject): ToolDescriptor {
  return Object.freeze({ ...descriptor, inputSchema });
}

function refuseFilled(args: JsonObject, filled: Set<string>, name: string): ArgumentsOutcome {
  const sent = Object.keys(args).filter((key) => filled.has(key));
  if (sent.length === 0) return { ok: true, value: args };
  return {
    ok: false,
    message: `Invalid arguments for tool "${name}": ${sent.map((k) => `"${k}"`).join(', ')} ${sent.length === 1 ? 'is' : 'are'} set by the server from the caller, not by the model; leave ${sent.length === 1 ? 'it' : 'them'} out.`,
  };
}

function renameHint(list: string, message: Function): string {
  return `give its entry in "expose.${list}" a name ({ message: ${message.name}, name: '...' })`;
}
