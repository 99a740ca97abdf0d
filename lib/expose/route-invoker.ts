import { HttpException } from '@nestjs/common';
import type { NestContainer } from '@nestjs/core';
import { GuardsConsumer, GuardsContextCreator } from '@nestjs/core/guards/index.js';
import { InterceptorsConsumer, InterceptorsContextCreator } from '@nestjs/core/interceptors/index.js';
import { PipesConsumer, PipesContextCreator } from '@nestjs/core/pipes/index.js';
import { RouteParamsFactory } from '@nestjs/core/router/route-params-factory.js';
import { RouterExceptionFilters } from '@nestjs/core/router/router-exception-filters.js';
import { RouterExecutionContext } from '@nestjs/core/router/router-execution-context.js';
import { RouterProxy } from '@nestjs/core/router/router-proxy.js';
import { Observable } from 'rxjs';
import { ToolError } from '../protocol/errors.js';
import type { McpContext } from '../protocol/context.js';

/** Where each tool argument goes in the HTTP-shaped request the route receives. */
export interface ArgumentRouting {
  /** Arguments copied into `request.body` (undefined: the route reads no body). */
  body?: string[];
  /** Arguments copied into `request.query`. */
  query: string[];
  /** Arguments copied into `request.params`, as strings (as an HTTP path gives them). */
  params: string[];
}

/**
 * The response a route tool writes to in place of a socket: Nest's router (and the default
 * exception filter) reply through the application reference below, and filters written for
 * Express may call `status().json()` on it directly.
 */
export class McpRouteResponse {
  statusCode = 200;
  readonly headers: Record<string, unknown> = {};
  readonly locals: Record<string, unknown> = {};
  body: unknown;
  headersSent = false;
  private resolveDone!: () => void;
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  status(code: number): this {
    this.statusCode = code;
    return this;
  }
  setHeader(name: string, value: unknown): this {
    this.headers[name.toLowerCase()] = value;
    return this;
  }
  header(name: string, value: unknown): this {
    return this.setHeader(name, value);
  }
  set(name: string, value: unknown): this {
    return this.setHeader(name, value);
  }
  getHeader(name: string): unknown {
    return this.headers[name.toLowerCase()];
  }
  type(value: string): this {
    return this.setHeader('content-type', value);
  }
  json(body: unknown): this {
    return this.finish(body);
  }
  send(body?: unknown): this {
    return this.finish(body);
  }
  end(body?: unknown): this {
    return this.finish(body);
  }
  finish(body: unknown): this {
    if (this.headersSent) return this;
    this.body = body;
    this.headersSent = true;
    this.resolveDone();
    return this;
  }
}

/** The subset of Nest's HttpServer that the router, its response controller and the base exception filter call. */
const capturingAdapter = {
  reply(response: McpRouteResponse, body: unknown, statusCode?: number) {
    if (statusCode !== undefined) response.status(statusCode);
    response.finish(body);
  },
  status(response: McpRouteResponse, statusCode: number) {
    response.status(statusCode);
  },
  setHeader(response: McpRouteResponse, name: string, value: string) {
    response.setHeader(name, value);
  },
  appendHeader(response: McpRouteResponse, name: string, value: string) {
    response.setHeader(name, value);
  },
  getHeader(response: McpRouteResponse, name: string) {
    return response.getHeader(name);
  },
  redirect(response: McpRouteResponse, statusCode: number, url: string) {
    response.status(statusCode).finish({ redirect: url });
  },
  render(response: McpRouteResponse, view: string, options: unknown) {
    response.finish({ view, options });
  },
  isHeadersSent(response: McpRouteResponse) {
    return response.headersSent;
  },
  end(response: McpRouteResponse, message?: string) {
    response.finish(message);
  },
  getRequestMethod(request: { method?: string }) {
    return request.method;
  },
  getRequestUrl(request: { url?: string }) {
    return request.url;
  },
  getRequestHostname(request: { hostname?: string }) {
    return request.hostname;
  },
};

export interface RouteTarget {
  instance: object;
  methodName: string;
  moduleKey: string;
  /** Nest's RequestMethod value of the route. */
  requestMethod: number;
  verb: string;
  /** The route's full path (global prefix included), with `:name` tokens. */
  path: string;
}

/**
 * Runs a controller route for a tool call with Nest's own router machinery (RouterExecutionContext
 * for guards, pipes, interceptors and the response; RouterExceptionFilters for filters), so the
 * route behaves as it does for an HTTP request: the global ValidationPipe applies per parameter,
 * `@HttpCode` sets the status, a ClassSerializerInterceptor serializes the returned DTO.
 */
export class RouteInvokerFactory {
  private readonly executionContext: RouterExecutionContext;
  private readonly exceptionFilters: RouterExceptionFilters;
  private readonly proxy = new RouterProxy();

  constructor(container: NestContainer) {
    const config = container.applicationConfig;
    // The capturing adapter stands where the HTTP adapter stands for a real request.
    const adapter = capturingAdapter as never;
    this.executionContext = new RouterExecutionContext(
      new RouteParamsFactory(config),
      new PipesContextCreator(container, config),
      new PipesConsumer(),
      new GuardsContextCreator(container, config),
      new GuardsConsumer(),
      new InterceptorsContextCreator(container, config),
      new InterceptorsConsumer(),
      adapter,
    );
    this.exceptionFilters = new RouterExceptionFilters(container, config!, adapter);
  }

  create(target: RouteTarget, routing: ArgumentRouting): (args: Record<string, unknown>, context: McpContext) => Observable<unknown> {
    const { instance, methodName, moduleKey } = target;
    const callback = (instance as Record<string, (...args: unknown[]) => unknown>)[methodName];
    const handler = this.executionContext.create(instance as never, callback, methodName, moduleKey, target.requestMethod as never) as never;
    const filters = this.exceptionFilters.create(instance as never, callback as never, moduleKey);
    const run = this.proxy.createProxy(handler, filters);
    return (args, context) =>
      new Observable<unknown>((subscriber) => {
        const request = buildRequest(target, routing, args, context);
        const response = new McpRouteResponse();
        const onAbort = (): void => subscriber.error(new ToolError('The call was cancelled.'));
        context.signal.addEventListener('abort', onAbort, { once: true });
        run(request, response, () => undefined)
          // A filter may answer asynchronously; the response is the outcome, as over HTTP.
          .then(() => response.done)
          .then(
            () => {
              try {
                subscriber.next(toolResultOf(target, response));
                subscriber.complete();
              } catch (error) {
                subscriber.error(error);
              }
            },
            (error: unknown) => subscriber.error(error instanceof HttpException ? new ToolError(error.message) : error),
          )
          .finally(() => context.signal.removeEventListener('abort', onAbort));
      });
  }
}

function buildRequest(target: RouteTarget, routing: ArgumentRouting, args: Record<string, unknown>, context: McpContext): object {
  const transport = context.request as Record<string, unknown> | undefined;
  // Inheriting from the MCP request keeps its headers, ip and helpers (`get()`, `header()`)
  // visible to guards written for HTTP; the route's own fields are set over them.
  const request = Object.create(transport && typeof transport === 'object' ? transport : { headers: {} }) as Record<string, unknown>;
  const params: Record<string, string> = {};
  for (const key of routing.params) if (args[key] !== undefined) params[key] = String(args[key]);
  const query: Record<string, unknown> = {};
  for (const key of routing.query) if (args[key] !== undefined) query[key] = args[key];
  let body: Record<string, unknown> | undefined;
  if (routing.body) {
    body = {};
    for (const key of routing.body) if (args[key] !== undefined) body[key] = args[key];
  }
  const path = target.path.replace(/:([A-Za-z0-9_]+)\??/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
  const url = search ? `${path}?${search}` : path;
  const own: Record<string, unknown> = { method: target.verb, url, originalUrl: url, path, params, query, body: body ?? {}, mcp: context };
  if (transport?.user === undefined && context.auth !== undefined) own.user = context.auth;
  for (const [key, value] of Object.entries(own)) {
    Object.defineProperty(request, key, { value, writable: true, enumerable: true, configurable: true });
  }
  return request;
}

function toolResultOf(target: RouteTarget, response: McpRouteResponse): unknown {
  const body = response.body;
  if (response.statusCode >= 400) throw new ToolError(errorMessageOf(body, response.statusCode));
  if (isStreamableFile(body)) {
    throw new ToolError(
      `Route ${target.verb} ${target.path} returned a file stream (StreamableFile), which a tool cannot return. Expose a route that returns JSON, or register a resource for the file.`,
    );
  }
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  return body;
}

function errorMessageOf(body: unknown, status: number): string {
  if (typeof body === 'string' && body) return body;
  if (body && typeof body === 'object') {
    const message = (body as { message?: unknown }).message;
    if (Array.isArray(message)) return message.map(String).join('; ');
    if (typeof message === 'string') return message;
    return JSON.stringify(body);
  }
  return `The route answered HTTP ${status}.`;
}

function isStreamableFile(value: unknown): boolean {
  return !!value && typeof value === 'object' && typeof (value as { getStream?: unknown }).getStream === 'function' && (value as object).constructor?.name === 'StreamableFile';
}

