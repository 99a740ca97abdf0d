import { CUSTOM_ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import type { ExternalContextCreator } from '@nestjs/core';
import { isObservable } from 'rxjs';
import { MCP_PARAM_ARGS_METADATA } from '../common/mcp.constants.js';
import { lastValueOf } from '../protocol/last-value.js';
import type { McpCall } from '../protocol/mcp-call.js';
import { paramsFactory } from './mcp-pipeline-parts.js';

/** The app-wide enhancers Nest's application config holds, static and request-scoped. */
interface GlobalEnhancers {
  getGlobalGuards(): unknown[];
  getGlobalInterceptors(): unknown[];
  getGlobalPipes(): unknown[];
  getGlobalFilters(): unknown[];
  getGlobalRequestGuards?(): unknown[];
  getGlobalRequestInterceptors?(): unknown[];
  getGlobalRequestPipes?(): unknown[];
  getGlobalRequestFilters?(): { metatype?: unknown }[];
}

/**
 * The application's config, where `useGlobalGuards()` and `APP_GUARD` providers land (and their
 * interceptor, pipe and filter kin). Read through the ExternalContextCreator, which holds the
 * container; undefined where it does not (then every enhancer is assumed present).
 *
 * @internal
 */
export function globalEnhancersOf(externalContextCreator: ExternalContextCreator): GlobalEnhancers | undefined {
  return (externalContextCreator as unknown as { container?: { applicationConfig?: GlobalEnhancers } }).container
    ?.applicationConfig;
}

/** How Nest would call a handler: `(request, response, call)`, to the method's result (an Observable's last value). */
export type PipelineTarget = (request: unknown, response: unknown, call: McpCall) => Promise<unknown>;

const ENHANCER_KEYS = ['__guards__', '__interceptors__', '__pipes__'];

/**
 * The pipeline of a handler that no guard, interceptor or pipe applies to (not its own, not its
 * class's, not the app's) and whose parameters are the module's own decorators: all Nest would do
 * is fill the parameters and call it, through about ten promises. This does that directly;
 * undefined when anything else applies, and Nest's ExternalContextCreator then runs it. Read when
 * the handler is wrapped, as Nest reads them when it wraps a route: enhancers added to the app
 * after it started apply to neither.
 *
 * @internal
 */
export function emptyPipeline(
  externalContextCreator: ExternalContextCreator,
  instance: object,
  owner: Function,
  original: Function,
  methodName: string,
  callback: (...params: unknown[]) => unknown,
): PipelineTarget | undefined {
  const config = globalEnhancersOf(externalContextCreator);
  if (
    !config ||
    config.getGlobalGuards().length +
      config.getGlobalInterceptors().length +
      config.getGlobalPipes().length +
      (config.getGlobalRequestGuards?.().length ?? 0) +
      (config.getGlobalRequestInterceptors?.().length ?? 0) +
      (config.getGlobalRequestPipes?.().length ?? 0) >
      0
  )
    return undefined;
  for (const key of ENHANCER_KEYS) {
    if (Reflect.getMetadata(key, original)?.length || Reflect.getMetadata(key, owner)?.length) return undefined;
  }
  const metadata = (Reflect.getMetadata(MCP_PARAM_ARGS_METADATA, owner, methodName) ?? {}) as Record<
    string,
    { index: number; data?: unknown; pipes?: unknown[] }
  >;
  const params: { index: number; type: number; data: unknown }[] = [];
  let length = 0;
  for (const [key, { index, data, pipes }] of Object.entries(metadata)) {
    // A createParamDecorator() parameter needs Nest's ExecutionContext; a parameter pipe, Nest's pipes.
    if (key.includes(CUSTOM_ROUTE_ARGS_METADATA) || pipes?.length) return undefined;
    params.push({ index, type: Number(key.split(':')[0]), data });
    length = Math.max(length, index + 1);
  }
  return (...args) => {
    try {
      const values: unknown[] = new Array(length).fill(undefined);
      for (const { index, type, data } of params) values[index] = paramsFactory.exchangeKeyForValue(type, data, args);
      const result = callback.apply(instance, values);
      return isObservable(result) ? lastValueOf(result) : Promise.resolve(result);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}
