/**
 * fast-check arbitraries for MCP traffic against test/fixtures/fuzz.module.ts: mostly
 * well-formed messages with one or a few fields bent, so that cases get past the first check and
 * reach the deeper ones (envelope, session, headers, `_meta`, cursors, URIs, DTO arguments),
 * plus a share of plain garbage.
 */
import fc from 'fast-check';

export const MODERN = '2026-07-28';
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export type LegacyVersion = (typeof LEGACY_VERSIONS)[number];

const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
} as const;

export const TOOL_NAMES = ['echo', 'shape', 'region', 'flag', 'no_args', 'steps', 'refuse'];
export const PROMPT_NAMES = ['greet', 'plain'];
export const RESOURCE_URIS = ['fuzz://static/readme', 'fuzz://static/config.json', 'fuzz://static/empty'];
export const TEMPLATES = ['fuzz://items/{id}', 'fuzz://files/{+path}', 'fuzz://search{?q,limit}'];
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const LIST_METHODS = ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list'];

type Json = Record<string, unknown>;
/** A JSON value, or a key that is left out. */
const ABSENT = undefined;

/** Strings that tend to break parsers, matchers and lookups. */
const trickyString = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff',
  '\u202e',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '../../etc/passwd',
  '..%2F..%2Fetc',
  '%',
  '%ZZ',
  '%E0%A4%A',
  '{id}',
  '{+path}',
  '*',
  '.*',
  '(a+)+$',
  'a'.repeat(5000),
  '=?base64?ZWNobw==?=',
  '=?base64?*?=',
  'null',
  '1e999',
  '-0',
  '0x10',
  'Echo',
  'ECHO',
  ' echo ',
  'echo\n',
);

/** Any string: printable, full Unicode (lone surrogates included) or a tricky one. */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'binary', maxLength: 24 }),
  trickyString,
);

/** Any JSON value, with hostile keys allowed. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(
    fc.oneof(anyString, fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'toJSON')),
    fc.jsonValue({ maxDepth: 2 }),
    { maxKeys: 4 },
  ),
  anyString,
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, [], {}),
);

/** Mostly `good`, sometimes any JSON, sometimes absent. */
function bent<T>(good: fc.Arbitrary<T>, weight = 6): fc.Arbitrary<T | unknown> {
  return fc.oneof(
    { arbitrary: good, weight },
    { arbitrary: anyJson, weight: 1 },
    { arbitrary: fc.constant(ABSENT), weight: 1 },
  );
}

/** A record whose `undefined` fields are dropped (as JSON does). */
function compact(value: Json): Json {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

const integerish = fc.oneof(fc.integer({ min: -3, max: 8 }), fc.double(), fc.constantFrom('2', '', null, true, 1e400));
const point = fc
  .record({ x: bent(fc.double({ noNaN: true, noDefaultInfinity: true })), y: bent(fc.integer()) })
  .map(compact);

/** Arguments for one of the fixture's tools, mostly of the right shape. */
export function toolArguments(name: string): fc.Arbitrary<unknown> {
  switch (name) {
    case 'echo':
      return fc.record({ text: bent(anyString), times: bent(integerish, 2) }).map(compact);
    case 'shape':
      return fc
        .record({
          shade: bent(fc.constantFrom('red', 'green', 'blue', 'Red', 'purple')),
          origin: bent(point),
          points: bent(fc.array(fc.oneof(point, anyJson), { maxLength: 7 }), 2),
          closed: bent(fc.boolean(), 2),
          tags: bent(fc.array(fc.oneof(anyString, anyJson), { maxLength: 4 }), 2),
          extra: fc.option(anyJson, { nil: undefined }),
        })
        .map(compact);
    case 'region':
      return fc
        .record({
          region: bent(fc.oneof(fc.constantFrom('eu-west', 'us-east'), anyString)),
          level: bent(integerish, 2),
        })
        .map(compact);
    case 'flag':
      return fc.record({ dryRun: bent(fc.boolean()) }).map(compact);
    default:
      return fc.oneof(fc.constant({}), fc.dictionary(anyString, anyJson, { maxKeys: 3 }));
  }
}

/** A resource URI: listed ones, template expansions with odd values, and anything else. */
export const resourceUri: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom(...RESOURCE_URIS), weight: 2 },
  {
    arbitrary: fc.oneof(anyString, fc.stringMatching(/^[0-9a-z%._~-]{0,12}$/)).map((id) => `fuzz://items/${id}`),
    weight: 3,
  },
  {
    arbitrary: fc
      .array(fc.oneof(anyString, fc.constantFrom('..', '.', '', '%2e%2e')), { maxLength: 4 })
      .map((p) => `fuzz://files/${p.join('/')}`),
    weight: 3,
  },
  {
    arbitrary: fc
      .tuple(
        fc.option(anyString, { nil: undefined }),
        fc.option(fc.oneof(anyString, fc.nat().map(String)), { nil: undefined }),
        fc.boolean(),
      )
      .map(([q, limit, encode]) => {
        const parts = [
          q === undefined ? undefined : `q=${encode ? encodeURIComponent(q.replace(/[\ud800-\udfff]/g, '')) : q}`,
          limit === undefined ? undefined : `limit=${limit}`,
        ];
        const query = parts.filter((p) => p !== undefined).join('&');
        return `fuzz://search${query ? '?' : ''}${query}`;
      }),
    weight: 2,
  },
  { arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }), weight: 1 },
  { arbitrary: anyString, weight: 1 },
  { arbitrary: anyJson, weight: 1 },
);

/**
 * A cursor: a real one (collected from list answers by the spec), one with a byte changed, cut
 * short or extended, base64 of arbitrary JSON, or any value.
 */
export function cursor(real: readonly string[]): fc.Arbitrary<unknown> {
  const known = real.length > 0 ? fc.constantFrom(...real) : fc.constant('');
  return fc.oneof(
    { arbitrary: known, weight: 2 },
    {
      arbitrary: fc.tuple(known, fc.nat(), fc.constantFrom('A', '_', '-', '=', '!', '\u00e9')).map(([c, at, ch]) => {
        const i = c.length === 0 ? 0 : at % c.length;
        return c.slice(0, i) + ch + c.slice(i + 1);
      }),
      weight: 2,
    },
    { arbitrary: fc.tuple(known, fc.nat()).map(([c, n]) => c.slice(0, n % (c.length + 1))), weight: 1 },
    { arbitrary: known.map((c) => `${c}${c}`), weight: 1 },
    {
      arbitrary: fc
        .jsonValue({ maxDepth: 2 })
        .map((v) => Buffer.from(JSON.stringify(v) ?? 'null').toString('base64url')),
      weight: 2,
    },
    { arbitrary: anyString, weight: 1 },
    { arbitrary: anyJson, weight: 1 },
  );
}

/** `_meta` of a 2026-07-28 request: the required keys mostly there and valid, sometimes bent. */
export const modernMeta: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .record({
        version: fc.oneof(
          { arbitrary: fc.constant(MODERN), weight: 12 },
          { arbitrary: fc.constantFrom(...LEGACY_VERSIONS, '2099-01-01', '2026-07-29'), weight: 1 },
          { arbitrary: anyJson, weight: 1 },
        ),
        capabilities: fc.oneof(
          { arbitrary: fc.constantFrom({}, { elicitation: {} }, { sampling: {}, roots: {} }), weight: 10 },
          { arbitrary: anyJson, weight: 1 },
          { arbitrary: fc.constant(ABSENT), weight: 1 },
        ),
        clientInfo: fc.oneof(fc.constant(ABSENT), fc.constant({ name: 'fuzz', version: '1' }), anyJson),
        logLevel: fc.oneof(
          { arbitrary: fc.constant(ABSENT), weight: 3 },
          { arbitrary: fc.constantFrom(...LOG_LEVELS), weight: 2 },
          { arbitrary: anyJson, weight: 1 },
        ),
        progressToken: fc.oneof(
          { arbitrary: fc.constant(ABSENT), weight: 4 },
          { arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), weight: 2 },
          { arbitrary: anyJson, weight: 1 },
        ),
        extra: fc.option(fc.dictionary(anyString, anyJson, { maxKeys: 2 }), { nil: undefined }),
      })
      .map(({ version, capabilities, clientInfo, logLevel, progressToken, extra }) =>
        compact({
          ...extra,
          [META.protocolVersion]: version,
          [META.clientCapabilities]: capabilities,
          [META.clientInfo]: clientInfo,
          [META.logLevel]: logLevel,
          progressToken,
        }),
      ),
  },
  { weight: 1, arbitrary: anyJson },
  { weight: 1, arbitrary: fc.constant(ABSENT) },
);

/** `_meta` of a legacy request: usually absent or a progress token. */
export const legacyMeta: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(ABSENT) },
  {
    weight: 3,
    arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), anyJson).map((progressToken) => ({ progressToken })),
  },
  { weight: 1, arbitrary: anyJson },
);

/** The `params` of a method (without `_meta`), from what each method reads. */
function paramsFor(method: string, cursors: readonly string[]): fc.Arbitrary<Json> {
  switch (method) {
    case 'tools/call':
      return fc
        .oneof(
          { arbitrary: fc.constantFrom(...TOOL_NAMES), weight: 8 },
          { arbitrary: anyString, weight: 1 },
          { arbitrary: anyJson, weight: 1 },
        )
        .chain((name) =>
          fc.record({
            name: fc.constant(name),
            arguments: bent(toolArguments(typeof name === 'string' ? name : ''), 8),
          }),
        )
        .map(compact);
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return fc.record({ uri: bent(resourceUri, 10) }).map(compact);
    case 'prompts/get':
      return fc
        .record({
          name: fc.oneof({ arbitrary: fc.constantFrom(...PROMPT_NAMES), weight: 6 }, { arbitrary: anyJson, weight: 1 }),
          arguments: bent(fc.record({ name: bent(anyString), style: bent(anyString, 1) }).map(compact)),
        })
        .map(compact);
    case 'completion/complete':
      return fc
        .record({
          ref: bent(
            fc.oneof(
              fc
                .record({
                  type: bent(fc.constant('ref/prompt'), 8),
                  name: bent(fc.constantFrom(...PROMPT_NAMES, 'nope')),
                })
                .map(compact),
              fc
                .record({
                  type: bent(fc.constant('ref/resource'), 8),
                  uri: bent(fc.oneof(fc.constantFrom(...TEMPLATES), resourceUri)),
                })
                .map(compact),
            ),
          ),
          argument: bent(
            fc
              .record({ name: bent(fc.constantFrom('name', 'id', 'style', 'path', 'q')), value: bent(anyString) })
              .map(compact),
          ),
          context: fc.option(
            fc.oneof(
              fc.record({ arguments: bent(fc.dictionary(anyString, anyJson, { maxKeys: 2 })) }).map(compact),
              anyJson,
            ),
            { nil: undefined },
          ),
        })
        .map(compact);
    case 'logging/setLevel':
      return fc.record({ level: bent(fc.oneof(fc.constantFrom(...LOG_LEVELS), anyString)) }).map(compact);
    case 'initialize':
      return fc
        .record({
          protocolVersion: bent(fc.oneof(fc.constantFrom(...LEGACY_VERSIONS, '2024-11-05', MODERN), anyString)),
          capabilities: bent(fc.constantFrom({}, { roots: { listChanged: true } }, { sampling: {} })),
          clientInfo: bent(fc.record({ name: bent(anyString), version: bent(anyString) }).map(compact)),
        })
        .map(compact);
    case 'notifications/cancelled':
      return fc
        .record({
          requestId: bent(fc.oneof(fc.integer(), fc.string())),
          reason: fc.option(anyString, { nil: undefined }),
        })
        .map(compact);
    case 'notifications/progress':
      return fc.record({ progressToken: anyJson, progress: anyJson }).map(compact);
    default:
      if (LIST_METHODS.includes(method))
        return fc.record({ cursor: fc.option(cursor(cursors), { nil: undefined }) }).map(compact);
      return fc.oneof(fc.constant({}), fc.dictionary(anyString, anyJson, { maxKeys: 3 }));
  }
}

const MODERN_METHODS = [
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
];
const LEGACY_METHODS = [
  ...MODERN_METHODS.filter((m) => m !== 'server/discover'),
  'ping',
  'initialize',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
];
const NOTIFICATIONS = [
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
];

/** A request id: mostly valid (integer or string), sometimes what JSON-RPC forbids. */
export const requestId: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.oneof(fc.integer(), fc.string({ maxLength: 12 }), fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER)),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.constant(null),
      fc.double(),
      fc.boolean(),
      fc.constant({}),
      fc.constant([1]),
      fc.constant(2 ** 64),
    ),
  },
);

/** One JSON-RPC message and what it was built from. */
export interface FuzzMessage {
  /** What goes on the wire (already JSON-safe: undefined members are gone). */
  body: unknown;
  method?: string;
  /** The tool/prompt name or resource URI, for the Mcp-Name header. */
  name?: unknown;
  /** The `arguments` of a tools/call, for Mcp-Param-* headers. */
  args?: unknown;
  /** The `_meta` version, for the MCP-Protocol-Version header. */
  metaVersion?: unknown;
}

/** A message of one era: mostly a well-formed request with some fields bent. */
export function message(era: 'modern' | 'legacy', cursors: readonly string[]): fc.Arbitrary<FuzzMessage> {
  const methods = era === 'modern' ? MODERN_METHODS : LEGACY_METHODS;
  const method = fc.oneof(
    { weight: 14, arbitrary: fc.constantFrom(...methods) },
    { weight: 2, arbitrary: fc.constantFrom(...NOTIFICATIONS) },
    { weight: 1, arbitrary: fc.constantFrom(...(era === 'modern' ? LEGACY_METHODS : MODERN_METHODS)) },
    { weight: 1, arbitrary: anyString },
  );
  const wellFormed = method.chain((m) =>
    fc
      .record({
        jsonrpc: fc.oneof(
          { weight: 20, arbitrary: fc.constant('2.0') },
          { weight: 1, arbitrary: fc.oneof(fc.constantFrom('1.0', '2', 2, ABSENT), anyJson) },
        ),
        id: m.startsWith('notifications/')
          ? fc.oneof({ weight: 6, arbitrary: fc.constant(ABSENT) }, { weight: 1, arbitrary: requestId })
          : fc.oneof({ weight: 12, arbitrary: requestId }, { weight: 1, arbitrary: fc.constant(ABSENT) }),
        params: fc.oneof(
          { weight: 20, arbitrary: paramsFor(m, cursors) },
          { weight: 1, arbitrary: fc.oneof(fc.constant(ABSENT), anyJson) },
        ),
        meta: era === 'modern' ? modernMeta : legacyMeta,
        extra: fc.option(
          fc.dictionary(fc.constantFrom('result', 'error', 'extra', '__proto__'), anyJson, { maxKeys: 1 }),
          { nil: undefined, freq: 20 },
        ),
      })
      .map(({ jsonrpc, id, params, meta, extra }): FuzzMessage => {
        let full: unknown = params;
        if (typeof params === 'object' && params !== null && !Array.isArray(params) && meta !== undefined) {
          const own = (params as Json)._meta;
          full = {
            ...(params as Json),
            _meta:
              typeof meta === 'object' && meta !== null && !Array.isArray(meta) && typeof own === 'object'
                ? { ...(own as Json), ...(meta as Json) }
                : meta,
          };
        }
        const body = jsonSafe(compact({ ...extra, jsonrpc, id, method: m, params: full }));
        const p = (typeof params === 'object' && params !== null ? params : {}) as Json;
        const metaVersion =
          typeof meta === 'object' && meta !== null ? (meta as Json)[META.protocolVersion] : undefined;
        return { body, method: m, name: m === 'resources/read' ? p.uri : p.name, args: p.arguments, metaVersion };
      }),
  );
  const garbage = anyJson.map((body): FuzzMessage => ({ body: jsonSafe(body) }));
  return fc.oneof({ weight: 30, arbitrary: wellFormed }, { weight: 1, arbitrary: garbage });
}

/** A body: one message, or a batch of a few. */
export function envelope(
  era: 'modern' | 'legacy',
  cursors: readonly string[],
): fc.Arbitrary<{ first: FuzzMessage; body: unknown }> {
  const one = message(era, cursors);
  return fc.oneof(
    { weight: 20, arbitrary: one.map((first) => ({ first, body: first.body })) },
    {
      weight: 1,
      arbitrary: fc
        .array(one, { maxLength: 4 })
        .map((all) => ({ first: all[0] ?? { body: undefined }, body: all.map((m) => m.body) })),
    },
  );
}

/** A value after a JSON round trip: what a server receives. */
export function jsonSafe(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
}

/** A header value Node's HTTP client is willing to send (visible ASCII, tab, Latin-1). */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 30 }),
  fc.string({
    unit: fc.oneof(
      fc.constant('\t'),
      fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
    ),
    maxLength: 6,
  }),
  fc.constantFrom('', ' ', '2026-07-28 ', 'null', '=?base64??=', '=?base64?AA?=', '0', 'a,b', 'tools/list, tools/call'),
);

/** A header: the right value (from `good`), a bent one, or absent. */
export function header(
  good: string | undefined,
  bends: fc.Arbitrary<string | undefined> = headerValue,
): fc.Arbitrary<string | undefined> {
  if (good === undefined)
    return fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: bends });
  return fc.oneof(
    { weight: 14, arbitrary: fc.constant(good) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: bends },
  );
}

/** The `Mcp-Name` form of a name: as is, or base64-encoded. */
export function nameHeader(name: unknown): fc.Arbitrary<string | undefined> {
  if (typeof name !== 'string') return header(undefined);
  const plainOk = /^[\t\x20-\x7e]*$/.test(name) && name.trim() === name;
  const encoded = `=?base64?${Buffer.from(name, 'utf8').toString('base64')}?=`;
  return header(plainOk ? name : encoded, fc.oneof(headerValue, fc.constant(encoded)));
}

export const ACCEPT = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json, text/event-stream') },
  {
    weight: 3,
    arbitrary: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html', 'application/*'),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: headerValue },
);

export const CONTENT_TYPE = fc.oneof(
  { weight: 16, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: headerValue },
);
