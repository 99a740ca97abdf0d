import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { ErrorCode, failure } from '../protocol/json-rpc.js';
import { BodyRefusals } from './body-refusals.js';

/**
 * Everything Fastify-specific in McpModule. `fastify` is not imported (it is an optional peer,
 * brought by `@nestjs/platform-fastify`): these are the few members of its request, reply and
 * instance that the MCP endpoint uses, as Fastify 5 has them (under @nestjs/platform-fastify 11 and 12).
 */
export interface FastifyRequestLike {
  raw: IncomingMessage;
  body?: unknown;
  /** The client address, through proxies as Fastify's `trustProxy` option allows. */
  ip?: string;
  headers: IncomingMessage['headers'];
}

export interface FastifyReplyLike {
  raw: ServerResponse;
  hijack(): unknown;
  getHeaders(): Record<string, number | string | string[] | undefined>;
  callNotFound(): void;
}

interface FastifyRouteOptionsLike {
  url: string;
  method: string | string[];
  errorHandler?: (error: FastifyErrorLike, request: FastifyRequestLike, reply: FastifyReplyLike) => unknown;
  preParsing?: PreParsingHook | PreParsingHook[];
}

type PreParsingHook = (
  request: FastifyRequestLike,
  reply: FastifyReplyLike,
  payload: Readable,
  done: (err: Error | null, payload?: Readable) => void,
) => void;

export interface FastifyInstanceLike {
  addHook(name: 'onRoute', hook: (route: FastifyRouteOptionsLike) => void): unknown;
  initialConfig?: { bodyLimit?: number };
}

interface FastifyErrorLike extends Error {
  code?: string;
  statusCode?: number;
  /** Set by the decoding stream below when a body does not decode with its Content-Encoding. */
  mcpEncoding?: string;
}

/** The HTTP platforms McpModule serves Streamable HTTP on, as `HttpAdapter.getType()` names them. */
export const SUPPORTED_HTTP_PLATFORMS = ['express', 'fastify'] as const;

/**
 * Refuses to start on an HTTP platform whose request and response McpModule cannot drive: every
 * MCP request would otherwise fail at run time, far from the cause.
 */
export function assertSupportedPlatform(type: string | undefined): void {
  if (type === undefined || (SUPPORTED_HTTP_PLATFORMS as readonly string[]).includes(type)) return;
  throw new Error(
    `McpModule cannot serve MCP on the "${type}" HTTP platform: it supports ${SUPPORTED_HTTP_PLATFORMS.map((p) => `"${p}" (@nestjs/platform-${p})`).join(' and ')}. Create the Nest app with one of those adapters, or serve MCP over stdio (McpStdio) instead.`,
  );
}

/** A Fastify reply, as a `@Res()` parameter or an exception filter's response is on that platform. */
export function isFastifyReply(res: unknown): res is FastifyReplyLike {
  return (
    typeof res === 'object' && res !== null && 'raw' in res && typeof (res as FastifyReplyLike).hijack === 'function'
  );
}

/**
 * The Node request and response under an Express or Fastify pair, and the request the app's own
 * code sees (`request`: Express's `req`, or Fastify's request). That one is where the app's guards
 * wrote `user` (passport, a custom guard), so authentication reads it, and tool guards, `REQUEST`
 * and `ctx.request` get it, as HTTP routes of the same app do. On Fastify the reply is hijacked,
 * so Fastify sends nothing itself and SSE streams stay open, and the headers set on the reply so
 * far (by `@fastify/cors`, `helmet`, a hook) are carried to the raw response. The body Fastify
 * parsed is handed on as `req.body`, which the HTTP handler reads when present, and the client
 * address as `req.ip`, as Express has it (`limits.sessionsPerAddress` counts by it).
 */
export function nodeHttpOf(req: unknown, res: unknown): { req: IncomingMessage; res: ServerResponse; request: object } {
  if (!isFastifyReply(res)) return { req: req as IncomingMessage, res: res as ServerResponse, request: req as object };
  const request = req as FastifyRequestLike;
  const raw = request.raw as IncomingMessage & { body?: unknown; ip?: string };
  // The handler reads a string body as unparsed text; a JSON string Fastify already parsed
  // (`"just a string"`) goes back to its JSON text, so it is refused as a non-object message.
  if (request.body !== undefined)
    raw.body =
      typeof request.body === 'string' && isJsonType(request.headers['content-type'])
        ? JSON.stringify(request.body)
        : request.body;
  if (request.ip !== undefined) raw.ip = request.ip;
  return { req: raw, res: hijack(res), request };
}

function isJsonType(value: string | undefined): boolean {
  return value !== undefined && value.split(';')[0].trim().toLowerCase() === 'application/json';
}

function hijack(reply: FastifyReplyLike): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && !raw.hasHeader(name)) raw.setHeader(name, value);
  }
  return raw;
}

export interface FastifyMcpRouteOptions {
  /** The MCP endpoint's path, without slashes (`mcp`, `agents/mcp`). */
  path: string;
  /** McpModule's `maxBodyBytes`, named next to Fastify's own limit. */
  maxBodyBytes: number;
}

/**
 * Scopes two things to the MCP routes only (the app's other routes keep Fastify's behaviour):
 * an error handler that answers Fastify's body-parsing errors with JSON-RPC errors, as on
 * Express, and a `preParsing` step that decodes `gzip`, `deflate` and `br` bodies, which
 * Express's body parser decodes and Fastify does not. It must be installed before Nest maps the
 * routes (the `onRoute` hook sees only routes added after it).
 */
export function scopeFastifyMcpRoutes(instance: FastifyInstanceLike, options: FastifyMcpRouteOptions): void {
  const known = endpoints.get(instance);
  if (known) return void known.push(options);
  const all = [options];
  endpoints.set(instance, all);
  // One hook per app: with McpModules at `mcp` and `agents/mcp`, a route ending in `/agents/mcp`
  // belongs to the longer path only, and gets one decoder and one error handler.
  instance.addHook('onRoute', (route) => {
    const url = route.url.replace(/\/+$/, '');
    const owner = all
      .filter((e) => url === `/${e.path}` || url.endsWith(`/${e.path}`))
      .sort((a, b) => b.path.length - a.path.length)[0];
    if (owner === undefined || String(route.method).toUpperCase() === 'HEAD') return;
    scopeRoute(route, instance, owner);
  });
}

/** The MCP endpoints of each Fastify instance (an app may import McpModule more than once). */
const endpoints = new WeakMap<FastifyInstanceLike, FastifyMcpRouteOptions[]>();

function scopeRoute(
  route: FastifyRouteOptionsLike,
  instance: FastifyInstanceLike,
  options: FastifyMcpRouteOptions,
): void {
  const ownHandler = route.errorHandler;
  route.errorHandler = (error, request, reply) => {
    const answer = parserErrorAnswer(error, request, instance.initialConfig?.bodyLimit, options.maxBodyBytes);
    if (!answer) {
      if (ownHandler) return ownHandler(error, request, reply);
      // Fastify hands an error thrown here on to the app's error handler (Nest's).
      throw error;
    }
    const body = JSON.stringify(failure(null, answer.code, answer.message));
    const res = hijack(reply);
    res.writeHead(answer.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
  const hooks =
    route.preParsing === undefined ? [] : Array.isArray(route.preParsing) ? route.preParsing : [route.preParsing];
  route.preParsing = [...hooks, skipEmptyBodyOfGetAndDelete, decodeContentEncoding];
}

/**
 * Clients send `Content-Type: application/json` on every request of a session, DELETE and GET
 * included, with no body. Fastify would run its JSON parser on that empty body and refuse it;
 * Express, and the MCP handler, read no body there, so without one there is nothing to parse.
 */
const skipEmptyBodyOfGetAndDelete: PreParsingHook = (request, _reply, payload, done) => {
  const headers = request.raw.headers;
  const method = request.raw.method;
  if (
    (method === 'DELETE' || method === 'GET') &&
    headers['transfer-encoding'] === undefined &&
    (headers['content-length'] ?? '0') === '0'
  ) {
    delete headers['content-type'];
  }
  done(null, payload);
};

const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

const decodeContentEncoding: PreParsingHook = (request, _reply, payload, done) => {
  const encoding = headerOf(request, 'content-encoding')?.trim().toLowerCase();
  if (encoding === undefined || encoding === '' || encoding === 'identity') return done(null, payload);
  const create = DECODERS[encoding];
  if (!create) {
    const error: FastifyErrorLike = Object.assign(new Error(`Unsupported Content-Encoding "${encoding}"`), {
      statusCode: 415,
      code: 'MCP_UNSUPPORTED_ENCODING',
      mcpEncoding: encoding,
    });
    return done(error);
  }
  const decoder = create() as NodeJS.ReadWriteStream & { receivedEncodedLength: number };
  // Fastify checks Content-Length and bodyLimit against the bytes received, which it reads here.
  decoder.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    decoder.receivedEncodedLength += chunk.length;
  });
  decoder.on('error', (error: FastifyErrorLike) => {
    error.statusCode = 400;
    error.mcpEncoding = encoding;
  });
  payload.on('error', (error) => decoder.emit('error', error));
  done(null, payload.pipe(decoder) as unknown as Readable);
};

function headerOf(request: FastifyRequestLike, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The JSON-RPC error for each way Fastify refuses a body before the MCP handler runs. */
function parserErrorAnswer(
  error: FastifyErrorLike,
  request: FastifyRequestLike,
  bodyLimit: number | undefined,
  maxBodyBytes: number,
): { status: number; code: number; message: string } | undefined {
  if (error.mcpEncoding !== undefined) {
    if (error.statusCode === 415)
      return {
        status: 415,
        code: ErrorCode.InvalidRequest,
        message: `Unsupported Content-Encoding "${error.mcpEncoding}": send the body uncompressed, or compressed with gzip, deflate or br.`,
      };
    return BodyRefusals.undecodable(error.mcpEncoding, error.message);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return BodyRefusals.empty();
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return BodyRefusals.notJson();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return BodyRefusals.overFrameworkLimit(
        "Fastify's bodyLimit",
        bodyLimit,
        'new FastifyAdapter({ bodyLimit })',
        maxBodyBytes,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return BodyRefusals.notJsonContentType(headerOf(request, 'content-type'));
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return {
        status: 400,
        code: ErrorCode.ParseError,
        message: 'Parse error: the request body is shorter or longer than its Content-Length header says.',
      };
  }
  // Fastify 4's JSON parser passed its SyntaxError on; Fastify 5 raises FST_ERR_CTP_INVALID_JSON_BODY.
  if (error instanceof SyntaxError) return BodyRefusals.notJson();
  return undefined;
}
