import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Observable } from 'rxjs';
import { ToolError } from '../protocol/errors.js';
import type { McpContext } from '../protocol/context.js';

/** Where each tool argument goes in the HTTP request the route receives. */
export interface ArgumentRouting {
  /** Arguments sent as the JSON body (undefined: the route reads no body). */
  body?: string[];
  /** Arguments sent in the query string. */
  query: string[];
  /** Arguments put in the path, in place of their `:name` token. */
  params: string[];
}

/** How one exposed route is reached through the app's HTTP server. */
export interface RouteTarget {
  verb: string;
  /** The path the route is served at (global prefix, RouterModule path, URI version), with `:name` tokens. */
  path: string;
  /** Headers that select this route's handler: the version header or `Accept` of the app's versioning. */
  headers: Record<string, string>;
}

/** What an injection takes and gives: light-my-request's options and response, which Fastify's `inject()` shares. */
export interface InjectOptions {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  payload?: string;
  remoteAddress: string;
  signal: AbortSignal;
}

export interface InjectResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  payload: string;
}

/** Sends one request through the application's HTTP handler, as a request from a socket would go. */
export type RouteInject = (options: InjectOptions, context: McpContext) => Promise<InjectResponse>;

interface HttpAdapterLike {
  getType(): string;
  getInstance(): unknown;
}

type LightMyRequest = (
  dispatch: (req: object, res: object) => void,
  options: InjectOptions & { validate: boolean },
) => Promise<InjectResponse>;

/**
 * The injector of the app's HTTP platform, or undefined where there is none (an application
 * context, as the catalog command boots): route tools then fail when called, not at bootstrap.
 * Express needs light-my-request (an optional peer), loaded here so a missing one fails the bootstrap.
 */
export async function routeInjectorFor(adapter: HttpAdapterLike | undefined): Promise<RouteInject | undefined> {
  if (!adapter) return undefined;
  const type = adapter.getType();
  if (type === 'fastify') {
    const instance = adapter.getInstance() as { inject(options: object): Promise<InjectResponse> };
    // Fastify's own inject() runs its hooks, middie (Nest middleware) and router; a request class
    // of our own carries the MCP context as `request.raw.mcp`.
    return (options, context) =>
      instance.inject({ ...options, validate: false, Request: requestClassCarrying(context) });
  }
  if (type === 'express') {
    const inject = await loadLightMyRequest();
    const app = adapter.getInstance() as (req: object, res: object) => void;
    return (options, context) =>
      inject(
        (req, res) => {
          // Express gives every request its own prototype (app.request); the injected request
          // and response keep their injection methods as own properties. Handing light-my-request
          // the app itself would instead rewrite Express's shared prototypes, and every real
          // request after that would fail (fastify/light-my-request#333, reverted).
          keepInjectionMethods(req);
          keepInjectionMethods(res);
          Object.defineProperty(req, 'mcp', { value: context, configurable: true, writable: true });
          app(req, res);
        },
        { ...options, validate: false },
      );
  }
  throw new Error(
    `McpModule: exposed routes run each call as a request through the app's HTTP adapter, and the "${type}" platform is not one it can inject into. Use @nestjs/platform-express or @nestjs/platform-fastify, or expose the capability with @Tool() instead.`,
  );
}

function keepInjectionMethods(target: object): void {
  const descriptors = Object.getOwnPropertyDescriptors(Object.getPrototypeOf(target) as object);
  for (const [key, descriptor] of Object.entries(descriptors)) {
    if (key !== 'constructor' && !Object.hasOwn(target, key)) Object.defineProperty(target, key, descriptor);
  }
}

function requestClassCarrying(context: McpContext): Function {
  class McpRouteRequest extends Readable {}
  Object.defineProperty(McpRouteRequest.prototype, 'mcp', { value: context });
  return McpRouteRequest;
}

async function loadLightMyRequest(): Promise<LightMyRequest> {
  const specifier = 'light-my-request';
  let loaded: { inject?: LightMyRequest; default?: LightMyRequest | { inject?: LightMyRequest } };
  try {
    loaded = (await import(specifier)) as typeof loaded;
  } catch (error) {
    const message = (error as Error).message;
    // light-my-request 6.8 depends on cookie 2, which is ES modules only: Jest's CommonJS loader
    // (and Node before 20.19) cannot load it.
    const esmOnly = /Unexpected token 'export'|ERR_REQUIRE_ESM|require\(\) of ES Module/.test(
      `${message} ${(error as { code?: string }).code ?? ''}`,
    );
    throw new Error(
      `McpModule: exposed routes on Express run each call as a real request through the app (its middleware, guards, interceptors, pipes and filters), which needs the "light-my-request" package, an optional peer that could not be loaded (${message}). ` +
        (esmOnly
          ? 'This copy loads an ES-module-only dependency (light-my-request 6.8 and later use cookie 2): under Jest or a CommonJS loader install "light-my-request@6.6".'
          : 'Install it with "npm install light-my-request@6.6", or remove the routes from "expose.routes" and @ExposeRoute().'),
    );
  }
  const inject = loaded.inject ?? (typeof loaded.default === 'function' ? loaded.default : loaded.default?.inject);
  if (typeof inject !== 'function')
    throw new Error(
      'McpModule: the "light-my-request" package loaded, but exports no inject() function. Install light-my-request 6.',
    );
  return inject;
}

/**
 * Headers of the MCP request that do not go on to the route: those of the MCP exchange itself,
 * framing and encoding (the injected request has its own), and those that let a request turn
 * itself into another method or URL (method-override middleware, URL rewrites), so that the tool
 * reaches its route and no other.
 */
const DROPPED_HEADERS = new Set([
  'accept',
  'accept-encoding',
  'connection',
  'content-encoding',
  'content-length',
  'content-type',
  'expect',
  'keep-alive',
  'last-event-id',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'x-http-method',
  'x-http-method-override',
  'x-method-override',
  'x-original-method',
  'x-original-url',
  'x-rewrite-url',
]);

/**
 * A route tool: each call is an HTTP request through the app's own adapter, carrying the MCP
 * caller's headers (`Authorization`, cookies) and address, so the route runs exactly what an HTTP
 * request from that caller runs: middleware, guards, interceptors, pipes, filters, and the app's
 * own authentication.
 */
export function createRouteInvoker(
  target: RouteTarget,
  routing: ArgumentRouting,
  injector: () => RouteInject,
): (args: Record<string, unknown>, context: McpContext) => Observable<unknown> {
  return (args, context) =>
    new Observable<unknown>((subscriber) => {
      const abort = new AbortController();
      let settled = false;
      const onAbort = (): void => abort.abort();
      context.signal.addEventListener('abort', onAbort, { once: true });
      const run = async (): Promise<void> => {
        try {
          const response = await injector()(requestOf(target, routing, args, context, abort.signal), context);
          settled = true;
          subscriber.next(outcomeOf(target, response));
          subscriber.complete();
        } catch (error) {
          settled = true;
          subscriber.error(abort.signal.aborted ? new ToolError('The call was cancelled.') : error);
        } finally {
          context.signal.removeEventListener('abort', onAbort);
        }
      };
      run().catch((error: unknown) => subscriber.error(error));
      // Unsubscribing before the answer (a cancelled call) ends the injected request, as a client
      // that disconnects ends its own; after the answer there is nothing left to end.
      return () => {
        if (!settled) abort.abort();
      };
    });
}

function requestOf(
  target: RouteTarget,
  routing: ArgumentRouting,
  args: Record<string, unknown>,
  context: McpContext,
  signal: AbortSignal,
): InjectOptions {
  const transport = context.request as
    { headers?: IncomingHttpHeaders; socket?: { remoteAddress?: string } } | undefined;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(transport?.headers ?? {})) {
    const key = name.toLowerCase();
    if (value === undefined || DROPPED_HEADERS.has(key) || key.startsWith('mcp-')) continue;
    headers[key] = value;
  }
  headers.accept = 'application/json';
  // Compression middleware must not encode what the tool reads back.
  headers['accept-encoding'] = 'identity';
  Object.assign(headers, target.headers);
  let payload: string | undefined;
  if (routing.body) {
    const body: Record<string, unknown> = {};
    for (const key of routing.body) if (args[key] !== undefined) body[key] = args[key];
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  const search = new URLSearchParams();
  for (const key of routing.query) {
    const value = args[key];
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value])
      search.append(key, typeof item === 'string' ? item : JSON.stringify(item));
  }
  const path = pathOf(target, routing, args);
  const query = search.toString();
  return {
    method: target.verb === 'ALL' ? 'GET' : target.verb,
    url: query ? `${path}?${query}` : path,
    headers,
    ...(payload !== undefined ? { payload } : {}),
    // The caller's socket address: `req.ip` then honours the app's 'trust proxy' with the
    // forwarded headers, as for the caller's own request. Transports without one are local.
    remoteAddress: transport?.socket?.remoteAddress ?? '127.0.0.1',
    signal,
  };
}

/**
 * The route's path with each `:token` replaced by its argument. A value that is empty, or a dot
 * segment (`.`, `..`, which URL parsing folds away), would make the request reach another route:
 * it is refused.
 */
function pathOf(target: RouteTarget, routing: ArgumentRouting, args: Record<string, unknown>): string {
  return target.path.replace(/\/:([A-Za-z0-9_]+)(\?)?/g, (_m, name: string, optional: string | undefined) => {
    const value = routing.params.includes(name) ? args[name] : undefined;
    if (value === undefined || value === null) {
      if (optional) return '';
      throw new ToolError(`The path parameter "${name}" of ${target.verb} ${target.path} is required.`);
    }
    const text = String(value);
    if (text === '' || text === '.' || text === '..') {
      throw new ToolError(
        `The path parameter "${name}" of ${target.verb} ${target.path} cannot be ${text === '' ? 'empty' : `"${text}"`}: give the value the route expects.`,
      );
    }
    return `/${encodeURIComponent(text)}`;
  });
}

function outcomeOf(target: RouteTarget, response: InjectResponse): unknown {
  const type = String(response.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const text = response.payload;
  const json = type === 'application/json' || type.endsWith('+json');
  let body: unknown = text === '' ? undefined : text;
  if (json && text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  const status = response.statusCode;
  if (status >= 400) throw new ToolError(errorMessageOf(body, status));
  if (status >= 300) {
    const location = response.headers.location;
    throw new ToolError(
      `Route ${target.verb} ${target.path} answered HTTP ${status}${location ? ` (a redirect to ${String(location)})` : ''}, which a tool does not follow.`,
    );
  }
  if (!json && type !== '' && !type.startsWith('text/') && body !== undefined) {
    throw new ToolError(
      `Route ${target.verb} ${target.path} returned ${type} content (a file or binary stream, such as a StreamableFile), which a tool cannot return. Expose a route that returns JSON, or register a resource for the file.`,
    );
  }
  return body;
}

const MAX_ERROR_MESSAGE = 2000;

function errorMessageOf(body: unknown, status: number): string {
  let message: string;
  if (typeof body === 'string' && body) message = body;
  else if (body && typeof body === 'object') {
    const field = (body as { message?: unknown }).message;
    message = Array.isArray(field)
      ? field.map(String).join('; ')
      : typeof field === 'string'
        ? field
        : JSON.stringify(body);
  } else message = `The route answered HTTP ${status}.`;
  return message.length > MAX_ERROR_MESSAGE ? `${message.slice(0, MAX_ERROR_MESSAGE)}…` : message;
}
