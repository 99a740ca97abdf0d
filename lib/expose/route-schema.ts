import { ParseBoolPipe, ParseFloatPipe, ParseIntPipe, ParseUUIDPipe, type Type } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
// The enum's own file: Nest 11 has no '@nestjs/common/internal' entry.
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { DtoCompiler } from '../discovery/dto-compiler.js';
import type { ArgumentRouting } from './route-invoker.js';

const PRIMITIVES = new Set<unknown>([
  Object,
  String,
  Number,
  Boolean,
  Array,
  Function,
  Promise,
  Symbol,
  BigInt,
  undefined,
]);
const SOURCE_NAMES: Partial<Record<number, string>> = {
  [RouteParamtypes.BODY]: 'Body',
  [RouteParamtypes.QUERY]: 'Query',
  [RouteParamtypes.PARAM]: 'Param',
};

interface RouteArg {
  index: number;
  data?: unknown;
  pipes?: unknown[];
}

/** The merged input of one route: its schema, and where each argument goes at call time. */
export interface RouteInput {
  schema: JsonObject;
  routing: ArgumentRouting;
}

/**
 * Builds one flat input object from a route's `@Body()`, `@Query()` and `@Param()` parameters (and
 * the `:name` tokens of its path). Parameters the tool cannot fill are refused at bootstrap:
 * `@Res()` and `@Next()` hand the response to the method, and an MCP call has none.
 */
export function buildRouteInput(
  controller: Type<unknown>,
  methodName: string,
  path: string,
  dtos: DtoCompiler,
  site: string,
): RouteInput {
  const metadata = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, methodName) ?? {}) as Record<string, RouteArg>;
  const paramtypes = (Reflect.getMetadata('design:paramtypes', controller.prototype, methodName) ?? []) as unknown[];
  const properties: Record<string, JsonObject> = {};
  const required = new Set<string>();
  const defs: Record<string, JsonObject> = {};
  const origin = new Map<string, string>();
  const routing: ArgumentRouting = { query: [], params: [] };
  let dialect: unknown;

  const add = (
    key: string,
    schema: JsonObject,
    isRequired: boolean,
    source: string,
    target: 'body' | 'query' | 'params',
  ): void => {
    const previous = origin.get(key);
    if (previous !== undefined) {
      throw new Error(
        `McpModule: route ${site} cannot be a tool: the argument "${key}" comes from both ${previous} and ${source}, and a tool's input is one flat object. ` +
          `Rename one of them (for example the query parameter or the DTO property), or exclude this route from "expose.routes".`,
      );
    }
    origin.set(key, source);
    properties[key] = schema;
    if (isRequired) required.add(key);
    if (target === 'body') (routing.body ??= []).push(key);
    else routing[target].push(key);
  };

  const addDto = (dto: Type<unknown>, source: string, target: 'body' | 'query'): void => {
    const schema = dtos.schema(dto, `${site} ${source}`);
    dialect ??= schema.$schema;
    for (const [name, def] of Object.entries((schema.$defs ?? {}) as Record<string, JsonObject>)) {
      if (defs[name] !== undefined && JSON.stringify(defs[name]) !== JSON.stringify(def)) {
        throw new Error(
          `McpModule: route ${site} cannot be a tool: two different DTO classes named "${name}" are nested in its parameters. Rename one of them.`,
        );
      }
      defs[name] = def;
    }
    const req = new Set((schema.required ?? []) as string[]);
    if (target === 'body') routing.body ??= [];
    for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonObject>)) {
      add(key, property, req.has(key), source, target);
    }
  };

  const entries = Object.entries(metadata).sort((a, b) => a[1].index - b[1].index);
  for (const [key, arg] of entries) {
    if (key.includes('__customRouteArgs__')) continue;
    const type = Number(key.split(':')[0]);
    if (type === RouteParamtypes.RESPONSE || type === RouteParamtypes.NEXT) {
      const what = type === RouteParamtypes.RESPONSE ? '@Res()' : '@Next()';
      throw new Error(
        `McpModule: route ${site} cannot be a tool: it takes ${what} (parameter ${arg.index}) and writes the HTTP response itself, and an MCP call has no HTTP response. ` +
          `Return the value from the method instead (use @HttpCode()/@Header() for status and headers; @Res({ passthrough: true }) is refused too), or exclude this route from "expose.routes".`,
      );
    }
    const name = SOURCE_NAMES[type];
    if (!name) continue;
    const declared = paramtypes[arg.index];
    if (typeof arg.data === 'string') {
      const source = `@${name}('${arg.data}')`;
      add(
        arg.data,
        scalarSchema(declared, arg.pipes),
        type === RouteParamtypes.PARAM,
        source,
        type === RouteParamtypes.PARAM ? 'params' : type === RouteParamtypes.QUERY ? 'query' : 'body',
      );
      continue;
    }
    if (type === RouteParamtypes.PARAM) continue; // the whole params object: the path tokens below
    if (typeof declared !== 'function' || PRIMITIVES.has(declared)) {
      throw new Error(
        `McpModule: route ${site} cannot be a tool: its @${name}() parameter (parameter ${arg.index}) has no DTO class type, so its input schema cannot be built. ` +
          `Type it with a class carrying class-validator decorators, or exclude this route from "expose.routes".`,
      );
    }
    addDto(
      declared as Type<unknown>,
      `@${name}() ${(declared as Function).name}`,
      type === RouteParamtypes.BODY ? 'body' : 'query',
    );
  }
  for (const match of path.matchAll(/:([A-Za-z0-9_]+)(\?)?/g)) {
    const token = match[1]!;
    if (origin.get(token)?.startsWith('@Param(')) continue;
    add(token, { type: 'string' }, match[2] === undefined, `path parameter ":${token}"`, 'params');
  }
  const schema: JsonObject = { type: 'object', properties, additionalProperties: false };
  if (dialect !== undefined) schema.$schema = dialect as string;
  if (required.size) schema.required = [...required];
  if (Object.keys(defs).length) schema.$defs = defs;
  return { schema, routing };
}

function scalarSchema(declared: unknown, pipes: unknown[] | undefined): JsonObject {
  const has = (pipe: Function): boolean => (pipes ?? []).some((p) => p === pipe || p instanceof pipe);
  if (has(ParseIntPipe)) return { type: 'integer' };
  if (has(ParseFloatPipe)) return { type: 'number' };
  if (has(ParseBoolPipe)) return { type: 'boolean' };
  if (has(ParseUUIDPipe)) return { type: 'string', format: 'uuid' };
  if (declared === Number) return { type: 'number' };
  if (declared === Boolean) return { type: 'boolean' };
  return { type: 'string' };
}
