/**
 * ISSUE-15 items 17, 22 and 23: names checked against maps, arguments checked against the listed
 * input schema, and sampling/roots answers checked before a handler sees them. Issue 26 item 13:
 * what a validator or transform of the application throws (a zod refinement, a class-validator
 * constraint, a @Transform, an elicitation schema) is an internal error with a reference id, never
 * a validation message carrying its text. Each case sends what an attacker (or a broken client)
 * would send, over the real HTTP endpoint.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BadRequestException, Injectable, Module } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsString, Validate, ValidatorConstraint, type ValidatorConstraintInterface } from 'class-validator';
import { z } from 'zod';
import {
  Args,
  Ctx,
  McpModule,
  Prompt,
  ResourceTemplate,
  Tool,
  type InferArgs,
  type McpContext,
} from '../../lib/index.js';
import { AppModule as BasicApp } from '../../sample/01-basic/app.module.js';
import { AppModule as InteractiveApp } from '../../sample/03-interactive/app.module.js';
import { InteractiveModule } from '../fixtures/interactive.module.js';
import { WireModule } from '../fixtures/wire.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { META_KEYS, connectModernClient, connectSdkClient, modernRpc, rpc } from '../utils/clients.js';
import type { SseEvent } from '../utils/sse.js';

type Json = Record<string, any>;

const VALID_LEVELS = 'debug, info, notice, warning, error, critical, alert, emergency';
const PROTOTYPE_NAMES = ['hasOwnProperty', '__proto__', 'toString', 'constructor', 'valueOf'];

async function legacySession(url: string, capabilities: Json = {}): Promise<string> {
  const init = await rpc(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.equal(init.status, 200, init.text);
  const sessionId = init.headers.get('mcp-session-id')!;
  await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId });
  return sessionId;
}

/**
 * Calls a tool on a legacy session and answers every server-to-client request of `method` with
 * the next answer of `answers` (a plain POST of the JSON-RPC response, as a client would).
 * Returns the tool's response and how many requests the server sent.
 */
async function callAnswering(
  url: string,
  sessionId: string,
  call: Json,
  method: string,
  answers: unknown[],
): Promise<{ response: Json; asked: number }> {
  let asked = 0;
  const res = await rpc(
    url,
    { jsonrpc: '2.0', id: 'call', method: 'tools/call', params: call },
    {
      sessionId,
      headers: { 'MCP-Protocol-Version': '2025-11-25' },
      onEvent: async (event: SseEvent) => {
        const data = event.data as Json;
        if (data?.method !== method) return;
        const result = answers[Math.min(asked, answers.length - 1)];
        asked += 1;
        const posted = await rpc(
          url,
          { jsonrpc: '2.0', id: data.id, result },
          { sessionId, headers: { 'MCP-Protocol-Version': '2025-11-25' } },
        );
        assert.equal(posted.status, 202, posted.text);
      },
    },
  );
  const response = res.events?.map((e) => e.data as Json).find((d) => d?.id === 'call');
  assert.ok(response, `no response to the call: ${res.text}`);
  return { response, asked };
}

describe('security: log levels are the eight RFC 5424 names, nothing inherited (item 17)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(WireModule.register());
  });
  after(() => server.close());

  it('refuses logging/setLevel with a prototype name as -32602 naming the valid levels (legacy era)', async () => {
    const sessionId = await legacySession(server.url);
    for (const level of PROTOTYPE_NAMES) {
      const res = await rpc(
        server.url,
        { jsonrpc: '2.0', id: level, method: 'logging/setLevel', params: { level } },
        { sessionId },
      );
      const body = res.json as Json;
      assert.equal(body.error?.code, -32602, `${level}: ${res.text}`);
      assert.equal(body.id, level);
      assert.ok(body.error.message.includes(VALID_LEVELS), body.error.message);
    }
    const ok = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 'ok', method: 'logging/setLevel', params: { level: 'warning' } },
      { sessionId },
    );
    assert.deepEqual((ok.json as Json).result, {});
  });

  it('refuses a 2026-era _meta log level that is a prototype name as -32602 naming the valid levels', async () => {
    for (const level of PROTOTYPE_NAMES) {
      const res = await modernRpc(server.url, 'tools/list', { _meta: { [META_KEYS.logLevel]: level } });
      const body = res.json as Json;
      assert.equal(res.status, 400, `${level}: ${res.text}`);
      assert.equal(body.error?.code, -32602, `${level}: ${res.text}`);
      assert.ok(body.error.message.includes(VALID_LEVELS), body.error.message);
    }
    const ok = await modernRpc(server.url, 'tools/list', { _meta: { [META_KEYS.logLevel]: 'debug' } });
    assert.equal(ok.status, 200, ok.text);
    assert.ok(Array.isArray((ok.json as Json).result.tools));
  });
});

describe('security: arguments must match the listed input schema (item 22)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(BasicApp);
  });
  after(() => server.close());

  const assignees: Array<[string, unknown]> = [
    ['an empty array', []],
    [
      'an array of two assignees',
      [
        { name: 'Ada', email: 'ada@example.com' },
        { name: 'Bob', email: 'bob@example.com' },
      ],
    ],
  ];

  for (const era of ['legacy', 'modern'] as const) {
    for (const [label, assignee] of assignees) {
      it(`refuses "assignee" given as ${label} before the handler runs (${era} era)`, async () => {
        const call = async (method: string, params: Json): Promise<Json> => {
          if (era === 'modern') return (await modernRpc(server.url, method, params)).json as Json;
          const sessionId = await legacySession(server.url);
          const res = await rpc(
            server.url,
            { jsonrpc: '2.0', id: 1, method, params },
            { sessionId, headers: { 'MCP-Protocol-Version': '2025-11-25' } },
          );
          return (res.json ?? res.events?.map((e) => e.data as Json).find((d) => d?.id === 1)) as Json;
        };
        const title = `confused ${era} ${label}`;
        const listed = await call('tools/list', {});
        const schema = listed.result.tools.find((t: Json) => t.name === 'create_task').inputSchema;
        assert.equal(
          [schema.properties.assignee.type].flat().includes('array'),
          false,
          'the listed schema does not allow an array',
        );

        const created = await call('tools/call', { name: 'create_task', arguments: { title, assignee } });
        assert.equal(created.result?.isError, true, JSON.stringify(created));
        const text: string = created.result.content[0].text;
        assert.match(text, /^Invalid arguments for tool "create_task":/);
        assert.match(text, /- assignee: must be an object/);

        const tasks = await call('tools/call', { name: 'list_tasks', arguments: {} });
        const stored = (tasks.result.structuredContent.tasks as Json[]).filter((t) => t.title === title);
        assert.deepEqual(stored, [], 'the handler never ran');
      });
    }
  }

  it('still accepts an assignee object and an omitted one', async () => {
    const ok = (
      await modernRpc(server.url, 'tools/call', {
        name: 'create_task',
        arguments: { title: 'fine', assignee: { name: 'Ada', email: 'ada@example.com' } },
      })
    ).json as Json;
    assert.notEqual(ok.result.isError, true, JSON.stringify(ok));
    assert.deepEqual(ok.result.structuredContent.assignee, { name: 'Ada', email: 'ada@example.com' });
    const none = (await modernRpc(server.url, 'tools/call', { name: 'create_task', arguments: { title: 'alone' } }))
      .json as Json;
    assert.notEqual(none.result.isError, true, JSON.stringify(none));
  });

  it('refuses an object given where the listed schema says array', async () => {
    const res = (
      await modernRpc(server.url, 'tools/call', { name: 'create_task', arguments: { title: 't', tags: { 0: 'a' } } })
    ).json as Json;
    assert.equal(res.result.isError, true);
    assert.match(res.result.content[0].text, /- tags: /);
  });
});

describe('security: sampling and roots answers are checked before the handler sees them (item 23)', () => {
  const malformedSamples: unknown[] = [
    { role: 'robot', model: 'm', content: null },
    { role: 'assistant', model: 'm', content: null },
    { role: 'robot', model: 'm', content: { type: 'text', text: 'hi' } },
    { role: 'assistant', model: 7, content: { type: 'text', text: 'hi' } },
    { role: 'assistant', model: 'm', content: { text: 'no type' } },
    { role: 'assistant', model: 'm', content: { type: 'text', text: 5 } },
    { role: 'assistant', model: 'm', content: [{ type: 'text', text: 'ok' }, 'junk'] },
    { role: 'assistant', model: 'm', content: [] },
    [],
    null,
  ];
  const goodSample = { role: 'assistant', model: 'm', content: { type: 'text', text: 'Short.' } };

  describe('sample 03, 2026-07-28 retries', () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(InteractiveApp);
    });
    after(() => server.close());

    const caps = { [META_KEYS.clientCapabilities]: { sampling: {} } };

    it('asks again instead of running the handler on a malformed sampling answer', async () => {
      for (const answer of malformedSamples) {
        const first = (
          await modernRpc(server.url, 'tools/call', {
            name: 'summarize',
            arguments: { text: 'A long text.' },
            _meta: caps,
          })
        ).json as Json;
        assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
        const [key] = Object.keys(first.result.inputRequests);
        const retry = await modernRpc(server.url, 'tools/call', {
          name: 'summarize',
          arguments: { text: 'A long text.' },
          inputResponses: { [key!]: answer },
          requestState: first.result.requestState,
          _meta: caps,
        });
        const body = retry.json as Json;
        assert.equal(retry.status, 200, `${JSON.stringify(answer)}: ${retry.text}`);
        assert.equal(body.result?.resultType, 'input_required', `${JSON.stringify(answer)}: ${retry.text}`);
        assert.equal(body.result.inputRequests[key!].method, 'sampling/createMessage');
      }
    });

    it('accepts a well-formed answer, also with content as an array of blocks (2025-11-25 shape)', async () => {
      for (const answer of [goodSample, { ...goodSample, content: [{ type: 'text', text: 'Short.' }] }]) {
        const first = (
          await modernRpc(server.url, 'tools/call', { name: 'summarize', arguments: { text: 'x' }, _meta: caps })
        ).json as Json;
        const [key] = Object.keys(first.result.inputRequests);
        const done = (
          await modernRpc(server.url, 'tools/call', {
            name: 'summarize',
            arguments: { text: 'x' },
            inputResponses: { [key!]: answer },
            requestState: first.result.requestState,
            _meta: caps,
          })
        ).json as Json;
        assert.equal(done.result?.resultType, 'complete', JSON.stringify(done));
        assert.notEqual(done.result.isError, true, JSON.stringify(done));
      }
    });
  });

  describe('sample 03, legacy session answering by POST', () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(InteractiveApp);
    });
    after(() => server.close());

    it('asks again after a malformed sampling answer and uses the next good one', async () => {
      const sessionId = await legacySession(server.url, { sampling: {} });
      const { response, asked } = await callAnswering(
        server.url,
        sessionId,
        { name: 'summarize', arguments: { text: 'A long text.' } },
        'sampling/createMessage',
        [{ role: 'robot', model: 'm', content: null }, goodSample],
      );
      assert.equal(asked, 2);
      assert.notEqual(response.result?.isError, true, JSON.stringify(response));
      assert.equal(response.result.content[0].text, 'Short.');
    });

    it('asks the legacy SDK client (1.12.3, which sends whatever its handler returns) again after junk', async () => {
      const answers: unknown[] = [{ role: 'robot', model: 'm', content: null }, goodSample];
      let asked = 0;
      const conn = await connectSdkClient(server.url, {
        version: 'legacy',
        onSample: async () => answers[Math.min(asked++, answers.length - 1)] as never,
      });
      try {
        const result = (await conn.client.callTool({ name: 'summarize', arguments: { text: 'A long text.' } })) as Json;
        assert.equal(asked, 2);
        assert.notEqual(result.isError, true, JSON.stringify(result));
        assert.equal(result.content[0].text, 'Short.');
      } finally {
        await conn.close();
      }
    });

    it('ends the call with a readable tool error after three malformed answers, never reaching the handler', async () => {
      const sessionId = await legacySession(server.url, { sampling: {} });
      const { response, asked } = await callAnswering(
        server.url,
        sessionId,
        { name: 'summarize', arguments: { text: 'A long text.' } },
        'sampling/createMessage',
        [{ role: 'robot', model: 'm', content: null }],
      );
      assert.equal(asked, 3);
      assert.equal(response.result?.isError, true, JSON.stringify(response));
      assert.match(response.result.content[0].text, /sampling\/createMessage.*malformed/);
      assert.match(response.result.content[0].text, /role/);
    });
  });

  describe('roots answers (fixture with a list_roots tool)', () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(InteractiveModule.register());
    });
    after(() => server.close());

    const malformedRoots: unknown[] = [
      { roots: [{ uri: 'file:///r', name: 7 }] },
      { roots: [{ uri: 42 }] },
      { roots: [null] },
      { roots: {} },
      { roots: [{ uri: 'file:///r', _meta: 'x' }] },
      { roots: [{ uri: 'https://example.com/not-a-file-root' }] },
    ];

    it('re-asks on a malformed roots answer on the 2026-07-28 era', async () => {
      const caps = { [META_KEYS.clientCapabilities]: { roots: {} } };
      for (const answer of malformedRoots) {
        const first = (await modernRpc(server.url, 'tools/call', { name: 'list_roots', arguments: {}, _meta: caps }))
          .json as Json;
        assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
        const [key] = Object.keys(first.result.inputRequests);
        const retry = (
          await modernRpc(server.url, 'tools/call', {
            name: 'list_roots',
            arguments: {},
            inputResponses: { [key!]: answer },
            requestState: first.result.requestState,
            _meta: caps,
          })
        ).json as Json;
        assert.equal(retry.result?.resultType, 'input_required', `${JSON.stringify(answer)}: ${JSON.stringify(retry)}`);
      }
    });

    it('re-asks on a malformed roots answer on a legacy session', async () => {
      const sessionId = await legacySession(server.url, { roots: {} });
      const { response, asked } = await callAnswering(
        server.url,
        sessionId,
        { name: 'list_roots', arguments: {} },
        'roots/list',
        [malformedRoots[0], { roots: [{ uri: 'file:///r', name: 'r' }] }],
      );
      assert.equal(asked, 2);
      assert.equal(response.result.content[0].text, 'file:///r');
    });
  });
});

const SECRET = 'postgres://app:ZOD-SECRET@db.internal/prod';
const leak = (where: string): never => {
  throw new Error(`${where}: could not reach ${SECRET}`);
};

const ThrowingZod = z.object({ dsn: z.string().refine((value) => (value === 'fine' ? true : leak('zod refinement'))) });
const ThrowingZodPrompt = z.object({ topic: z.string().refine(() => leak('zod prompt refinement')) });
const ThrowingZodForm = z.object({ ok: z.boolean().refine(() => leak('zod form refinement')) });

@ValidatorConstraint({ name: 'reachable' })
class ThrowingConstraint implements ValidatorConstraintInterface {
  validate(): boolean {
    return leak('class-validator constraint');
  }
}

class ConstraintDto {
  @IsString()
  @Validate(ThrowingConstraint)
  dsn!: string;
}

class TransformDto {
  @IsString()
  @Transform(({ value }) =>
    value === 'refuse'
      ? (() => {
          throw new BadRequestException('dsn must name a known database');
        })()
      : leak('@Transform'),
  )
  dsn!: string;
}

@Injectable()
class ThrowingValidators {
  @Tool('zod_throws', { description: 'Its zod refinement throws.', input: ThrowingZod })
  zodThrows(@Args() { dsn }: InferArgs<typeof ThrowingZod>): string {
    return dsn;
  }

  @Tool('constraint_throws', { description: 'Its class-validator constraint throws.' })
  constraintThrows(@Args() { dsn }: ConstraintDto): string {
    return dsn;
  }

  @Tool('transform_throws', { description: 'Its @Transform throws.' })
  transformThrows(@Args() { dsn }: TransformDto): string {
    return dsn;
  }

  @Tool('form_throws', { description: 'Elicits with a zod form whose refinement throws.' })
  async formThrows(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Proceed?', ThrowingZodForm);
    return outcome.action;
  }

  @ResourceTemplate({
    uriTemplate: 'db://{dsn}',
    name: 'database',
    description: 'Its variable goes through a throwing @Transform.',
    mimeType: 'text/plain',
    args: TransformDto,
  })
  database(@Args() { dsn }: TransformDto): string {
    return dsn;
  }

  @Prompt({ name: 'prompt_throws', description: 'Its zod argument refinement throws.', args: ThrowingZodPrompt })
  promptThrows(@Args() { topic }: InferArgs<typeof ThrowingZodPrompt>): string {
    return topic;
  }
}

@Module({
  imports: [McpModule.forRoot({ name: 'throwing-validators', version: '1.0.0' })],
  providers: [ThrowingValidators],
})
class ThrowingValidatorsApp {}

const REFERENCE = /failed with an internal error \(reference [0-9a-f-]{36}\)\. The server log has the details\./;

describe('security: what a validator throws keeps its text in the log (issue 26 item 13)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(ThrowingValidatorsApp);
  });
  after(() => server.close());

  const eras = [
    {
      era: '2025-11-25',
      connect: (url: string) =>
        connectSdkClient(url, { onElicit: () => ({ action: 'accept', content: { ok: true } }) }),
    },
    {
      era: '2026-07-28',
      connect: (url: string) =>
        connectModernClient(url, { onElicit: () => ({ action: 'accept', content: { ok: true } }) }),
    },
  ];
  for (const { era, connect } of eras) {
    it(`a throwing zod refinement, class-validator constraint, @Transform or elicitation schema answers a reference id, not the text (${era})`, async () => {
      const conn = await connect(server.url);
      try {
        for (const name of ['zod_throws', 'constraint_throws', 'transform_throws', 'form_throws']) {
          const result = (await conn.client.callTool({
            name,
            arguments: name === 'form_throws' ? {} : { dsn: 'db' },
          })) as Json;
          const text = JSON.stringify(result);
          assert.doesNotMatch(text, /ZOD-SECRET|postgres:|could not reach/, `${name} leaks the exception: ${text}`);
          assert.equal(result.isError, true, `${name}: ${text}`);
          assert.match(result.content[0].text, REFERENCE, `${name}: ${text}`);
        }
        // What the schema says of the arguments still reaches the caller: path and message.
        const invalid = (await conn.client.callTool({ name: 'zod_throws', arguments: { dsn: 7 } })) as Json;
        assert.equal(invalid.isError, true);
        assert.match(invalid.content[0].text, /^Invalid arguments for tool "zod_throws":\n- dsn: /);
        // An HttpException thrown on purpose is a message for the caller, as from a handler.
        const refused = (await conn.client.callTool({
          name: 'transform_throws',
          arguments: { dsn: 'refuse' },
        })) as Json;
        assert.equal(refused.isError, true);
        assert.equal(refused.content[0].text, 'dsn must name a known database');
        assert.equal(
          ((await conn.client.callTool({ name: 'zod_throws', arguments: { dsn: 'fine' } })) as Json).content[0].text,
          'fine',
        );
        // A prompt's arguments: the same, as a JSON-RPC error.
        await assert.rejects(
          conn.client.getPrompt({ name: 'prompt_throws', arguments: { topic: 'x' } }),
          (error: Error) => {
            assert.doesNotMatch(error.message, /ZOD-SECRET|postgres:|could not reach/);
            assert.match(
              error.message,
              /Prompt "prompt_throws" failed with an internal error \(reference [0-9a-f-]{36}\)/,
            );
            return true;
          },
        );
        // A resource template's variables: the same.
        await assert.rejects(conn.client.readResource({ uri: 'db://primary' }), (error: Error) => {
          assert.doesNotMatch(error.message, /ZOD-SECRET|postgres:|could not reach/);
          assert.match(
            error.message,
            /Resource "db:\/\/primary" failed with an internal error \(reference [0-9a-f-]{36}\)/,
          );
          return true;
        });
      } finally {
        await conn.close();
      }
    });
  }
});
