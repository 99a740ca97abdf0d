/**
 * Property-based fuzzing of both eras (issue 16, item 5): JSON-RPC envelopes, headers, `_meta`,
 * cursors, URIs and tool arguments, in process (McpInProcessTransport and McpTestClient) and over
 * HTTP against a real app on a real port. The property: every answer is a valid JSON-RPC answer
 * (a result or an error with an integer code and a string message, the id echoed or null) or an
 * HTTP 4xx with a JSON-RPC error; never a 5xx, an internal error, a crash, an unhandled rejection
 * or a stream left open.
 *
 * The seed is fixed (reproducible runs) and can be changed with FUZZ_SEED; FUZZ_RUNS scales the
 * number of cases (1 = the CI default, at least 10 000 per era).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { INestApplication, LoggerService } from '@nestjs/common';
import fc from 'fast-check';
import { McpInProcessTransport } from 'nestjs-model-context/transports';
import { McpTestClient, McpTestError, type McpTestEra } from 'nestjs-model-context/testing';
import { lastValueFrom, timeout as rxTimeout, toArray } from 'rxjs';
import { FuzzModule } from '../fixtures/fuzz.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import {
  ACCEPT,
  CONTENT_TYPE,
  LEGACY_VERSIONS,
  MODERN,
  PROMPT_NAMES,
  TEMPLATES,
  TOOL_NAMES,
  anyJson,
  anyString,
  cursor,
  envelope,
  header,
  headerValue,
  jsonSafe,
  nameHeader,
  resourceUri,
  toolArguments,
  type FuzzMessage,
  type LegacyVersion,
} from '../utils/fuzz-arbitraries.js';
import { SseParser } from '../utils/sse.js';

type Json = Record<string, any>;
type JsonRpcMessage = Parameters<McpInProcessTransport['send']>[0] & object;

const SEED = process.env.FUZZ_SEED === undefined ? 0x16f022 : Number(process.env.FUZZ_SEED);
const SCALE = process.env.FUZZ_RUNS === undefined ? 1 : Number(process.env.FUZZ_RUNS);
const runs = (n: number): number => Math.max(1, Math.round(n * SCALE));
/** Cases per property; per era: raw in process + McpTestClient + HTTP ≥ 10 000. */
const RUNS = { inProcess: runs(7000), testClient: runs(1000), http: runs(2200), httpStreams: runs(300) };
/** A failure guard only: an answer that takes this long is a stream left open. */
const GUARD_MS = 60_000;

const counts: Record<string, number> = {};
const count = (key: string): void => void (counts[key] = (counts[key] ?? 0) + 1);
/** How the answers came out (result, or error code), printed so a run shows what it reached. */
const outcomes: Record<string, number> = {};
const outcome = (response: Json): void => {
  const key =
    'result' in response
      ? response.result?.isError === true
        ? 'tool isError'
        : 'result'
      : String(response.error?.code);
  outcomes[key] = (outcomes[key] ?? 0) + 1;
};

/** What must never happen in the whole process while the fuzz spec runs. */
const escaped: string[] = [];
const onRejection = (reason: unknown): void =>
  void escaped.push(`unhandledRejection: ${String((reason as Error)?.stack ?? reason)}`);
const onException = (error: Error): void => void escaped.push(`uncaughtException: ${error.stack ?? error.message}`);

/** Error logs of the app (an internal error is logged there before it becomes a -32603). */
class ErrorLog implements LoggerService {
  readonly errors: string[] = [];
  log(): void {}
  warn(): void {}
  debug(): void {}
  verbose(): void {}
  error(message: unknown, ...rest: unknown[]): void {
    this.errors.push([message, ...rest].map((part) => String((part as Error)?.stack ?? part)).join(' '));
  }
}

async function check(name: string, property: fc.IAsyncProperty<any>, numRuns: number): Promise<void> {
  try {
    await fc.assert(property, { seed: SEED, numRuns, endOnFailure: true });
  } catch (error) {
    const cause = (error as Error).cause as Error | undefined;
    const why = cause ? `\nCause: ${cause.stack ?? String(cause)}` : '';
    throw new Error(
      `${name}: ${(error as Error).message}${why}\nReproduce with FUZZ_SEED=${SEED} node --test dist/test/e2e/fuzz.e2e-spec.js`,
    );
  }
}

// ------------------------------------------------------------------ what a valid answer is

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The id of a well-formed request (what its answer must echo), or undefined. */
function requestIdOf(body: unknown): string | number | undefined {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string' || body.method === '')
    return undefined;
  if (body.params !== undefined && !isPlainObject(body.params)) return undefined;
  const id = body.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : undefined;
}

/** Every readable id of a body (single or batch): an answer may carry one of them, or null. */
function idsOf(body: unknown): unknown[] {
  const items = Array.isArray(body) ? body : [body];
  return items
    .filter(isPlainObject)
    .map((m) => m.id)
    .filter((id) => typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)));
}

/** Asserts one message the server sent is valid JSON-RPC 2.0; returns it if it is a response. */
function assertMessage(message: unknown, sent: unknown, label: string): Json | undefined {
  assert.ok(isPlainObject(message), `${label}: not a JSON object: ${JSON.stringify(message)}`);
  assert.equal(message.jsonrpc, '2.0', `${label}: jsonrpc must be "2.0": ${JSON.stringify(message)}`);
  if ('method' in message) {
    // A notification or server request on the answer's stream (progress, log).
    assert.equal(typeof message.method, 'string', `${label}: method must be a string`);
    return undefined;
  }
  const hasResult = 'result' in message;
  const hasError = 'error' in message;
  assert.ok(hasResult !== hasError, `${label}: exactly one of result/error: ${JSON.stringify(message)}`);
  if (hasResult) assert.ok(isPlainObject(message.result), `${label}: result must be an object`);
  else {
    const error = message.error as Json;
    assert.ok(isPlainObject(error), `${label}: error must be an object`);
    assert.ok(Number.isInteger(error.code), `${label}: error.code must be an integer: ${JSON.stringify(error)}`);
    assert.equal(typeof error.message, 'string', `${label}: error.message must be a string`);
    assert.notEqual(
      error.code,
      -32603,
      `${label}: internal error for ${JSON.stringify(sent)?.slice(0, 500)}: ${JSON.stringify(error)}`,
    );
  }
  const id = message.id;
  assert.ok(
    id === null || idsOf(sent).some((sentId) => sentId === id),
    `${label}: id ${JSON.stringify(id)} was not sent (${JSON.stringify(idsOf(sent))})`,
  );
  return message;
}

/** Asserts the messages of one exchange: each valid, and a well-formed request answered once with its id. */
function assertExchange(messages: unknown[], sent: unknown, label: string): void {
  const responses = messages.map((m) => assertMessage(m, sent, label)).filter((m): m is Json => m !== undefined);
  responses.forEach(outcome);
  const id = requestIdOf(sent);
  if (id !== undefined) {
    assert.equal(responses.length, 1, `${label}: a request gets exactly one response, got ${JSON.stringify(messages)}`);
    assert.equal(
      responses[0].id,
      id,
      `${label}: the response must echo id ${JSON.stringify(id)}: ${JSON.stringify(responses[0])}`,
    );
  }
  if (Array.isArray(sent)) {
    // Each request of a batch is answered at most once (a client may reuse an id; each use counts).
    const budget = new Map<unknown, number>();
    for (const sentId of idsOf(sent)) budget.set(sentId, (budget.get(sentId) ?? 0) + 1);
    for (const response of responses) {
      if (response.id === null) continue;
      const left = budget.get(response.id) ?? 0;
      assert.ok(
        left > 0,
        `${label}: a batch answered id ${JSON.stringify(response.id)} more often than it was sent: ${JSON.stringify(responses)}`,
      );
      budget.set(response.id, left - 1);
    }
  }
}

// ------------------------------------------------------------------ HTTP client

interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** Sends one request; resolves with the response (body not yet read). */
function open(
  agent: http.Agent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method,
      agent,
      headers: body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`no response headers within ${GUARD_MS} ms for ${method} ${body?.slice(0, 300)}`)),
      GUARD_MS,
    );
    req.on('response', (res) => {
      clearTimeout(timer);
      resolve(res);
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(body);
  });
}

/** Reads a response to its end: a stream the server leaves open fails the case. */
function readAll(res: http.IncomingMessage, label: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      res.destroy();
      reject(
        new Error(
          `${label}: the response (${res.statusCode}, ${res.headers['content-type']}) did not end within ${GUARD_MS} ms; got ${Buffer.concat(chunks).toString('utf8').slice(0, 500)}`,
        ),
      );
    }, GUARD_MS);
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => {
      clearTimeout(timer);
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
    });
    res.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

function headersOf(entries: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Asserts an HTTP answer: no 5xx; JSON-RPC in JSON or SSE bodies; a 4xx says why in JSON-RPC. */
function assertHttp(answer: HttpAnswer, sent: unknown, label: string, httpMethod = 'POST'): Json[] {
  const where = `${label} (${answer.status} ${answer.headers['content-type'] ?? ''})`;
  assert.ok(
    answer.status < 500,
    `${where}: a 5xx for ${JSON.stringify(sent)?.slice(0, 500)}: ${answer.text.slice(0, 500)}`,
  );
  assert.ok(answer.status >= 200, `${where}: unexpected status`);
  const type = String(answer.headers['content-type'] ?? '');
  // HEAD has no body by definition; OPTIONS is the app's (CORS preflight), not MCP's.
  if (httpMethod === 'HEAD' || httpMethod === 'OPTIONS') return [];
  if (answer.text === '') {
    assert.ok([200, 202, 204].includes(answer.status), `${where}: an error status must carry a JSON-RPC error body`);
    assert.ok(
      requestIdOf(sent) === undefined || answer.status !== 200 || httpMethod !== 'POST',
      `${where}: a request got an empty answer`,
    );
    return [];
  }
  let messages: unknown[];
  if (type.includes('text/event-stream')) {
    assert.ok(answer.status < 300, `${where}: a stream with an error status`);
    const parser = new SseParser();
    const events = [...parser.push(answer.text), ...parser.end()];
    messages = events
      .filter((e) => e.rawData !== '')
      .map((e) => {
        assert.ok(typeof e.data === 'object', `${where}: SSE data is not JSON: ${e.rawData.slice(0, 200)}`);
        return e.data;
      });
  } else {
    assert.match(type, /application\/json/, `${where}: body is neither JSON nor SSE: ${answer.text.slice(0, 300)}`);
    let parsed: unknown;
    assert.doesNotThrow(() => (parsed = JSON.parse(answer.text)), `${where}: body is not JSON`);
    messages = Array.isArray(parsed) ? parsed : [parsed];
    if (answer.status >= 400) {
      assert.ok(
        isPlainObject(parsed) && 'error' in parsed,
        `${where}: a 4xx must be one JSON-RPC error: ${answer.text.slice(0, 300)}`,
      );
    }
  }
  if (httpMethod === 'POST' && answer.status < 300) assertExchange(messages, sent, where);
  else for (const m of messages) assertMessage(m, sent, where);
  return messages as Json[];
}

// ------------------------------------------------------------------ the spec

describe('fuzz: both eras, in process and over HTTP', () => {
  let server: RunningApp;
  let app: INestApplication;
  const logger = new ErrorLog();
  const cursors: string[] = [];
  let agent: http.Agent;
  let url: URL;
  const started = Date.now();

  before(async () => {
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onException);
    server = await startApp(
      FuzzModule.register({
        sessions: { mode: 'stateful' },
        // The fuzz opens thousands of sessions from one address; the per-address cap is tested elsewhere.
        limits: { sessionsPerAddress: 1_000_000, sessionsPerPrincipal: 1_000_000 },
      }),
      { logger },
    );
    app = server.app;
    url = new URL(server.url);
    agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    // Real cursors, so that the fuzz bends ones the server would accept.
    const mcp = McpInProcessTransport.forApp(app);
    for (const method of ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list']) {
      const [answer] = (await lastValueFrom(mcp.send(modernRequest(1, method, {})).pipe(toArray()))) as Json[];
      if (typeof answer.result?.nextCursor === 'string') cursors.push(answer.result.nextCursor);
    }
    mcp.close();
    assert.ok(cursors.length >= 3, `expected paged lists in the fixture, got cursors ${JSON.stringify(cursors)}`);
  });

  after(async () => {
    agent?.destroy();
    await server?.close();
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(
      `fuzz: seed ${SEED}, ${total} cases in ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(counts)}; answers: ${JSON.stringify(outcomes)}`,
    );
  });

  const assertClean = (): void => {
    assert.deepEqual(escaped, [], 'nothing may escape as an unhandled rejection or exception');
    assert.deepEqual(logger.errors, [], 'the app logged errors');
  };

  it(`in process, 2026-07-28: ${RUNS.inProcess} raw messages through McpInProcessTransport`, async () => {
    const mcp = McpInProcessTransport.forApp(app);
    const property = fc.asyncProperty(
      envelope('modern', cursors).chain(({ first, body }) =>
        fc.record({ body: fc.constant(body), headers: modernHeaders(first), headerRules: fc.boolean() }),
      ),
      async ({ body, headers, headerRules }) => {
        count('inProcess/2026-07-28');
        const messages = await collect(mcp, body, { headers, headerRules });
        assertExchange(messages, body, 'in-process modern');
      },
    );
    try {
      await check('in-process modern', property, RUNS.inProcess);
    } finally {
      mcp.close();
    }
    assertClean();
  });

  it(`in process, legacy eras: ${RUNS.inProcess} raw messages on initialized connections`, async () => {
    const connections = new Map<LegacyVersion, McpInProcessTransport>();
    for (const version of LEGACY_VERSIONS) {
      const mcp = McpInProcessTransport.forApp(app);
      const [init] = (await collect(
        mcp,
        {
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
        },
        {},
      )) as Json[];
      assert.equal(init.result?.protocolVersion, version);
      await collect(mcp, { jsonrpc: '2.0', method: 'notifications/initialized' }, {});
      connections.set(version, mcp);
    }
    const property = fc.asyncProperty(
      fc.constantFrom(...LEGACY_VERSIONS),
      envelope('legacy', cursors),
      async (version, { body }) => {
        count(`inProcess/${version}`);
        const messages = await collect(connections.get(version)!, body, {});
        assertExchange(messages, body, `in-process ${version}`);
      },
    );
    try {
      await check('in-process legacy', property, RUNS.inProcess);
    } finally {
      for (const mcp of connections.values()) mcp.close();
    }
    assertClean();
  });

  it(`McpTestClient on every era: ${RUNS.testClient} fuzzed calls each for 2026-07-28 and the legacy eras`, async () => {
    for (const era of [MODERN, ...LEGACY_VERSIONS] as McpTestEra[]) {
      const client = await McpTestClient.create(app, { era });
      const runsHere = era === MODERN ? RUNS.testClient : Math.ceil(RUNS.testClient / LEGACY_VERSIONS.length);
      try {
        await check(`McpTestClient ${era}`, clientProperty(client, era, cursors), runsHere);
      } finally {
        await client.close();
      }
    }
    assertClean();
  });

  it(`over HTTP, 2026-07-28: ${RUNS.http} requests with fuzzed headers and bodies`, async () => {
    const property = fc.asyncProperty(
      envelope('modern', cursors).chain(({ first, body }) =>
        fc.record({
          body: fc.constant(body),
          raw: rawBody(body),
          headers: modernHeaders(first),
          common: commonHeaders(),
          session: header(undefined, fc.oneof(headerValue, fc.uuid())),
          httpMethod: httpMethod(),
        }),
      ),
      async ({ body, raw, headers, common, session, httpMethod: method }) => {
        count('http/2026-07-28');
        const sent = raw.text === undefined ? body : raw.sent;
        const res = await open(
          agent,
          url,
          method,
          headersOf({ ...common, ...headers, 'Mcp-Session-Id': session }),
          method === 'GET' || method === 'DELETE' ? undefined : (raw.text ?? JSON.stringify(body)),
        );
        assertHttp(await readAll(res, 'http modern'), sent, 'http modern', method);
      },
    );
    await check('http modern', property, RUNS.http);
    assertClean();
  });

  it(`over HTTP, legacy eras: ${RUNS.http} requests on initialized sessions, with fuzzed headers and bodies`, async () => {
    const sessions = new Map<LegacyVersion, string>();
    for (const version of LEGACY_VERSIONS) sessions.set(version, await openSession(agent, url, version));
    const property = fc.asyncProperty(
      fc.constantFrom(...LEGACY_VERSIONS).chain((version) =>
        envelope('legacy', cursors).chain(({ body }) =>
          fc.record({
            version: fc.constant(version),
            body: fc.constant(body),
            raw: rawBody(body),
            common: commonHeaders(),
            session: header(
              sessions.get(version),
              fc.oneof(headerValue, fc.uuid(), fc.constantFrom(...sessions.values())),
            ),
            versionHeader: header(
              version,
              fc.oneof(headerValue, fc.constantFrom(...LEGACY_VERSIONS, MODERN, '2024-11-05')),
            ),
            lastEventId: header(undefined),
            httpMethod: httpMethod(),
          }),
        ),
      ),
      async ({ version, body, raw, common, session, versionHeader, lastEventId, httpMethod: method }) => {
        count(`http/${version}`);
        const sent = raw.text === undefined ? body : raw.sent;
        // GET and DELETE on a live session are the streams property's (a GET stream is long-lived).
        const sessionId =
          method === 'GET' || method === 'DELETE'
            ? session === sessions.get(version)
              ? 'not-a-session'
              : session
            : session;
        const headers = headersOf({
          ...common,
          'Mcp-Session-Id': sessionId,
          'MCP-Protocol-Version': versionHeader,
          'Last-Event-ID': lastEventId,
        });
        const res = await open(
          agent,
          url,
          method,
          headers,
          method === 'GET' || method === 'DELETE' ? undefined : (raw.text ?? JSON.stringify(body)),
        );
        assertHttp(await readAll(res, `http ${version}`), sent, `http ${version}`, method);
      },
    );
    await check('http legacy', property, RUNS.http);
    assertClean();
  });

  it(`over HTTP, legacy streams: ${RUNS.httpStreams} GET streams (fuzzed Accept, Last-Event-ID, version) end when their session is deleted`, async () => {
    const property = fc.asyncProperty(
      fc.record({
        version: fc.constantFrom(...LEGACY_VERSIONS),
        accept: fc.oneof({ weight: 6, arbitrary: fc.constant('text/event-stream') }, { weight: 1, arbitrary: ACCEPT }),
        lastEventId: fc.oneof(
          fc.constant(undefined),
          headerValue,
          fc.nat().map((n) => `stream.${n}`),
        ),
        versionHeader: fc.oneof(
          { weight: 4, arbitrary: fc.constant('same') },
          { weight: 1, arbitrary: fc.option(headerValue, { nil: undefined }) },
        ),
        toolFirst: fc.boolean(),
      }),
      async ({ version, accept, lastEventId, versionHeader, toolFirst }) => {
        count(`httpStreams/${version}`);
        const sessionId = await openSession(agent, url, version);
        const base = headersOf({ 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': version });
        let eventId = lastEventId;
        if (toolFirst) {
          // A streamed call leaves events a GET may resume after.
          const call = {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'steps', arguments: {}, _meta: { progressToken: 'p' } },
          };
          const answer = await readAll(
            await open(
              agent,
              url,
              'POST',
              { ...base, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
              JSON.stringify(call),
            ),
            'streamed call',
          );
          const events = [...new SseParser().push(answer.text)];
          assertHttp(answer, call, 'streamed call');
          const ids = events.map((e) => e.id).filter((id): id is string => id !== undefined && id !== '');
          if (ids.length > 0 && eventId === undefined) eventId = ids[0];
        }
        const headers = headersOf({
          ...base,
          'MCP-Protocol-Version': versionHeader === 'same' ? version : versionHeader,
          Accept: accept,
          'Last-Event-ID': eventId,
        });
        const res = await open(agent, url, 'GET', headers);
        const reading = readAll(res, `GET ${version}`);
        // The standing stream stays open while the session lives; ending the session ends it.
        const deleted = await readAll(await open(agent, url, 'DELETE', base), 'DELETE');
        assert.ok([200, 404].includes(deleted.status), `DELETE answered ${deleted.status}: ${deleted.text}`);
        // A resumed stream replays the answer of the call (id 1) it continues.
        assertHttp(await reading, [{ jsonrpc: '2.0', id: 1, method: 'tools/call' }], `GET ${version}`, 'GET');
      },
    );
    await check('http legacy streams', property, RUNS.httpStreams);
    assertClean();
  });
});

// ------------------------------------------------------------------ helpers of the properties

function modernRequest(id: number, method: string, params: Json): JsonRpcMessage {
  const _meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta } } as JsonRpcMessage;
}

/** Sends in process and collects the exchange; a call that never completes fails the case. */
function collect(
  mcp: McpInProcessTransport,
  body: unknown,
  options: { headers?: Record<string, string>; headerRules?: boolean },
): Promise<unknown[]> {
  const headers = options.headers && Object.keys(options.headers).length > 0 ? options.headers : undefined;
  return lastValueFrom(
    mcp.send(body as JsonRpcMessage, { headers, headerRules: options.headerRules }).pipe(
      toArray(),
      rxTimeout({
        first: GUARD_MS,
        with: () =>
          Promise.reject(
            new Error(`in process: no completion within ${GUARD_MS} ms for ${JSON.stringify(body)?.slice(0, 500)}`),
          ),
      }),
    ),
  );
}

/** The Streamable HTTP headers of a 2026-07-28 request: right, bent or missing. */
function modernHeaders(first: FuzzMessage): fc.Arbitrary<Record<string, string>> {
  const version =
    typeof first.metaVersion === 'string' && /^[\x20-\x7e]*$/.test(first.metaVersion) ? first.metaVersion : MODERN;
  const region =
    isPlainObject(first.args) && typeof first.args.region === 'string' ? (first.args.region as string) : undefined;
  return fc
    .record({
      'MCP-Protocol-Version': header(version, fc.oneof(headerValue, fc.constantFrom(...LEGACY_VERSIONS, `${MODERN} `))),
      'Mcp-Method': header(
        first.method !== undefined && /^[\x20-\x7e]*$/.test(first.method) ? first.method : undefined,
        fc.oneof(headerValue, fc.constant(asciiOr(first.method?.toUpperCase(), 'TOOLS/LIST'))),
      ),
      'Mcp-Name': nameHeader(first.name),
      'Mcp-Param-Region':
        first.method === 'tools/call' && first.name === 'region' ? nameHeader(region) : header(undefined),
      'Mcp-Param-Dry-Run':
        first.method === 'tools/call' &&
        first.name === 'flag' &&
        isPlainObject(first.args) &&
        first.args.dryRun !== undefined
          ? header(
              typeof first.args.dryRun === 'boolean' ? String(first.args.dryRun) : 'true',
              fc.oneof(headerValue, fc.constantFrom('TRUE', '1', 'false')),
            )
          : header(undefined),
    })
    .map(headersOf);
}

/** `value` when Node can send it as a header, else `fallback`. */
function asciiOr(value: string | undefined, fallback: string): string {
  return value !== undefined && /^[\x20-\x7e]*$/.test(value) ? value : fallback;
}

/** Accept, Content-Type, Origin and Host of any request. */
function commonHeaders(): fc.Arbitrary<Record<string, string | undefined>> {
  return fc.record({
    Accept: ACCEPT,
    'Content-Type': CONTENT_TYPE,
    Origin: fc.oneof(
      { weight: 12, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('http://127.0.0.1', 'http://localhost:3000', 'https://evil.example', 'null'),
      },
      { weight: 1, arbitrary: headerValue },
    ),
    Host: fc.oneof(
      { weight: 20, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom('evil.example', 'localhost', '127.0.0.1:1', '') },
    ),
  });
}

function httpMethod(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 40, arbitrary: fc.constant('POST') },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD') },
  );
}

/** Mostly the message's JSON; sometimes bytes that are not one (cut, padded, not JSON at all). */
function rawBody(body: unknown): fc.Arbitrary<{ text?: string; sent?: unknown }> {
  const json = JSON.stringify(body) ?? 'null';
  return fc.oneof(
    { weight: 20, arbitrary: fc.constant({}) },
    {
      weight: 1,
      arbitrary: fc
        .nat()
        .map((n) => json.slice(0, n % (json.length + 1)))
        .map((text) => ({ text, sent: tryParse(text) })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(' ', '\n', '[]', 'null', '"x"', '1', '{', '[{}, ', '\ufeff{}', `${json}${json}`, ` \t${json}\n`)
        .map((text) => ({ text, sent: tryParse(text) })),
    },
    { weight: 1, arbitrary: anyString.map((text) => ({ text, sent: tryParse(text) })) },
  );
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return 'garbage';
  }
}

/** Initializes a legacy session over HTTP and returns its id. */
async function openSession(agent: http.Agent, url: URL, version: LegacyVersion): Promise<string> {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
  };
  const res = await open(agent, url, 'POST', headers, JSON.stringify(init));
  const answer = await readAll(res, 'initialize');
  assert.equal(answer.status, 200, answer.text);
  const sessionId = answer.headers['mcp-session-id'];
  assert.equal(typeof sessionId, 'string', 'initialize must mint a session');
  const ack = await readAll(
    await open(
      agent,
      url,
      'POST',
      { ...headers, 'Mcp-Session-Id': sessionId as string, 'MCP-Protocol-Version': version },
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    ),
    'initialized',
  );
  assert.equal(ack.status, 202, ack.text);
  return sessionId as string;
}

/**
 * McpTestClient calls with fuzzed names, arguments, URIs, cursors and completion refs: each
 * resolves, or rejects with an McpTestError that names a JSON-RPC code (never an internal error).
 */
function clientProperty(client: McpTestClient, era: McpTestEra, cursors: readonly string[]): fc.IAsyncProperty<any> {
  const strings = fc.oneof(anyString, fc.constant('x'));
  const call = fc.oneof(
    fc.oneof(fc.constantFrom(...TOOL_NAMES), anyString).chain((name) =>
      toolArguments(name).map((args) => ({
        what: `callTool ${name}`,
        run: () => client.callTool(name, (isPlainObject(args) ? args : { value: args }) as Json),
      })),
    ),
    resourceUri.map((uri) => ({
      what: `readResource ${JSON.stringify(uri)}`,
      run: () => client.readResource(typeof uri === 'string' ? uri : (JSON.stringify(uri) ?? '')),
    })),
    fc
      .tuple(
        fc.oneof(fc.constantFrom(...PROMPT_NAMES), anyString),
        fc.dictionary(fc.constantFrom('name', 'style', 'other'), strings, { maxKeys: 3 }),
      )
      .map(([name, args]) => ({ what: `getPrompt ${name}`, run: () => client.getPrompt(name, args) })),
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom(...PROMPT_NAMES).map((name) => ({ type: 'ref/prompt' as const, name })),
          fc.oneof(fc.constantFrom(...TEMPLATES), anyString).map((uri) => ({ type: 'ref/resource' as const, uri })),
        ),
        fc.constantFrom('name', 'id', 'path', 'style'),
        strings,
      )
      .map(([ref, name, value]) => ({
        what: `complete ${JSON.stringify(ref)}`,
        run: () => client.complete(ref, { name, value }),
      })),
    fc
      .tuple(
        fc.constantFrom('listToolsPage', 'listResourcesPage', 'listPromptsPage') as fc.Arbitrary<
          'listToolsPage' | 'listResourcesPage' | 'listPromptsPage'
        >,
        cursor(cursors),
      )
      .map(([list, c]) => ({
        what: `${list} ${JSON.stringify(c)}`,
        run: () => client[list](typeof c === 'string' ? c : JSON.stringify(c)),
      })),
    fc.tuple(anyString, anyJson).map(([method, params]) => ({
      what: `request ${method}`,
      run: () =>
        client.request(
          method === 'subscriptions/listen' ? 'x' : method,
          isPlainObject(jsonSafe(params)) ? (jsonSafe(params) as Json) : {},
        ),
    })),
  );
  return fc.asyncProperty(call, async ({ what, run }) => {
    count(`testClient/${era}`);
    try {
      const result = await run();
      assert.ok(
        isPlainObject(result) || Array.isArray(result),
        `${era} ${what}: resolved with ${JSON.stringify(result)}`,
      );
    } catch (error) {
      assert.ok(
        error instanceof McpTestError,
        `${era} ${what}: rejected with something else than an McpTestError: ${(error as Error)?.stack ?? String(error)}`,
      );
      assert.ok(
        Number.isInteger(error.code) && error.code !== -32603,
        `${era} ${what}: code ${error.code}: ${error.message}`,
      );
      assert.ok(error.message.length > 0, `${era} ${what}: an error without a message`);
    }
  });
}
