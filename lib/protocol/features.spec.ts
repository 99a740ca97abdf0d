import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lastValueFrom, of, throwError, toArray, type Observable } from 'rxjs';
import type {
  Completer,
  McpFeatureCatalog,
  PromptRuntime,
  ResourceRuntime,
  ResourceTemplateRuntime,
} from './catalog.js';
import { installCompletion } from '../completion/completion.js';
import type { RequestEnvelope } from './context.js';
import { ToolError } from './errors.js';
import type { JsonObject } from './mcp-types.js';
import { Content } from './content.js';
import { PromptMessage } from './prompt-messages.js';
import { installPrompts, toGetPromptResult } from '../prompts/prompts.js';
import { ResourceContent, toReadResourceResult } from './resource-contents.js';
import { ResourceNotFoundError } from './resource-contents.js';
import { installResources } from '../resources/resources.js';
import { McpDispatcher } from './dispatcher.js';
import { UriTemplate } from './uri-template.js';

const legacy: RequestEnvelope = { era: 'legacy', protocolVersion: '2025-11-25', capabilities: {} };
const modern: RequestEnvelope = { era: 'modern', protocolVersion: '2026-07-28', capabilities: {} };

function resource(uri: string, read: () => Observable<unknown>, extra: Partial<ResourceRuntime> = {}): ResourceRuntime {
  return { uri, name: uri, descriptor: { uri, name: uri }, read, ...extra };
}

function template(
  uriTemplate: string,
  read: ResourceTemplateRuntime['read'],
  extra: Partial<ResourceTemplateRuntime> = {},
): ResourceTemplateRuntime {
  const parsed = UriTemplate.parse(uriTemplate);
  return {
    uriTemplate,
    name: uriTemplate,
    template: parsed,
    descriptor: { uriTemplate, name: uriTemplate },
    arguments: parsed.variables.map((name) => ({ name })),
    parseVariables: (raw) => ({ ok: true, value: raw }),
    read,
    ...extra,
  };
}

interface Fixture {
  resources?: ResourceRuntime[];
  templates?: ResourceTemplateRuntime[];
  prompts?: PromptRuntime[];
  completers?: McpFeatureCatalog['completer'];
  pageSize?: number;
}

/** A dispatcher with resources, prompts and completion over a hand-built catalog. */
function featureServer(
  fixture: Fixture,
  errors: string[] = [],
): { server: McpDispatcher; catalog: McpFeatureCatalog & { version: number } } {
  const catalog = {
    version: 1,
    tools: () => [],
    tool: () => undefined,
    resources: () => fixture.resources ?? [],
    resource: (uri: string) => fixture.resources?.find((r) => r.uri === uri),
    resourceTemplates: () => fixture.templates ?? [],
    resourceTemplate: (t: string) => fixture.templates?.find((r) => r.uriTemplate === t),
    prompts: () => fixture.prompts ?? [],
    prompt: (name: string) => fixture.prompts?.find((p) => p.name === name),
    completer: fixture.completers ?? (() => undefined),
  };
  const logger = { error: (m: string) => errors.push(m), warn: (m: string) => errors.push(m) };
  const server = new McpDispatcher(
    {
      serverInfo: { name: 's', version: '1' },
      discoverCache: { ttlMs: 1, cacheScope: 'public' },
      listCache: { ttlMs: 2, cacheScope: 'public' },
      pageSize: fixture.pageSize ?? 100,
      exposeInternalErrors: false,
      logger,
    },
    catalog,
  );
  const options = {
    readCache: { ttlMs: 0, cacheScope: 'private' as const },
    exposeInternalErrors: false,
    logger,
  };
  installResources(server, catalog, options);
  installPrompts(server, catalog, options);
  installCompletion(server, catalog, options);
  return { server, catalog };
}

type Response = { result?: JsonObject; error?: { code: number; message: string; data?: JsonObject } };

async function call(
  server: McpDispatcher,
  method: string,
  params: JsonObject,
  env: RequestEnvelope = legacy,
): Promise<Response> {
  const messages = await lastValueFrom(server.handle({ jsonrpc: '2.0', id: 7, method, params }, env).pipe(toArray()));
  return messages.at(-1) as Response;
}

describe('toReadResourceResult', () => {
  it('turns strings, bytes and objects into one content item', () => {
    assert.deepEqual(toReadResourceResult('hi', 'a://x'), {
      contents: [{ uri: 'a://x', mimeType: 'text/plain', text: 'hi' }],
    });
    assert.deepEqual(toReadResourceResult('# hi', 'a://x', 'text/markdown'), {
      contents: [{ uri: 'a://x', mimeType: 'text/markdown', text: '# hi' }],
    });
    assert.deepEqual(toReadResourceResult(Buffer.from('abc'), 'a://x'), {
      contents: [{ uri: 'a://x', mimeType: 'application/octet-stream', blob: 'YWJj' }],
    });
    assert.deepEqual(toReadResourceResult({ a: 1, when: new Date(0) }, 'a://x'), {
      contents: [{ uri: 'a://x', mimeType: 'application/json', text: '{"a":1,"when":"1970-01-01T00:00:00.000Z"}' }],
    });
    assert.deepEqual(toReadResourceResult([1, 2], 'a://x')?.contents[0], {
      uri: 'a://x',
      mimeType: 'application/json',
      text: '[1,2]',
    });
  });

  it('accepts content items, arrays of them and full results, defaulting uri and mimeType', () => {
    assert.deepEqual(
      toReadResourceResult(
        [ResourceContent.text('a'), ResourceContent.blob(Buffer.from('b'), { uri: 'a://y', mimeType: 'image/png' })],
        'a://x',
        'text/csv',
      ),
      {
        contents: [
          { uri: 'a://x', mimeType: 'text/csv', text: 'a' },
          { uri: 'a://y', mimeType: 'image/png', blob: 'Yg==' },
        ],
      },
    );
    assert.deepEqual(toReadResourceResult({ contents: [{ uri: 'a://z', text: 't' }], _meta: { k: 1 } }, 'a://x'), {
      contents: [{ uri: 'a://z', mimeType: 'text/plain', text: 't' }],
      _meta: { k: 1 },
    });
    assert.deepEqual(toReadResourceResult(ResourceContent.json({ a: 1 }), 'a://x')?.contents[0], {
      uri: 'a://x',
      mimeType: 'application/json',
      text: '{"a":1}',
    });
  });

  it('answers nothing (not found) rather than empty contents', () => {
    assert.equal(toReadResourceResult(undefined, 'a://x'), null);
    assert.equal(toReadResourceResult(null, 'a://x'), null);
    assert.equal(toReadResourceResult({ contents: [] }, 'a://x'), null);
  });
});

describe('resources methods', () => {
  it('declares the resources capability and serves subscribe only on the legacy era', async () => {
    const seen: string[] = [];
    const { server } = featureServer({ resources: [resource('a://x', () => of('x'))] });
    assert.deepEqual(server.capabilities().resources, { subscribe: true, listChanged: true });
    assert.deepEqual(server.capabilities().prompts, { listChanged: true });
    assert.deepEqual(server.capabilities().completions, {});
    const env: RequestEnvelope = {
      ...legacy,
      subscribe: (uri) => void seen.push(`+${uri}`),
      unsubscribe: (uri) => void seen.push(`-${uri}`),
    };
    assert.deepEqual((await call(server, 'resources/subscribe', { uri: 'a://x' }, env)).result, {});
    assert.deepEqual((await call(server, 'resources/unsubscribe', { uri: 'a://x' }, env)).result, {});
    assert.deepEqual(seen, ['+a://x', '-a://x']);
    assert.equal((await call(server, 'resources/subscribe', { uri: 5 }, env)).error?.code, -32602);
    assert.equal((await call(server, 'resources/subscribe', {}, legacy)).error?.code, -32602);
    assert.deepEqual((await call(server, 'resources/subscribe', { uri: 'a://x' }, legacy)).result, {});
    const unknown = (await call(server, 'resources/subscribe', { uri: 'a://nowhere' }, env)).error;
    assert.equal(unknown?.code, -32002, 'a URI nothing serves gets the resources/read error');
    assert.equal((await call(server, 'resources/subscribe', { uri: 'a://x' }, modern)).error?.code, -32601);
  });

  it('reads a fixed resource with the era-specific result shape and cache hints', async () => {
    const { server } = featureServer({
      resources: [
        resource('a://text', () => of('hello'), { mimeType: 'text/markdown' }),
        resource('a://cached', () => of('x'), { cache: { ttlMs: 5000, cacheScope: 'public' } }),
      ],
    });
    const old = await call(server, 'resources/read', { uri: 'a://text' });
    assert.deepEqual(old.result, { contents: [{ uri: 'a://text', mimeType: 'text/markdown', text: 'hello' }] });
    const now = await call(server, 'resources/read', { uri: 'a://text' }, modern);
    assert.equal(now.result?.resultType, 'complete');
    assert.equal(now.result?.ttlMs, 0);
    assert.equal(now.result?.cacheScope, 'private');
    const cached = await call(server, 'resources/read', { uri: 'a://cached' }, modern);
    assert.equal(cached.result?.ttlMs, 5000);
    assert.equal(cached.result?.cacheScope, 'public');
  });

  it('answers unknown URIs with -32002 (legacy) and -32602 (modern), both with data.uri', async () => {
    const { server } = featureServer({
      resources: [
        resource('a://gone', () => of(undefined)),
        resource('a://nf', () => throwError(() => new ResourceNotFoundError())),
      ],
    });
    for (const uri of ['a://missing', 'a://gone', 'a://nf']) {
      const old = await call(server, 'resources/read', { uri });
      assert.equal(old.error?.code, -32002, uri);
      assert.deepEqual(old.error?.data, { uri });
      const now = await call(server, 'resources/read', { uri }, modern);
      assert.equal(now.error?.code, -32602, uri);
      assert.deepEqual(now.error?.data, { uri });
      assert.match(now.error!.message, /Resource not found/);
    }
  });

  it('refuses malformed URIs with -32602', async () => {
    const { server } = featureServer({});
    for (const uri of [undefined, 42, '', 'no-scheme', 'a://has space', 'a://x\u0000']) {
      const response = await call(server, 'resources/read', uri === undefined ? {} : { uri }, modern);
      assert.equal(response.error?.code, -32602, String(uri));
    }
  });

  it('matches templates, passes the variables, and names both templates when two match', async () => {
    const reads: unknown[] = [];
    const { server } = featureServer(
      {
        templates: [
          template(
            'n://{folder}/{id}',
            (vars, _raw, uri) => (reads.push([vars, uri]), of(`note ${JSON.stringify(vars)}`)),
          ),
          template('n://{folder}/x{id}', () => of('other')),
          template('f://{+path}', (vars) => of((vars as { path: string }).path)),
        ],
      },
      [],
    );
    const note = await call(server, 'resources/read', { uri: 'n://work/7' });
    assert.equal((note.result?.contents as JsonObject[])[0]!.text, 'note {"folder":"work","id":"7"}');
    assert.deepEqual(reads, [[{ folder: 'work', id: '7' }, 'n://work/7']]);
    const file = await call(server, 'resources/read', { uri: 'f://a/b%20c.md' });
    assert.equal((file.result?.contents as JsonObject[])[0]!.text, 'a/b c.md');
    const ambiguous = await call(server, 'resources/read', { uri: 'n://work/x1' }, modern);
    assert.equal(ambiguous.error?.code, -32603);
    assert.match(ambiguous.error!.message, /"n:\/\/\{folder\}\/\{id\}" and "n:\/\/\{folder\}\/x\{id\}"/);
  });

  it('answers variables that fail validation with -32602', async () => {
    const { server } = featureServer({
      templates: [
        template('n://{id}', () => of('x'), {
          parseVariables: () => ({ ok: false, message: 'Invalid arguments: id must be an integer' }),
        }),
      ],
    });
    const response = await call(server, 'resources/read', { uri: 'n://abc' });
    assert.equal(response.error?.code, -32602);
    assert.match(response.error!.message, /id must be an integer/);
  });

  it('maps handler errors: ToolError and HttpException messages as -32603, others with a reference', async () => {
    const errors: string[] = [];
    class FakeHttpException extends Error {
      getStatus() {
        return 403;
      }
      getResponse() {
        return { message: 'You may not read this.' };
      }
    }
    const { server } = featureServer(
      {
        resources: [
          resource('a://tool', () => throwError(() => new ToolError('Try later.'))),
          resource('a://http', () => throwError(() => new FakeHttpException('x'))),
          resource('a://boom', () => throwError(() => new Error('secret password'))),
          resource('a://sync', () => {
            throw new Error('sync secret');
          }),
        ],
      },
      errors,
    );
    const tool = await call(server, 'resources/read', { uri: 'a://tool' });
    assert.deepEqual(tool.error && [tool.error.code, tool.error.message], [-32603, 'Try later.']);
    const http = await call(server, 'resources/read', { uri: 'a://http' });
    assert.deepEqual(http.error && [http.error.code, http.error.message], [-32603, 'You may not read this.']);
    for (const uri of ['a://boom', 'a://sync']) {
      const boom = await call(server, 'resources/read', { uri }, modern);
      assert.equal(boom.error?.code, -32603);
      assert.match(
        boom.error!.message,
        /Resource "a:\/\/\w+" failed with an internal error \(reference [0-9a-f-]{36}\)/,
      );
      assert.doesNotMatch(boom.error!.message, /secret/);
    }
    assert.equal(errors.length, 2);
  });

  it('pages resources/list and resources/templates/list with cache hints on every modern page', async () => {
    const { server, catalog } = featureServer({
      pageSize: 2,
      resources: ['a://1', 'a://2', 'a://3'].map((uri) => resource(uri, () => of('x'))),
      templates: [template('t://{a}', () => of('x'))],
    });
    const first = await call(server, 'resources/list', {}, modern);
    assert.deepEqual(
      (first.result?.resources as JsonObject[]).map((r) => r.uri),
      ['a://1', 'a://2'],
    );
    assert.equal(first.result?.ttlMs, 2);
    const second = await call(server, 'resources/list', { cursor: first.result?.nextCursor }, modern);
    assert.deepEqual(
      (second.result?.resources as JsonObject[]).map((r) => r.uri),
      ['a://3'],
    );
    assert.equal(second.result?.nextCursor, undefined);
    assert.equal(second.result?.cacheScope, 'public');
    const templates = await call(server, 'resources/templates/list', { cursor: '' });
    assert.deepEqual(templates.result, { resourceTemplates: [{ uriTemplate: 't://{a}', name: 't://{a}' }] });
    catalog.version++;
    const expired = await call(server, 'resources/list', { cursor: first.result?.nextCursor });
    assert.equal(expired.error?.code, -32602);
    assert.match(expired.error!.message, /Expired cursor/);
    const foreign = await call(server, 'resources/templates/list', { cursor: first.result?.nextCursor });
    assert.equal(foreign.error?.code, -32602);
  });
});

function prompt(name: string, get: PromptRuntime['get'], extra: Partial<PromptRuntime> = {}): PromptRuntime {
  return {
    name,
    descriptor: { name, description: `The ${name} prompt.` },
    arguments: [],
    parseArguments: (args) => ({ ok: true, value: args }),
    get,
    ...extra,
  };
}

describe('toGetPromptResult', () => {
  it('turns strings, content items, messages and arrays of them into messages', () => {
    assert.deepEqual(toGetPromptResult('hi'), { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] });
    const image = Content.image(Buffer.from('x'), 'image/png');
    assert.deepEqual(toGetPromptResult(image), { messages: [{ role: 'user', content: image }] });
    assert.deepEqual(toGetPromptResult([PromptMessage.user('q'), PromptMessage.assistant('a'), 'more']), {
      messages: [
        { role: 'user', content: { type: 'text', text: 'q' } },
        { role: 'assistant', content: { type: 'text', text: 'a' } },
        { role: 'user', content: { type: 'text', text: 'more' } },
      ],
    });
    assert.deepEqual(toGetPromptResult({ description: 'd', messages: ['x'] }), {
      description: 'd',
      messages: [{ role: 'user', content: { type: 'text', text: 'x' } }],
    });
  });

  it('describes what is wrong with anything else', () => {
    assert.equal(toGetPromptResult(undefined), 'nothing');
    assert.match(toGetPromptResult([{ role: 'system', content: 'x' }]) as string, /invalid message at index 0/);
    assert.match(toGetPromptResult({ answer: 42 }) as string, /invalid message/);
  });
});

describe('prompts methods', () => {
  it('renders a prompt, adding the declared description', async () => {
    const { server } = featureServer({
      prompts: [prompt('greet', (args) => of(`Hello ${(args as { who: string }).who}`))],
    });
    const old = await call(server, 'prompts/get', { name: 'greet', arguments: { who: 'Ada' } });
    assert.deepEqual(old.result, {
      description: 'The greet prompt.',
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello Ada' } }],
    });
    const now = await call(server, 'prompts/get', { name: 'greet', arguments: { who: 'Ada' } }, modern);
    assert.equal(now.result?.resultType, 'complete');
    assert.equal(now.result?.ttlMs, undefined);
  });

  it('answers bad requests with -32602', async () => {
    const { server } = featureServer({
      prompts: [
        prompt('strict', () => of('x'), {
          parseArguments: () => ({ ok: false, message: 'Missing required argument "code"' }),
        }),
      ],
    });
    const unknown = await call(server, 'prompts/get', { name: 'nope' });
    assert.equal(unknown.error?.code, -32602);
    assert.deepEqual(unknown.error?.data, { name: 'nope' });
    assert.equal((await call(server, 'prompts/get', {})).error?.code, -32602);
    assert.equal((await call(server, 'prompts/get', { name: 'strict', arguments: ['x'] })).error?.code, -32602);
    const missing = await call(server, 'prompts/get', { name: 'strict' }, modern);
    assert.equal(missing.error?.code, -32602);
    assert.match(missing.error!.message, /Missing required argument "code"/);
  });

  it('answers handler failures with -32603', async () => {
    const errors: string[] = [];
    const { server } = featureServer(
      {
        prompts: [
          prompt('empty', () => of(undefined)),
          prompt('refuses', () => throwError(() => new ToolError('Not today.'))),
        ],
      },
      errors,
    );
    const empty = await call(server, 'prompts/get', { name: 'empty' });
    assert.equal(empty.error?.code, -32603);
    assert.match(empty.error!.message, /Prompt "empty" failed with an internal error \(reference/);
    assert.match(errors[0]!, /returned nothing/);
    const refuses = await call(server, 'prompts/get', { name: 'refuses' });
    assert.deepEqual(refuses.error && [refuses.error.code, refuses.error.message], [-32603, 'Not today.']);
  });

  it('pages prompts/list with cache hints on the modern era', async () => {
    const { server } = featureServer({
      pageSize: 1,
      prompts: [prompt('a', () => of('a')), prompt('b', () => of('b'))],
    });
    const first = await call(server, 'prompts/list', {}, modern);
    assert.deepEqual(first.result?.prompts, [{ name: 'a', description: 'The a prompt.' }]);
    assert.equal(first.result?.ttlMs, 2);
    assert.equal(typeof first.result?.nextCursor, 'string');
    const last = await call(server, 'prompts/list', { cursor: first.result?.nextCursor });
    assert.deepEqual(last.result, { prompts: [{ name: 'b', description: 'The b prompt.' }] });
  });
});

describe('completion/complete', () => {
  const many = Array.from({ length: 150 }, (_, i) => `v${i}`);
  const seen: unknown[] = [];
  const completers: Record<string, Completer> = {
    'prompt:p:free': (request) => (seen.push(request), of(many)),
    'prompt:p:shaped': () => of({ values: ['x'], total: 10, hasMore: true }),
    'prompt:p:broken': () => of([1, 2]),
    'resourceTemplate:t://{id}:id': (request) => of([`${request.value}1`]),
  };
  const { server } = featureServer({
    prompts: [
      prompt('p', () => of('x'), {
        arguments: [
          { name: 'lang', enumValues: ['TypeScript', 'Python', 'typst'] },
          { name: 'free' },
          { name: 'shaped' },
          { name: 'broken' },
          { name: 'plain' },
        ],
      }),
    ],
    templates: [template('t://{id}', () => of('x'))],
    completers: (target, argument) =>
      completers[`${target.kind}:${target.kind === 'prompt' ? target.name : target.uriTemplate}:${argument}`],
  });
  const complete = (ref: JsonObject, name: string, value: unknown, extra: JsonObject = {}, env = legacy) =>
    call(server, 'completion/complete', { ref, argument: { name, value }, ...extra }, env);
  const p = { type: 'ref/prompt', name: 'p' };

  it('completes enum arguments by prefix, ignoring case, with no code', async () => {
    assert.deepEqual((await complete(p, 'lang', 'ty')).result, {
      completion: { values: ['TypeScript', 'typst'], total: 2, hasMore: false },
    });
    assert.deepEqual((await complete(p, 'plain', 'x')).result, {
      completion: { values: [], total: 0, hasMore: false },
    });
  });

  it('caps completer values at 100 with total and hasMore, and passes the context', async () => {
    const result = (await complete(p, 'free', 'v', { context: { arguments: { lang: 'Python' } } }, modern)).result!;
    const completion = result.completion as { values: string[]; total: number; hasMore: boolean };
    assert.equal(completion.values.length, 100);
    assert.equal(completion.total, 150);
    assert.equal(completion.hasMore, true);
    assert.equal(result.resultType, 'complete');
    assert.deepEqual(seen.at(-1), { argument: 'free', value: 'v', context: { arguments: { lang: 'Python' } } });
    assert.deepEqual((await complete(p, 'shaped', '')).result, {
      completion: { values: ['x'], total: 10, hasMore: true },
    });
    assert.deepEqual((await complete({ type: 'ref/resource', uri: 't://{id}' }, 'id', 'a')).result, {
      completion: { values: ['a1'], total: 1, hasMore: false },
    });
  });

  it('answers bad references and arguments with -32602, broken completers with -32603', async () => {
    for (const [ref, name, value] of [
      [{ type: 'ref/prompt', name: 'nope' }, 'x', ''],
      [{ type: 'ref/resource', uri: 't://{other}' }, 'id', ''],
      [{ type: 'ref/tool', name: 'p' }, 'lang', ''],
      [undefined, 'lang', ''],
      [p, 'unknown', ''],
      [p, 'lang', 5],
    ] as Array<[JsonObject | undefined, string, unknown]>) {
      const response = await call(server, 'completion/complete', { ref, argument: { name, value } });
      assert.equal(response.error?.code, -32602, JSON.stringify([ref, name, value]));
    }
    assert.equal((await complete(p, 'lang', '', { context: { arguments: { a: 1 } } })).error?.code, -32602);
    assert.equal((await complete(p, 'broken', '')).error?.code, -32603);
  });
});
