import { sharedDtoCompiler, type DtoCompiler } from './dto-compiler.js';
import type { Type } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type {
  ArgumentsOutcome,
  CompletableArgument,
  ListCacheHint,
  McpAccess,
  PromptRuntime,
} from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import type { JsonObject, McpIcon } from '../protocol/mcp-types.js';
import type { PromptArgument, PromptDescriptor } from '../protocol/prompt-messages.js';
import { buildCoercion, formatIssues } from '../schema/dto-caster.js';
import {
  isStandardSchema,
  standardJsonSchema,
  validateStandard,
  type StandardSchemaV1,
} from '../schema/standard-schema.js';
import * as messages from '../common/mcp.messages.js';
import { checkListCache } from './list-cache.js';

/**
 * Options of `@Prompt()`, and of `McpRegistry.addPrompt()`: they live beside the factory both
 * build through, below the prompts pack.
 *
 * @publicApi
 */
export interface PromptOptions {
  /** The prompt's name. @default the method name in snake_case */
  name?: string;
  /** A human-friendly display name. */
  title?: string;
  /** What the prompt is for: clients show it when users pick a prompt. */
  description: string;
  /**
   * A DTO class for the arguments. Each property becomes an advertised argument (its
   * `@SchemaProperty({ description })` is the argument's description, `@IsOptional()` makes it
   * optional); the string values clients send are cast and validated before the method runs.
   * Properties must be strings, numbers, integers, booleans or enums.
   * A Standard Schema object (zod 4, valibot) works too, with the same flat-properties rule.
   * @default the type of the `@Args()` parameter; without one, the prompt takes no arguments
   */
  args?: Type<unknown> | StandardSchemaV1;
  icons?: McpIcon[];
  _meta?: JsonObject;
  /**
   * How long this item's entry in its list stays fresh (2026-07-28): the list page holding it gets
   * the shortest `ttlMs` and turns `private` when this says so. A function `(ctx) => hint` is
   * computed per list request. @default the module's `cache.lists`
   */
  listCache?: ListCacheHint;
}

/** Prompt options after the name is settled and the arguments DTO is known. */
export interface PromptDefinition extends Omit<PromptOptions, 'name' | 'args'>, McpAccess {
  name: string;
  args?: Type<unknown> | StandardSchemaV1;
}

export type PromptInvoke = (args: unknown, rawArgs: JsonObject, ctx: McpContext) => Observable<unknown>;

/**
 * Prompt names: the spec's tool-name guidance (letters, digits, `_`, `-`, `.`; 1 to 128), which
 * keeps names safe as slash commands in clients.
 */
export const PROMPT_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** One DTO property as an argument: what prompts/list and completion need to know. */
export interface DtoArgument {
  name: string;
  title?: string;
  description?: string;
  required: boolean;
  /** JSON types the property accepts (`null` included when optional). */
  types: ReadonlySet<string>;
  /** The enum's values as strings (null left out). */
  enumValues?: string[];
  /** The property's schema is not a flat type (a nested object, `$ref`, composition). */
  complex: boolean;
}

const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/** The properties of a DTO's generated schema, in declaration order. */
export function dtoArguments(schema: JsonObject): DtoArgument[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).map(([name, property]) => {
    const types = new Set<string>();
    if (typeof property.type === 'string') types.add(property.type);
    else if (Array.isArray(property.type)) for (const t of property.type) types.add(String(t));
    const enumValues = Array.isArray(property.enum)
      ? property.enum.filter((v) => v !== null).map((v) => String(v))
      : property.const !== undefined && property.const !== null
        ? [String(property.const)]
        : undefined;
    if (types.size === 0 && Array.isArray(property.enum)) {
      for (const v of property.enum) types.add(v === null ? 'null' : typeof v);
    }
    const argument: DtoArgument = {
      name,
      required: required.has(name),
      types,
      enumValues,
      complex:
        types.size === 0 || '$ref' in property || 'anyOf' in property || 'oneOf' in property || 'allOf' in property,
    };
    if (typeof property.title === 'string') argument.title = property.title;
    if (typeof property.description === 'string') argument.description = property.description;
    return argument;
  });
}

/**
 * Turns a prompt definition into the runtime the dispatcher calls: the argument list and the
 * caster are built once here. Decorated and dynamically added prompts both come through it.
 */
export class PromptRuntimeFactory {
  constructor(private readonly dtos: DtoCompiler = sharedDtoCompiler) {}

  build(definition: PromptDefinition, invoke: PromptInvoke, site: string): PromptRuntime {
    const { name } = definition;
    if (typeof name !== 'string' || !PROMPT_NAME_PATTERN.test(name)) {
      throw new Error(messages.INVALID_PROMPT_NAME(String(name), site, PROMPT_NAME_PATTERN));
    }
    if (typeof definition.description !== 'string' || definition.description.trim() === '') {
      throw new Error(messages.PROMPT_NEEDS_DESCRIPTION(name, site));
    }
    const args = definition.args;
    const input =
      args === undefined
        ? this.noArguments(name)
        : isStandardSchema(args)
          ? this.standardArguments(args, name, site)
          : this.dtoArguments(args, name, site);
    const descriptor: PromptDescriptor = { name };
    if (definition.title !== undefined) descriptor.title = definition.title;
    descriptor.description = definition.description;
    if (input.advertised.length > 0) descriptor.arguments = input.advertised;
    if (definition.icons !== undefined) descriptor.icons = definition.icons.map((icon) => ({ ...icon }));
    if (definition._meta !== undefined) descriptor._meta = { ...definition._meta };
    return {
      name,
      descriptor: Object.freeze(descriptor),
      arguments: input.completable,
      parseArguments: input.parse,
      requiredScopes: definition.requiredScopes,
      authorize: definition.authorize,
      listCache: checkListCache(definition.listCache, site),
      get: invoke,
    };
  }

  private noArguments(name: string): ArgumentParser {
    return {
      advertised: [],
      completable: [],
      parse: (args) => {
        const keys = Object.keys(args);
        return keys.length === 0
          ? { ok: true, value: {} }
          : {
              ok: false,
              message: `Invalid arguments for prompt "${name}": it takes no arguments, but got ${keys
                .slice(0, 5)
                .map((k) => JSON.stringify(k))
                .join(', ')}.`,
            };
      },
    };
  }

  private dtoArguments(dto: Type<unknown>, name: string, site: string): ArgumentParser {
    const { schema, cast } = this.dtos.compile(dto, site, { coerceStrings: true });
    return this.flatArguments(schema, dto.name, name, site, async (raw) => {
      const outcome = await cast(raw);
      return outcome.ok
        ? { ok: true, value: outcome.value }
        : { ok: false, message: formatIssues(outcome.issues, `prompt "${name}"`) };
    });
  }

  /** Arguments from a Standard Schema: listed from its JSON Schema, strings coerced as for DTOs. */
  private standardArguments(standard: StandardSchemaV1, name: string, site: string): ArgumentParser {
    const schema = standardJsonSchema(standard, site);
    const coerce = buildCoercion(schema);
    return this.flatArguments(schema, `${standard['~standard'].vendor} schema`, name, site, async (raw) => {
      const outcome = await validateStandard(standard, coerce ? coerce(raw) : raw);
      return outcome.ok
        ? { ok: true, value: outcome.value }
        : { ok: false, message: formatIssues(outcome.issues, `prompt "${name}"`) };
    });
  }

  private flatArguments(
    schema: JsonObject,
    owner: string,
    name: string,
    site: string,
    validate: (raw: JsonObject) => Promise<ArgumentsOutcome>,
  ): ArgumentParser {
    const args = dtoArguments(schema);
    for (const arg of args) {
      if (arg.complex || [...arg.types].some((t) => !SCALARS.has(t))) {
        throw new Error(messages.PROMPT_ARGUMENT_NOT_FLAT(site, `${owner}.${arg.name}`));
      }
    }
    const required = args.filter((a) => a.required).map((a) => a.name);
    return {
      advertised: args.map((arg) => {
        const out: PromptArgument = { name: arg.name };
        if (arg.title !== undefined) out.title = arg.title;
        if (arg.description !== undefined) out.description = arg.description;
        out.required = arg.required;
        return out;
      }),
      completable: args.map((arg) =>
        arg.enumValues ? { name: arg.name, enumValues: arg.enumValues } : { name: arg.name },
      ),
      parse: async (raw) => {
        const missing = required.filter((key) => raw[key] === undefined || raw[key] === null);
        if (missing.length > 0) {
          return {
            ok: false,
            message: `Missing required argument${missing.length === 1 ? '' : 's'} ${missing.map((m) => `"${m}"`).join(', ')} for prompt "${name}". Call prompts/list to see its arguments.`,
          };
        }
        return validate(raw);
      },
    };
  }
}

interface ArgumentParser {
  advertised: PromptArgument[];
  completable: CompletableArgument[];
  parse(args: JsonObject): ArgumentsOutcome | Promise<ArgumentsOutcome>;
}
