/**
 * A tool whose result breaks its own declared output schema. The spec says a server MUST give
 * structured results that conform to the outputSchema, so the server never passes such a result
 * on: the caller gets an `isError` result naming the broken field, and the server log has the
 * same problem under the same reference. Checked with the official clients of both eras.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Controller, Get, Injectable, Module, type LoggerService } from '@nestjs/common';
import { McpModule, Tool } from '../../lib/index.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient } from '../utils/clients.js';

type Json = Record<string, any>;

const COUNT_SCHEMA = {
  type: 'object',
  properties: { count: { type: 'integer' }, label: { type: 'string' } },
  required: ['count'],
};

@Injectable()
class OutputTools {
  @Tool('good_count', { description: 'Returns a result that matches its schema.', output: COUNT_SCHEMA })
  good(): Json {
    return { count: 3, label: 'three' };
  }

  @Tool('wrong_type', { description: 'Returns a string where its schema says integer.', output: COUNT_SCHEMA })
  wrongType(): Json {
    return { count: 'three' };
  }

  @Tool('missing_field', { description: 'Leaves out a required field.', output: COUNT_SCHEMA })
  missing(): Json {
    return { label: 'none' };
  }
}

@Module({ imports: [McpModule.forRoot({ name: 'output-schema-e2e', version: '1.0.0' })], providers: [OutputTools] })
class OutputModule {}

/** Keeps the error lines the server logs, and tells a waiting test when one arrives. */
class CapturingLogger implements LoggerService {
  readonly errors: string[] = [];
  private waiters: Array<{ match: RegExp; resolve: (line: string) => void }> = [];
  log(): void {}
  warn(): void {}
  debug(): void {}
  verbose(): void {}
  error(message: unknown): void {
    const line = String(message);
    this.errors.push(line);
    this.waiters = this.waiters.filter((w) => (w.match.test(line) ? (w.resolve(line), false) : true));
  }
  /** The logged error line matching `match`, now or once logged. */
  line(match: RegExp): Promise<string> {
    const found = this.errors.find((l) => match.test(l));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no error line matching ${match} was logged`)), 60_000);
      this.waiters.push({ match, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }
}

interface AnyClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Json>;
}

const eras: Array<{ era: string; connect: (url: string) => Promise<{ client: AnyClient; close(): Promise<void> }> }> = [
  { era: '2025-11-25 (@modelcontextprotocol/sdk 1.32)', connect: (url) => connectSdkClient(url) as never },
  { era: '2026-07-28 (@modelcontextprotocol/client 2.4)', connect: (url) => connectModernClient(url) as never },
];

describe('a tool result that breaks its declared output schema', () => {
  let server: RunningApp;
  const logger = new CapturingLogger();
  before(async () => {
    server = await startApp(OutputModule, { logger });
  });
  after(() => server.close());

  for (const { era, connect } of eras) {
    describe(era, () => {
      it('passes a conforming result on as structured content', async () => {
        const connection = await connect(server.url);
        try {
          const result = await connection.client.callTool({ name: 'good_count', arguments: {} });
          assert.notEqual(result.isError, true);
          assert.deepEqual(result.structuredContent, { count: 3, label: 'three' });
        } finally {
          await connection.close();
        }
      });

      for (const [tool, problem] of [
        ['wrong_type', /count: must be an integer/],
        ['missing_field', /count: is required/],
      ] as const) {
        it(`answers ${tool} with an isError result naming the field, and logs it under the same reference`, async () => {
          const connection = await connect(server.url);
          try {
            const result = await connection.client.callTool({ name: tool, arguments: {} });
            assert.equal(result.isError, true);
            assert.equal(result.structuredContent, undefined, 'the non-conforming value must not be passed on');
            const text: string = result.content[0].text;
            assert.match(
              text,
              new RegExp(`Tool "${tool}" produced output that does not match its declared output schema`),
            );
            assert.match(text, problem);
            assert.doesNotMatch(text, /three|none/, 'the returned values stay out of the message');
            const ref = /reference ([0-9a-f-]{36})/.exec(text)?.[1];
            assert.ok(ref, `the message carries a reference: ${text}`);
            const logged = await logger.line(new RegExp(`ref ${ref}`));
            assert.match(logged, new RegExp(`Tool "${tool}"`));
            assert.match(logged, problem);
          } finally {
            await connection.close();
          }
        });
      }
    });
  }
});

@Injectable()
class ListTools {
  @Tool('names', { description: 'Returns an array and declares no output schema.' })
  names(): string[] {
    return ['ada', 'grace'];
  }

  @Tool('typed_names', {
    description: 'Returns an array its output schema describes.',
    output: { type: 'array', items: { type: 'string' } },
  })
  typedNames(): string[] {
    return ['ada', 'grace'];
  }
}

@Controller('people')
class PeopleController {
  @Get()
  list(): Json[] {
    return [{ name: 'ada' }, { name: 'grace' }];
  }
}

@Module({
  imports: [
    McpModule.forRoot({
      name: 'structured-e2e',
      version: '1.0.0',
      expose: { routes: [{ controllers: [PeopleController] }] },
    }),
  ],
  controllers: [PeopleController],
  providers: [ListTools],
})
class ListModule {}

describe('structuredContent: one rule on both eras', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(ListModule);
  });
  after(() => server.close());

  for (const { era, connect } of eras) {
    describe(era, () => {
      for (const [tool, text] of [
        ['names', '["ada","grace"]'],
        ['list', '[{"name":"ada"},{"name":"grace"}]'],
      ] as const) {
        it(`${tool}: an array without an output schema is text only`, async () => {
          const connection = await connect(server.url);
          try {
            const result = await connection.client.callTool({ name: tool, arguments: {} });
            assert.notEqual(result.isError, true);
            assert.equal(result.structuredContent, undefined);
            assert.deepEqual(result.content, [{ type: 'text', text }]);
          } finally {
            await connection.close();
          }
        });
      }
    });
  }

  it('an array its listed output schema describes is structured on 2026-07-28; 2025-11-25 lists no such schema and gets text', async () => {
    const modern = await connectModernClient(server.url);
    const legacy = await connectSdkClient(server.url);
    try {
      const modernTool = ((await modern.client.listTools()) as { tools: Json[] }).tools.find(
        (t) => t.name === 'typed_names',
      )!;
      assert.deepEqual(modernTool.outputSchema, { type: 'array', items: { type: 'string' } });
      assert.deepEqual((await modern.client.callTool({ name: 'typed_names', arguments: {} })).structuredContent, [
        'ada',
        'grace',
      ]);
      const legacyTool = ((await legacy.client.listTools()) as { tools: Json[] }).tools.find(
        (t) => t.name === 'typed_names',
      )!;
      assert.equal(legacyTool.outputSchema, undefined);
      const result = (await legacy.client.callTool({ name: 'typed_names', arguments: {} })) as Json;
      assert.notEqual(result.isError, true);
      assert.equal(result.structuredContent, undefined);
      assert.deepEqual(result.content, [{ type: 'text', text: '["ada","grace"]' }]);
    } finally {
      await modern.close();
      await legacy.close();
    }
  });
});
