import type { Type } from '@nestjs/common';
import type { ArgumentsOutcome, HeaderParam, ToolRuntime } from '../protocol/catalog.js';
import type { JsonObject, ToolDescriptor } from '../protocol/mcp-types.js';
import { formatIssues, type CastResult } from '../schema/dto-caster.js';
import { isPromiseLike } from '../protocol/values.js';
import { sharedDtoCompiler, type DtoCompiler } from '../discovery/dto-compiler.js';
import { compileJsonSchema } from '../schema/json-schema.validator.js';
import type { McpToolBuilder, McpToolExtension, ToolDefinition, ToolInvoke } from '../discovery/tool-types.js';
import {
  isStandardSchema,
  standardJsonSchema,
  validateStandard,
  type StandardSchemaV1,
} from '../schema/standard-schema.js';
import * as messages from '../common/mcp.messages.js';
import { checkListCache } from '../discovery/list-cache.js';

export { DEFAULT_TOOL_NAME_PATTERN, type ToolDefinition, type ToolInvoke } from '../discovery/tool-types.js';

const EMPTY_INPUT_SCHEMA: JsonObject = Object.freeze({ type: 'object', additionalProperties: false }) as JsonObject;
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function isClass(value: unknown): value is Type<unknown> {
  return typeof value === 'function';
}

/**
 * Turns a tool definition into the runtime the dispatcher calls: schemas emitted and validators
 * compiled once here, so a call does no schema work. Decorated and dynamically added tools both
 * come through this one path.
 */
export class ToolRuntimeFactory implements McpToolBuilder {
  private readonly extensions: McpToolExtension[] = [];

  constructor(private readonly dtos: DtoCompiler = sharedDtoCompiler) {}

  build(definition: ToolDefinition, invoke: ToolInvoke, site: string): ToolRuntime {
    const { name } = definition;
    const input = this.input(definition.input, name, site);
    const output = this.output(definition.output, site);
    const base: ToolDescriptor = { name, inputSchema: input.schema };
    if (definition.title !== undefined) base.title = definition.title;
    if (definition.description !== undefined) base.description = definition.description;
    if (definition.annotations !== undefined) base.annotations = { ...definition.annotations };
    if (definition.icons !== undefined) base.icons = definition.icons.map((icon) => ({ ...icon }));
    if (definition._meta !== undefined) base._meta = { ...definition._meta };
    const modern: ToolDescriptor = output ? { ...base, outputSchema: output.schema } : base;
    const legacy: ToolDescriptor = output && output.schema.type === 'object' ? modern : base;
    const headerParams = collectHeaderParams(input.schema, site);
    const runtime: ToolRuntime = {
      name,
      descriptors: { legacy: Object.freeze(legacy), modern: Object.freeze(modern) },
      hasOutputSchema: output !== undefined,
      headerParams: headerParams.length ? headerParams : undefined,
      requiredScopes: definition.requiredScopes,
      authorize: definition.authorize,
      listCache: checkListCache(definition.listCache, site),
      parseArguments: input.parse,
      invoke,
      admit: invoke.admit,
      checkOutput: output?.check,
      ...(definition.sets?.length ? { sets: Object.freeze([...new Set(definition.sets)]) } : {}),
    };
    return this.extensions.reduce((built, extend) => extend(built, definition, site), runtime);
  }

  /** Adds what a pack makes of every tool from its definition (tasks: `task`), as tools are built. */
  extend(extension: McpToolExtension): void {
    this.extensions.push(extension);
  }

  private input(
    input: Type<unknown> | JsonObject | StandardSchemaV1 | undefined,
    name: string,
    site: string,
  ): { schema: JsonObject; parse: (args: JsonObject) => ArgumentsOutcome | Promise<ArgumentsOutcome> } {
    if (input === undefined) {
      return {
        schema: EMPTY_INPUT_SCHEMA,
        parse: (args) =>
          Object.keys(args).length === 0
            ? { ok: true, value: args }
            : {
                ok: false,
                message: `Invalid arguments for tool "${name}": it takes no arguments, but got ${Object.keys(args)
                  .slice(0, 5)
                  .map((k) => `"${k}"`)
                  .join(', ')}.`,
              },
      };
    }
    // Before the class check: some Standard Schema libraries (arktype) make schemas callable.
    if (isStandardSchema(input)) {
      const schema = standardJsonSchema(input, site);
      if (schema.type !== 'object') {
        throw new Error(
          `${site}: a tool's input must be an object schema, but the ${input['~standard'].vendor} schema emits ${JSON.stringify(schema.type ?? 'no type')}. Wrap the fields in an object schema (z.object({...}), v.object({...})).`,
        );
      }
      return {
        schema,
        parse: async (args) => {
          const outcome = await validateStandard(input, args);
          return outcome.ok
            ? { ok: true, value: outcome.value }
            : { ok: false, message: formatIssues(outcome.issues, `tool "${name}"`) };
        },
      };
    }
    if (isClass(input)) {
      const { schema, cast } = this.dtos.compile(input, site);
      const outcomeOf = (outcome: CastResult<object>): ArgumentsOutcome =>
        outcome.ok
          ? { ok: true, value: outcome.value }
          : { ok: false, message: formatIssues(outcome.issues, `tool "${name}"`) };
      return {
        schema,
        // Most calls' arguments are decided without a promise (see DtoCaster.caster).
        parse: (args) => {
          const outcome = cast(args);
          return isPromiseLike(outcome) ? outcome.then(outcomeOf) : outcomeOf(outcome);
        },
      };
    }
    const validate = compileJsonSchema(input as JsonObject);
    return {
      schema: input as JsonObject,
      parse: (args) => {
        const issues = validate(args);
        return issues === null
          ? { ok: true, value: args }
          : { ok: false, message: formatIssues(issues, `tool "${name}"`) };
      },
    };
  }

  private output(
    output: Type<unknown> | JsonObject | StandardSchemaV1 | undefined,
    site: string,
  ): { schema: JsonObject; check: (value: unknown) => string | null } | undefined {
    if (output === undefined) return undefined;
    // A Standard Schema's output is checked through its JSON Schema: the check must be synchronous.
    const schema = isStandardSchema(output)
      ? standardJsonSchema(output, `${site} output`, output['~standard'].jsonSchema?.output ? 'output' : 'input')
      : isClass(output)
        ? this.dtos.outputSchema(output, `${site} output`)
        : output;
    const validate = compileJsonSchema(schema);
    return {
      schema,
      check: (value) => {
        const issues = validate(value);
        return issues === null
          ? null
          : issues.map((i: { path: string; message: string }) => `${i.path || '(root)'}: ${i.message}`).join('; ');
      },
    };
  }
}

/** Finds `x-mcp-header` marks on properties reachable through `properties` alone. */
function collectHeaderParams(schema: JsonObject, site: string): HeaderParam[] {
  const found: HeaderParam[] = [];
  const seen = new Set<string>();
  const walk = (node: JsonObject, path: string[]): void => {
    const properties = node.properties;
    if (typeof properties !== 'object' || properties === null) return;
    for (const [key, value] of Object.entries(properties as Record<string, unknown>)) {
      if (typeof value !== 'object' || value === null) continue;
      const property = value as JsonObject;
      const mark = property['x-mcp-header'];
      if (mark !== undefined) {
        const where = [...path, key].join('.');
        if (typeof mark !== 'string' || !HEADER_TOKEN.test(mark)) {
          throw new Error(messages.INVALID_X_MCP_HEADER(site, `"${where}" needs a non-empty token name`));
        }
        const types = (Array.isArray(property.type) ? property.type : [property.type]).filter((t) => t !== 'null');
        const type = types.length === 1 ? types[0] : undefined;
        if (type !== 'string' && type !== 'integer' && type !== 'boolean') {
          throw new Error(
            messages.INVALID_X_MCP_HEADER(site, `"${where}" is not a string, integer or boolean property`),
          );
        }
        if (seen.has(mark.toLowerCase())) {
          throw new Error(messages.INVALID_X_MCP_HEADER(site, `header name "${mark}" is used twice`));
        }
        seen.add(mark.toLowerCase());
        found.push({ path: [...path, key], header: mark, type });
      }
      walk(property, [...path, key]);
    }
  };
  walk(schema, []);
  // A mark that "properties" alone does not reach (array items, $defs, combinators) would be
  // dropped by clients and never checked here: refuse it rather than ignore it.
  if (countHeaderMarks(schema) > found.length) {
    throw new Error(
      messages.INVALID_X_MCP_HEADER(
        site,
        'an x-mcp-header sits inside array items, $defs or a combinator, which "properties" alone does not reach',
      ),
    );
  }
  return found;
}

function countHeaderMarks(node: unknown): number {
  if (Array.isArray(node)) return node.reduce((sum: number, item) => sum + countHeaderMarks(item), 0);
  if (typeof node !== 'object' || node === null) return 0;
  let count = 0;
  for (const [key, value] of Object.entries(node)) count += key === 'x-mcp-header' ? 1 : countHeaderMarks(value);
  return count;
}
