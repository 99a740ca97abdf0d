/**
 * The testing kit (`nestjs-model-context/testing`) drives samples 01 to 04 in process: each app
 * is a TestingModule compiled here, never an HTTP app and never listened on, and the kit talks to
 * it through the same engine as HTTP, on both eras.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Injectable, Module, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { filter, firstValueFrom, take } from 'rxjs';
import { Ctx, McpContext, McpModule, McpRequest, RequireScopes, Tool } from 'nestjs-model-context';
import { McpTestClient, McpTestError, type McpTestEra } from 'nestjs-model-context/testing';
import { AppModule as BasicApp } from '../../sample/01-basic/app.module.js';
import { Priority, type TaskDto } from '../../sample/01-basic/dto/task.dto.js';
import { TasksService } from '../../sample/01-basic/tasks.service.js';
import { TasksTools } from '../../sample/01-basic/tasks.tools.js';
import { AppModule as StreamingApp } from '../../sample/02-streaming/app.module.js';
import { AppModule as InteractiveApp } from '../../sample/03-interactive/app.module.js';
import { AppModule as NotesApp } from '../../sample/04-resources-prompts/app.module.js';
import { AppModule as SampleAuthApp } from '../../sample/05-auth-guards/app.module.js';
import { EnterpriseAuthModule, mintToken } from '../fixtures/enterprise-auth.module.js';

type Json = Record<string, any>;

const ERAS: McpTestEra[] = ['2025-11-25', '2026-07-28'];

/** Listening sockets of this process (a listened Nest app would add a TCPServerWrap). */
const listeningSockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;

async function compile(module: unknown): Promise<TestingModule> {
  return Test.createTestingModule({ imports: [module as never] }).compile();
}

const textOf = (result: { content: Array<{ type: string; text?: string }> }): string =>
  result.content.map((c) => c.text ?? '').join('\n');

describe('testing kit: no port is opened', () => {
  it('serves a sample from a TestingModule with no listening socket in the process', async () => {
    const moduleRef = await compile(BasicApp);
    const mcp = await McpTestClient.create(moduleRef, { era: '2026-07-28' });
    try {
      assert.equal(
        typeof (moduleRef as unknown as Json).getHttpServer,
        'undefined',
        'a TestingModule is an application context, not an HTTP app',
      );
      const created = await mcp.callTool('create_task', { title: 'No socket' });
      assert.equal(created.isError, undefined);
      assert.equal(listeningSockets(), 0);
    } finally {
      await mcp.close();
      await moduleRef.close();
    }
  });
});

for (const era of ERAS) {
  describe(`testing kit on ${era}`, () => {
    describe('sample 01-basic', () => {
      let moduleRef: TestingModule;
      let mcp: McpTestClient;
      before(async () => {
        moduleRef = await compile(BasicApp);
        mcp = await McpTestClient.create(moduleRef, { era, clientInfo: { name: 'kit-spec', version: '1.0.0' } });
      });
      after(async () => {
        await mcp.close();
        await moduleRef.close();
      });

      it('negotiates the era and sees the server', () => {
        assert.equal(mcp.protocolVersion, era);
        assert.equal(mcp.serverInfo.name, 'task-tracker');
        assert.match(mcp.instructions ?? '', /task list/);
      });

      it('lists the tools with their DTO schemas', async () => {
        const tools = await mcp.listTools();
        assert.deepEqual(
          tools.map((t) => t.name),
          ['create_task', 'list_tasks', 'get_task', 'complete_task', 'delete_task'],
        );
        const create = tools.find((t) => t.name === 'create_task')!;
        assert.deepEqual(create.inputSchema.required, ['title']);
        assert.ok(create.outputSchema, 'create_task declares its output schema');
      });

      it('calls tools and gets structured output, with the client seen by the tool', async () => {
        const created = await mcp.callTool('create_task', { title: 'Write docs', priority: 'high', tags: ['docs'] });
        assert.notEqual(created.isError, true);
        const task = created.structuredContent as TaskDto;
        assert.equal(task.title, 'Write docs');
        assert.equal(task.priority, 'high');
        const done = await mcp.callTool('complete_task', { id: task.id });
        assert.equal((done.structuredContent as TaskDto).done, true);
        const deleted = await mcp.callTool('delete_task', { id: task.id });
        assert.equal(textOf(deleted), `Deleted task ${task.id} (asked by kit-spec).`);
      });

      it('returns bad arguments as an isError result naming each field, without echoing values', async () => {
        const result = await mcp.callTool('create_task', {
          title: '',
          priority: 'urgent',
          assignee: { name: 'Ada', email: 'not-an-email' },
        });
        assert.equal(result.isError, true);
        const text = textOf(result);
        assert.match(text, /title/);
        assert.match(text, /priority/);
        assert.match(text, /assignee\.email/);
        assert.doesNotMatch(text, /not-an-email|urgent/);
      });

      it('returns a NotFoundException as an isError result', async () => {
        const result = await mcp.callTool('get_task', { id: '00000000-0000-4000-8000-000000000000' });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /does not exist/);
      });

      it('throws an McpTestError for a protocol error (an unknown tool)', async () => {
        await assert.rejects(mcp.callTool('no_such_tool'), (error: unknown) => {
          assert.ok(error instanceof McpTestError);
          assert.equal(error.code, -32602);
          assert.equal(error.method, 'tools/call');
          assert.match(error.message, /Unknown tool "no_such_tool"/);
          return true;
        });
      });
    });

    describe('sample 01-basic with overrideProvider', () => {
      const fixed: TaskDto = {
        id: '11111111-1111-4111-8111-111111111111',
        title: 'From the fake service',
        priority: Priority.Low,
        tags: [],
        done: false,
      };
      class FakeTasksService extends TasksService {
        override list(): TaskDto[] {
          return [fixed];
        }
      }
      let moduleRef: TestingModule;
      let mcp: McpTestClient;
      before(async () => {
        moduleRef = await Test.createTestingModule({ imports: [BasicApp] })
          .overrideProvider(TasksService)
          .useClass(FakeTasksService)
          .compile();
        mcp = await McpTestClient.create(moduleRef, { era });
      });
      after(async () => {
        await mcp.close();
        await moduleRef.close();
      });

      it('the tool runs on the overridden provider', async () => {
        const result = await mcp.callTool('list_tasks');
        assert.deepEqual(result.structuredContent, { tasks: [fixed] });
      });
    });

    describe('paging', () => {
      @Module({
        imports: [McpModule.forRoot({ name: 'paged', version: '1.0.0', pageSize: 2 })],
        providers: [TasksService, TasksTools],
      })
      class PagedModule {}
      let moduleRef: TestingModule;
      let mcp: McpTestClient;
      before(async () => {
        moduleRef = await compile(PagedModule);
        mcp = await McpTestClient.create(moduleRef, { era });
      });
      after(async () => {
        await mcp.close();
        await moduleRef.close();
      });

      it('listTools() follows nextCursor; listToolsPage() returns one page', async () => {
        const first = await mcp.listToolsPage();
        assert.equal(first.items.length, 2);
        assert.equal(typeof first.nextCursor, 'string');
        const second = await mcp.listToolsPage(first.nextCursor);
        assert.deepEqual(
          second.items.map((t) => t.name),
          ['get_task', 'complete_task'],
        );
        assert.deepEqual(
          (await mcp.listTools()).map((t) => t.name),
          ['create_task', 'list_tasks', 'get_task', 'complete_task', 'delete_task'],
        );
      });
    });

    describe('sample 02-streaming', () => {
      let moduleRef: TestingModule;
      let mcp: McpTestClient;
      before(async () => {
        moduleRef = await compile(StreamingApp);
        mcp = await McpTestClient.create(moduleRef, { era });
      });
      after(async () => {
        await mcp.close();
        await moduleRef.close();
      });

      it('sees every progress notification and the log before the result', async () => {
        const seen: string[] = [];
        const result = await mcp.callTool(
          'build_report',
          { title: 'Q3', sections: 3 },
          {
            onProgress: (p) => seen.push(`progress ${p.progress}/${p.total}: ${p.message}`),
            onLog: (log) => seen.push(`${log.level} ${log.logger}: ${String(log.data)}`),
          },
        );
        assert.deepEqual(seen, [
          'progress 1/3: Section 1 of 3',
          'progress 2/3: Section 2 of 3',
          'progress 3/3: Section 3 of 3',
          'info reports: Report "Q3" built with 3 sections.',
        ]);
        assert.deepEqual(result.structuredContent, { title: 'Q3', sections: 3, summary: '"Q3" has 3 sections.' });
      });

      it('cancels the call when the signal aborts', async () => {
        const abort = new AbortController();
        const call = mcp.callTool(
          'build_report',
          { title: 'Long', sections: 100 },
          { signal: abort.signal, onProgress: () => abort.abort(new Error('stop after the first section')) },
        );
        await assert.rejects(call, /stop after the first section/);
      });
    });

    describe('sample 03-interactive', () => {
      let moduleRef: TestingModule;
      let mcp: McpTestClient;
      before(async () => {
        moduleRef = await compile(InteractiveApp);
        mcp = await McpTestClient.create(moduleRef, { era });
      });
      after(async () => {
        await mcp.close();
        await moduleRef.close();
      });

      it('answers the elicitation with the handler and the tool goes on', async () => {
        const asked: Json[] = [];
        const result = await mcp.callTool(
          'delete_project',
          { name: 'apollo' },
          {
            onElicit: (request) => {
              asked.push(request);
              return { action: 'accept', content: { confirm: true, reason: 'obsolete' } };
            },
          },
        );
        assert.equal(textOf(result), 'Deleted project "apollo" (obsolete).');
        assert.equal(asked.length, 1);
        assert.equal(asked[0].message, 'Delete project "apollo" and all its data?');
        assert.equal(asked[0].requestedSchema.properties.confirm.title, 'Delete it');
      });

      it('keeps the project when the user declines', async () => {
        const result = await mcp.callTool(
          'delete_project',
          { name: 'gemini' },
          { onElicit: () => ({ action: 'decline' }) },
        );
        assert.equal(textOf(result), 'Kept project "gemini".');
      });

      it('answers sampling with the handler', async () => {
        const result = await mcp.callTool(
          'summarize',
          { text: 'A long text.' },
          {
            onSample: (request) => {
              assert.equal(request.maxTokens, 200);
              return { role: 'assistant', content: { type: 'text', text: 'Short.' }, model: 'test-model' };
            },
          },
        );
        assert.equal(textOf(result), 'Short.');
      });

      it('fails the call with an McpTestError naming the missing handler', async () => {
        await assert.rejects(mcp.callTool('delete_project', { name: 'mercury' }), (error: unknown) => {
          assert.ok(error instanceof McpTestError);
          assert.match(
            error.message,
            /tools\/call sent "elicitation\/create" to the client, and the test gave no onElicit handler/,
          );
          return true;
        });
      });
    });

    describe('sample 04-resources-prompts', () => {
      let moduleRef: TestingModule;
      let mcp: McpTestClient;
      before(async () => {
        moduleRef = await compile(NotesApp);
        mcp = await McpTestClient.create(moduleRef, { era });
      });
      after(async () => {
        await mcp.close();
        await moduleRef.close();
      });

      it('lists and reads resources and templates', async () => {
        const resources = await mcp.listResources();
        assert.ok(resources.some((r) => r.uri === 'notes://index'));
        const templates = await mcp.listResourceTemplates();
        assert.deepEqual(templates.map((t) => t.uriTemplate).sort(), ['docs://{+path}', 'notes://{folder}/{id}']);
        const index = await mcp.readResource('notes://index');
        const notes = JSON.parse(String((index.contents[0] as Json).text)) as Json[];
        assert.ok(notes.some((n) => n.uri === 'notes://work/n1'));
        const note = await mcp.readResource('notes://work/n1');
        assert.match(String((note.contents[0] as Json).text), /^# Release checklist/);
        const doc = await mcp.readResource('docs://guides/getting-started.md');
        assert.equal(doc.contents[0].mimeType, 'text/markdown');
      });

      it('throws an McpTestError for a resource nothing serves', async () => {
        await assert.rejects(mcp.readResource('notes://work/n999'), (error: unknown) => {
          assert.ok(error instanceof McpTestError);
          assert.equal(error.code, era === '2026-07-28' ? -32602 : -32002);
          assert.match(error.message, /Resource not found/);
          return true;
        });
      });

      it('lists and gets prompts', async () => {
        const prompts = await mcp.listPrompts();
        assert.deepEqual(prompts.map((p) => p.name).sort(), ['draft_note', 'summarize_folder']);
        const prompt = await mcp.getPrompt('summarize_folder', { folder: 'work', maxWords: '50' });
        assert.match(JSON.stringify(prompt.messages[0].content), /at most 50 words/);
        const draft = await mcp.getPrompt('draft_note', { topic: 'testing' });
        assert.match(JSON.stringify(draft.messages), /Draft a short note about \\"testing\\"/);
      });

      it('completes prompt arguments and template variables', async () => {
        const topics = await mcp.complete({ type: 'ref/prompt', name: 'draft_note' }, { name: 'topic', value: 'rel' });
        assert.deepEqual(topics.values, ['release']);
        const folders = await mcp.complete(
          { type: 'ref/resource', uri: 'notes://{folder}/{id}' },
          { name: 'folder', value: 'w' },
        );
        assert.deepEqual(folders.values, ['work']);
        const ids = await mcp.complete(
          { type: 'ref/resource', uri: 'notes://{folder}/{id}' },
          { name: 'id', value: '' },
          { folder: 'personal' },
        );
        assert.deepEqual(ids.values, ['n4']);
      });

      it('sees list changes and updates of a subscribed resource on notifications', async () => {
        const listChanged = firstValueFrom(
          mcp.notifications.pipe(
            filter((m) => m.method === 'notifications/resources/list_changed'),
            take(1),
          ),
        );
        const pinned = await mcp.callTool('pin_note', { id: 'n2' });
        assert.equal(textOf(pinned), 'Pinned n2 as pinned://n2.');
        await listChanged;
        assert.ok((await mcp.listResources()).some((r) => r.uri === 'pinned://n2'));

        await mcp.subscribeResource('notes://index');
        const updated = firstValueFrom(
          mcp.notifications.pipe(
            filter((m) => m.method === 'notifications/resources/updated'),
            take(1),
          ),
        );
        await mcp.callTool('add_note', { folder: 'ideas', title: 'Kit', body: 'Test in process.' });
        assert.equal(((await updated).params as Json).uri, 'notes://index');
      });
    });
  });
}

describe('testing kit: options', () => {
  let moduleRef: TestingModule;
  afterEach(async () => moduleRef?.close());

  it('on 2026-07-28, a client without the elicitation capability gets the protocol error', async () => {
    moduleRef = await compile(InteractiveApp);
    const mcp = await McpTestClient.create(moduleRef, { era: '2026-07-28', capabilities: {} });
    try {
      await assert.rejects(
        mcp.callTool(
          'delete_project',
          { name: 'apollo' },
          { onElicit: () => ({ action: 'accept', content: { confirm: true } }) },
        ),
        (error: unknown) => {
          assert.ok(error instanceof McpTestError);
          assert.match(error.message, /elicitation/);
          assert.deepEqual((error.data as Json).requiredCapabilities, { elicitation: {} });
          return true;
        },
      );
    } finally {
      await mcp.close();
    }
  });

  it('uses handlers given to create() for every call', async () => {
    moduleRef = await compile(InteractiveApp);
    const mcp = await McpTestClient.create(moduleRef, {
      era: '2025-11-25',
      onElicit: () => ({ action: 'accept', content: { confirm: true } }),
    });
    try {
      assert.equal(textOf(await mcp.callTool('delete_project', { name: 'mercury' })), 'Deleted project "mercury".');
    } finally {
      await mcp.close();
    }
  });

  it('speaks an older legacy revision when asked', async () => {
    moduleRef = await compile(BasicApp);
    const mcp = await McpTestClient.create(moduleRef, { era: '2025-03-26' });
    try {
      assert.equal(mcp.protocolVersion, '2025-03-26');
      assert.equal((await mcp.listTools()).length, 5);
    } finally {
      await mcp.close();
    }
  });

  for (const era of ERAS) {
    it(`hands principal and headers to the tool and to @RequireScopes on ${era}`, async () => {
      @Injectable()
      class WhoTools {
        @Tool({ description: 'Says who calls.' })
        whoami(@Ctx() ctx: McpContext, @McpRequest() request: { headers: Record<string, string> }): string {
          return `${ctx.principal} via ${request.headers['x-tenant']}`;
        }

        @RequireScopes('admin')
        @Tool({ description: 'Admins only.' })
        admin(): string {
          return 'admin done';
        }
      }
      @Module({
        imports: [
          McpModule.forRoot({
            name: 'who',
            version: '1.0.0',
            auth: {
              resource: 'https://mcp.example.com/mcp',
              authorizationServers: ['https://auth.example.com'],
              verifyToken: () => null,
            },
          }),
        ],
        providers: [WhoTools],
      })
      class WhoModule {}
      moduleRef = await compile(WhoModule);
      const alice = await McpTestClient.create(moduleRef, {
        era,
        principal: { id: 'alice', scopes: ['admin'] },
        headers: { 'X-Tenant': 'acme' },
      });
      const bob = await McpTestClient.create(moduleRef, { era, principal: { id: 'bob', scopes: [] } });
      try {
        assert.equal(textOf(await alice.callTool('whoami')), 'alice via acme');
        assert.equal(textOf(await alice.callTool('admin')), 'admin done');
        await assert.rejects(
          bob.callTool('admin'),
          (error: unknown) => error instanceof McpTestError && /scope\(s\) admin/.test(error.message),
        );
      } finally {
        await alice.close();
        await bob.close();
      }
    });
  }
});

describe("testing kit: the app's own auth and user object (issue 27, item 8)", () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  const alice = mintToken('alice', ['admin'], ['reports:read', 'reports:write']);
  const bob = mintToken('bob', ['user'], ['reports:read']);

  for (const era of ERAS) {
    it(`runs the app's real auth on ${era}: its global passport guard checks a real bearer token, its roles guard reads its own user`, async () => {
      moduleRef = await compile(EnterpriseAuthModule.register({ guard: 'passport' }));
      const asAlice = await McpTestClient.create(moduleRef, {
        era,
        authenticate: true,
        headers: { Authorization: `Bearer ${alice}` },
      });
      const asBob = await McpTestClient.create(moduleRef, {
        era,
        authenticate: true,
        headers: { Authorization: `Bearer ${bob}` },
      });
      try {
        assert.deepEqual(
          (await asAlice.listTools()).map((t) => t.name),
          ['whoami', 'admin_report', 'write_report'],
        );
        assert.equal(textOf(await asAlice.callTool('admin_report')), 'admin report for alice (name)');
        const seen = JSON.parse(textOf(await asAlice.callTool('whoami'))) as Json;
        assert.deepEqual(seen.user, {
          userId: 'alice',
          username: 'alice (name)',
          roles: ['admin'],
          scope: 'reports:read reports:write',
        });
        assert.equal(seen.principal.id, 'alice');
        assert.deepEqual(
          (await asBob.listTools()).map((t) => t.name),
          ['whoami'],
        );
        await assert.rejects(
          asBob.callTool('write_report'),
          (error: unknown) => error instanceof McpTestError && /scope\(s\) reports:write/.test(error.message),
        );
      } finally {
        await asAlice.close();
        await asBob.close();
      }
    });
  }

  it('refuses, as the endpoint does, a missing or bad token (McpTestError with data.status), and takes authenticate alone', async () => {
    moduleRef = await compile(EnterpriseAuthModule.register({ guard: 'custom' }));
    await assert.rejects(McpTestClient.create(moduleRef, { authenticate: true }), (error: unknown) => {
      return (
        error instanceof McpTestError &&
        (error.data as Json).status === 401 &&
        /^Unauthorized: this MCP endpoint needs a bearer token/.test(error.message)
      );
    });
    await assert.rejects(
      McpTestClient.create(moduleRef, { authenticate: true, headers: { Authorization: 'Bearer forged' } }),
      (error: unknown) => {
        return (
          error instanceof McpTestError &&
          (error.data as Json).status === 401 &&
          /bearer token was refused.*The app's guard said: Invalid token$/.test(error.message)
        );
      },
    );
    await assert.rejects(
      McpTestClient.create(moduleRef, { authenticate: true, principal: { id: 'alice' } }),
      /"authenticate" runs the app's own auth/,
    );
  });

  it("gives the app's guards the app-shaped user (user), and derives the principal from it as the endpoint does (sample 05)", async () => {
    moduleRef = await compile(SampleAuthApp);
    const admin = await McpTestClient.create(moduleRef, {
      era: '2026-07-28',
      user: { sub: 'alice', scope: 'invoices:read invoices:write', roles: ['admin'] },
    });
    try {
      assert.deepEqual(
        (await admin.listTools()).map((t) => t.name),
        ['list_invoices', 'create_invoice', 'wipe_invoices'],
      );
      // The request-scoped AuditService reads request.user.sub, the app's own field.
      assert.equal(
        textOf(await admin.callTool('create_invoice', { customer: 'ACME', amount: 10 })),
        'alice: created invoice for ACME (10)',
      );
    } finally {
      await admin.close();
    }
  });

  it('builds a request per message, as HTTP does: what a guard writes on one call is not on the next (user given)', async () => {
    /** A guard that notes each pass on the request, as guards attach things to requests. */
    @Injectable()
    class NotingGuard implements CanActivate {
      canActivate(context: ExecutionContext): boolean {
        const request = context.switchToHttp().getRequest<{ passes?: number }>();
        request.passes = (request.passes ?? 0) + 1;
        return true;
      }
    }
    @Injectable()
    @UseGuards(NotingGuard)
    class NotedTools {
      @Tool({ description: 'How many guard passes this request saw, for which user.' })
      passes(@McpRequest() request: { passes?: number; user?: { name: string } }): string {
        return `${request.passes} for ${request.user?.name}`;
      }
    }
    @Module({
      imports: [McpModule.forRoot({ name: 'per-call', version: '1.0.0', guardAwareLists: false })],
      providers: [NotedTools],
    })
    class PerCallModule {}
    moduleRef = await compile(PerCallModule);
    const mcp = await McpTestClient.create(moduleRef, { user: { name: 'ada' } });
    try {
      assert.equal(textOf(await mcp.callTool('passes')), '1 for ada');
      assert.equal(textOf(await mcp.callTool('passes')), '1 for ada');
    } finally {
      await mcp.close();
    }
  });

  it('never puts the principal on request.user', async () => {
    @Injectable()
    class UserTools {
      @Tool({ description: 'Shows request.user.' })
      user(@McpRequest() request: { user?: unknown }): string {
        return JSON.stringify(request.user ?? null);
      }
    }
    @Module({ imports: [McpModule.forRoot({ name: 'user', version: '1.0.0' })], providers: [UserTools] })
    class UserModule {}
    moduleRef = await compile(UserModule);
    const mcp = await McpTestClient.create(moduleRef, {
      principal: { id: 'alice', scopes: ['a'], claims: { roles: ['admin'] } },
    });
    try {
      assert.equal(textOf(await mcp.callTool('user')), 'null');
    } finally {
      await mcp.close();
    }
  });
});
