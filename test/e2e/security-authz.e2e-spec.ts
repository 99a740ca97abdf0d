import assert from 'node:assert/strict';
import { Injectable, Module, UseGuards, type CanActivate } from '@nestjs/common';
import { McpModule, McpRegistry, RequireScopes } from 'nestjs-model-context';
import { after, before, describe, it } from 'node:test';
import { CODENAMES, SecuredModule, seen } from '../fixtures/secured.module.js';
import { ResourcesPagingModule } from '../fixtures/resources-paging.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc, rpc } from '../utils/clients.js';

type Json = Record<string, any>;
const ERAS = ['legacy', 'modern'] as const;
type Era = (typeof ERAS)[number];

interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

/**
 * Issue 15, section D: authorization covers every capability (tools, resources, templates,
 * prompts, completions, runtime-registered ones), on a legacy 2025-11-25 session and on the
 * stateless 2026-07-28 era alike.
 */
describe('authorization on every capability (issue 15, section D)', () => {
  let server: RunningApp;
  const sessions = new Map<string, string>();
  let nextId = 1;

  before(async () => {
    server = await startApp(SecuredModule.register());
  });
  after(() => server.close());

  async function sessionOf(token: string): Promise<string> {
    const known = sessions.get(token);
    if (known) return known;
    const init = await rpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      { headers: { Authorization: `Bearer ${token}` } },
    );
    assert.equal(init.status, 200, init.text);
    const id = init.headers.get('mcp-session-id')!;
    sessions.set(token, id);
    return id;
  }

  async function call(era: Era, token: string, method: string, params: Json = {}): Promise<Answer> {
    const headers = { Authorization: `Bearer ${token}` };
    const id = nextId++;
    const res =
      era === 'modern'
        ? await modernRpc(server.url, method, params, { headers, id })
        : await rpc(
            server.url,
            { jsonrpc: '2.0', id, method, params },
            { sessionId: await sessionOf(token), headers: { ...headers, 'MCP-Protocol-Version': '2025-11-25' } },
          );
    const body = (res.json ?? res.events?.map((e) => e.data).find((d) => (d as Json)?.id === id)) as Json;
    return { status: res.status, headers: res.headers, body };
  }

  function assertInsufficientScope(answer: Answer, scopes: string, what: string): void {
    assert.equal(answer.status, 403, `${what}: ${JSON.stringify(answer.body)}`);
    assert.match(
      answer.headers.get('www-authenticate') ?? '',
      new RegExp(`error="insufficient_scope", scope="${scopes}"`),
      what,
    );
    assert.equal(answer.body.error.code, -32600, what);
    assert.match(answer.body.error.message, /needs the scope\(s\)/, what);
  }

  async function names(
    era: Era,
    token: string,
    method: string,
    key: string,
    field: string,
  ): Promise<{ names: string[]; result: Json }> {
    const answer = await call(era, token, method);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return { names: (answer.body.result[key] as Json[]).map((item) => item[field]), result: answer.body.result };
  }

  for (const era of ERAS) {
    describe(`adversarial follow-ups (${era})`, () => {
      // A validation message names the enum's values: a caller the guards refuse must get their
      // refusal instead, on every capability that validates before its handler runs.
      it("answers invalid arguments of a guarded capability with the guards' refusal, never the enum values", async () => {
        const leaks = (answer: Answer): boolean => CODENAMES.some((c) => JSON.stringify(answer.body).includes(c));
        const cases: Array<[string, Json]> = [
          ['prompts/get', { name: 'codename_brief', arguments: { codename: 'zzz' } }],
          ['prompts/get', { name: 'admin_prompt', arguments: { codename: 'zzz' } }],
          ['prompts/get', { name: 'admin_prompt', arguments: {} }],
          ['resources/read', { uri: 'secret://plans/zzz' }],
          ['resources/read', { uri: 'runtime://vault/zzz' }],
          ['tools/call', { name: 'launch_operation', arguments: { codename: 'zzz' } }],
        ];
        for (const [method, params] of cases) {
          const refused = await call(era, 'plain-token', method, params);
          const what = `${method} ${JSON.stringify(params)}: ${JSON.stringify(refused.body)}`;
          assert.ok(!leaks(refused), what);
          if (method === 'tools/call') {
            assert.equal(refused.body.result.isError, true, what);
            assert.match(refused.body.result.content[0].text, /Forbidden/, what);
          } else {
            assert.match(refused.body.error.message, /Forbidden/, what);
          }
        }
        for (const [method, params] of cases.slice(3, 4)) {
          const blocked = await call(era, 'blocked-token', method, params);
          assert.ok(!leaks(blocked), JSON.stringify(blocked.body));
        }
        // A caller the guards admit still learns what is wrong with its arguments.
        const admitted = await call(era, 'admin-token', 'prompts/get', {
          name: 'codename_brief',
          arguments: { codename: 'zzz' },
        });
        assert.equal(admitted.body.error.code, -32602);
        assert.match(admitted.body.error.message, /codename: must be one of the following values: bluebird/);
        const tool = await call(era, 'scopeless-admin-token', 'tools/call', {
          name: 'launch_operation',
          arguments: { codename: 'zzz' },
        });
        assert.match(tool.body.result.content[0].text, /codename/);
      });
    });
  }

  it('refuses resources/subscribe to a URI whose guards refuse reading it (legacy)', async () => {
    for (const uri of ['admin://report', 'secret://plans', 'secret://plans/osprey', 'runtime://vault/osprey']) {
      const refused = await call('legacy', 'plain-token', 'resources/subscribe', { uri });
      assert.match(refused.body.error?.message ?? '', /Forbidden/, `${uri}: ${JSON.stringify(refused.body)}`);
    }
    const blocked = await call('legacy', 'blocked-token', 'resources/subscribe', { uri: 'runtime://status' });
    assert.match(blocked.body.error?.message ?? '', /Forbidden/, JSON.stringify(blocked.body));
    const allowed = await call('legacy', 'admin-token', 'resources/subscribe', { uri: 'secret://plans/osprey' });
    assert.deepEqual(allowed.body.result, {}, JSON.stringify(allowed.body));
  });

  it('refuses subscriptions/listen to a URI whose guards refuse reading it (2026-07-28)', async () => {
    for (const uri of ['admin://report', 'secret://plans/osprey', 'runtime://vault/osprey']) {
      const refused = await call('modern', 'plain-token', 'subscriptions/listen', {
        notifications: { resourceSubscriptions: ['public://readme', uri] },
      });
      assert.match(refused.body?.error?.message ?? '', /Forbidden/, `${uri}: ${JSON.stringify(refused.body)}`);
    }
    const blocked = await call('modern', 'blocked-token', 'subscriptions/listen', {
      notifications: { resourceSubscriptions: ['runtime://status'] },
    });
    assert.match(blocked.body?.error?.message ?? '', /Forbidden/, JSON.stringify(blocked.body));
  });

  it('refuses a runtime guard class the application does not provide, instead of skipping it', () => {
    @Injectable()
    class UnprovidedGuard implements CanActivate {
      canActivate(): boolean {
        return false;
      }
    }
    const registry = server.app.get(McpRegistry);
    assert.throws(
      () =>
        registry.addTool({
          name: 'orphan',
          description: 'x',
          decorators: [UseGuards(UnprovidedGuard)],
          handler: () => 'x',
        }),
      /McpRegistry\.addTool\(orphan\): the guard UnprovidedGuard in "decorators" is not provided by the application as a singleton.*Add UnprovidedGuard to the providers of a module \(default scope\), or pass an instance/,
    );
    assert.equal(registry.tool('orphan'), undefined);
  });

  it('keeps serving the shared cached pages, marked public, when nothing is guarded or scoped', async () => {
    const plain = await startApp(ResourcesPagingModule);
    try {
      for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']) {
        const page = ((await modernRpc(plain.url, method)).json as Json).result;
        assert.equal(page.cacheScope, 'public', method);
      }
    } finally {
      await plain.close();
    }
  });

  it('refuses at bootstrap a @RequireScopes it cannot enforce (not on an MCP capability)', async () => {
    @Injectable()
    class Misplaced {
      @RequireScopes('payroll:read')
      helper(): string {
        return 'unprotected';
      }
    }
    @Injectable()
    @RequireScopes('payroll:read')
    class MisplacedClass {
      helper(): string {
        return 'unprotected';
      }
    }
    for (const [provider, site] of [
      [Misplaced, 'Misplaced#helper'],
      [MisplacedClass, 'MisplacedClass'],
    ] as const) {
      @Module({ imports: [McpModule.forRoot({ name: 'misplaced', version: '1.0.0' })], providers: [provider] })
      class MisplacedModule {}
      await assert.rejects(
        startApp(MisplacedModule),
        new RegExp(`@RequireScopes on "${site}" cannot be enforced: it is not on a @Tool`),
      );
    }
  });

  for (const era of ERAS) {
    describe(`${era} era`, () => {
      describe('item 18: @RequireScopes holds on every capability it decorates', () => {
        it('refuses resources/read of a class-scoped resource with 403 insufficient_scope, and serves it with the scope', async () => {
          assertInsufficientScope(
            await call(era, 'plain-token', 'resources/read', { uri: 'payroll://salaries' }),
            'payroll:read',
            'static resource',
          );
          const ok = await call(era, 'reader-token', 'resources/read', { uri: 'payroll://salaries' });
          assert.equal(ok.body.result.contents[0].text, 'alice 100, bob 90');
        });

        it('refuses a URI that a class-scoped template serves', async () => {
          assertInsufficientScope(
            await call(era, 'plain-token', 'resources/read', { uri: 'payroll://employees/7' }),
            'payroll:read',
            'template',
          );
          const ok = await call(era, 'reader-token', 'resources/read', { uri: 'payroll://employees/7' });
          assert.equal(ok.body.result.contents[0].text, 'salary of 7');
        });

        it('merges method and class scopes on a resource method', async () => {
          assertInsufficientScope(
            await call(era, 'reader-token', 'resources/read', { uri: 'payroll://audit' }),
            'payroll:read payroll:write',
            'method-level',
          );
          const ok = await call(era, 'admin-token', 'resources/read', { uri: 'payroll://audit' });
          assert.equal(ok.body.result.contents[0].text, 'audit trail');
        });

        it('refuses prompts/get of a class-scoped prompt', async () => {
          assertInsufficientScope(
            await call(era, 'plain-token', 'prompts/get', {
              name: 'payroll_review',
              arguments: { codename: 'osprey' },
            }),
            'payroll:read',
            'prompt',
          );
          const ok = await call(era, 'reader-token', 'prompts/get', {
            name: 'payroll_review',
            arguments: { codename: 'osprey' },
          });
          assert.equal(ok.body.result.messages[0].content.text, 'review osprey');
        });

        it("refuses completion/complete with the scopes of the ref's prompt or template", async () => {
          const onPrompt = {
            ref: { type: 'ref/prompt', name: 'payroll_review' },
            argument: { name: 'codename', value: '' },
          };
          const onTemplate = {
            ref: { type: 'ref/resource', uri: 'payroll://employees/{id}' },
            argument: { name: 'id', value: '' },
          };
          assertInsufficientScope(
            await call(era, 'plain-token', 'completion/complete', onPrompt),
            'payroll:read',
            'prompt completion',
          );
          assertInsufficientScope(
            await call(era, 'plain-token', 'completion/complete', onTemplate),
            'payroll:read',
            'template completion',
          );
          assert.deepEqual(
            (await call(era, 'reader-token', 'completion/complete', onPrompt)).body.result.completion.values,
            CODENAMES,
          );
          assert.deepEqual(
            (await call(era, 'reader-token', 'completion/complete', onTemplate)).body.result.completion.values,
            ['alice', 'bob'],
          );
        });

        it("leaves out of every list what the caller's scopes forbid", async () => {
          const plainTools = await names(era, 'plain-token', 'tools/list', 'tools', 'name');
          const readerTools = await names(era, 'reader-token', 'tools/list', 'tools', 'name');
          assert.ok(!plainTools.names.includes('payroll_summary'));
          assert.ok(readerTools.names.includes('payroll_summary'));
          const plainResources = await names(era, 'plain-token', 'resources/list', 'resources', 'uri');
          const readerResources = await names(era, 'reader-token', 'resources/list', 'resources', 'uri');
          assert.ok(!plainResources.names.includes('payroll://salaries'));
          assert.ok(readerResources.names.includes('payroll://salaries'));
          assert.ok(!readerResources.names.includes('payroll://audit'));
          assert.ok(plainResources.names.includes('public://readme'));
          const plainTemplates = await names(
            era,
            'plain-token',
            'resources/templates/list',
            'resourceTemplates',
            'uriTemplate',
          );
          const readerTemplates = await names(
            era,
            'reader-token',
            'resources/templates/list',
            'resourceTemplates',
            'uriTemplate',
          );
          assert.ok(!plainTemplates.names.includes('payroll://employees/{id}'));
          assert.ok(readerTemplates.names.includes('payroll://employees/{id}'));
          const plainPrompts = await names(era, 'plain-token', 'prompts/list', 'prompts', 'name');
          const readerPrompts = await names(era, 'reader-token', 'prompts/list', 'prompts', 'name');
          assert.ok(!plainPrompts.names.includes('payroll_review'));
          assert.ok(readerPrompts.names.includes('payroll_review'));
          if (era === 'modern') {
            for (const list of [plainTools, plainResources, plainTemplates, plainPrompts])
              assert.equal(list.result.cacheScope, 'private');
          }
        });

        it('holds the scopes of runtime capabilities given RequireScopes in "decorators"', async () => {
          assertInsufficientScope(
            await call(era, 'reader-token', 'tools/call', { name: 'runtime_scoped_tool', arguments: {} }),
            'payroll:write',
            'runtime tool',
          );
          assertInsufficientScope(
            await call(era, 'plain-token', 'resources/read', { uri: 'runtime://payroll' }),
            'payroll:read',
            'runtime resource',
          );
          assertInsufficientScope(
            await call(era, 'plain-token', 'prompts/get', { name: 'runtime_scoped_prompt' }),
            'payroll:read',
            'runtime prompt',
          );
          assert.equal(
            (await call(era, 'admin-token', 'tools/call', { name: 'runtime_scoped_tool', arguments: {} })).body.result
              .content[0].text,
            'scoped ran',
          );
          assert.equal(
            (await call(era, 'reader-token', 'resources/read', { uri: 'runtime://payroll' })).body.result.contents[0]
              .text,
            'runtime payroll',
          );
          assert.ok(
            !(await names(era, 'reader-token', 'tools/list', 'tools', 'name')).names.includes('runtime_scoped_tool'),
          );
          assert.ok(
            !(await names(era, 'plain-token', 'resources/list', 'resources', 'uri')).names.includes(
              'runtime://payroll',
            ),
          );
          assert.ok(
            !(await names(era, 'plain-token', 'prompts/list', 'prompts', 'name')).names.includes(
              'runtime_scoped_prompt',
            ),
          );
        });

        if (era === 'modern') {
          it('refuses subscriptions/listen to updates of a scoped URI', async () => {
            const listen = await call(era, 'plain-token', 'subscriptions/listen', {
              notifications: { resourceSubscriptions: ['public://readme', 'payroll://employees/3'] },
            });
            assertInsufficientScope(listen, 'payroll:read', 'listen');
          });
        }

        if (era === 'legacy') {
          it('refuses resources/subscribe to a scoped URI', async () => {
            assertInsufficientScope(
              await call(era, 'plain-token', 'resources/subscribe', { uri: 'payroll://salaries' }),
              'payroll:read',
              'subscribe',
            );
            const ok = await call(era, 'reader-token', 'resources/subscribe', { uri: 'payroll://salaries' });
            assert.deepEqual(ok.body.result, {});
          });
        }
      });

      describe('item 19: runtime-registered capabilities go through guards, interceptors and filters', () => {
        it('refuses a blocked principal on runtime tools as on decorated ones', async () => {
          const decorated = await call(era, 'blocked-token', 'tools/call', { name: 'public_echo', arguments: {} });
          assert.equal(decorated.body.result.isError, true);
          const runtime = await call(era, 'blocked-token', 'tools/call', { name: 'runtime_tool', arguments: {} });
          assert.equal(runtime.body.result.isError, true, JSON.stringify(runtime.body));
          assert.deepEqual(runtime.body.result.content, decorated.body.result.content);
          const allowed = await call(era, 'plain-token', 'tools/call', { name: 'runtime_tool', arguments: {} });
          assert.equal(allowed.body.result.content[0].text, 'runtime ran');
        });

        it('refuses a blocked principal on runtime resources, templates and prompts', async () => {
          const decorated = await call(era, 'blocked-token', 'resources/read', { uri: 'public://readme' });
          assert.ok(decorated.body.error, JSON.stringify(decorated.body));
          for (const [method, params] of [
            ['resources/read', { uri: 'runtime://status' }],
            ['resources/read', { uri: 'runtime://items/3' }],
            ['prompts/get', { name: 'runtime_prompt', arguments: { codename: 'osprey' } }],
          ] as const) {
            const refused = await call(era, 'blocked-token', method, params);
            assert.deepEqual(refused.body.error, decorated.body.error, `${method} ${JSON.stringify(params)}`);
            const allowed = await call(era, 'plain-token', method, params);
            assert.ok(allowed.body.result, JSON.stringify(allowed.body));
          }
        });

        it('runs global interceptors and exception filters around runtime handlers', async () => {
          const before = seen.length;
          await call(era, 'plain-token', 'tools/call', { name: 'runtime_tool', arguments: {} });
          await call(era, 'plain-token', 'resources/read', { uri: 'runtime://status' });
          assert.deepEqual(seen.slice(before), ['tools/call runtime_tool', 'resources/read runtime://status']);
          const filtered = await call(era, 'plain-token', 'tools/call', { name: 'runtime_ledger', arguments: {} });
          assert.deepEqual(filtered.body.result.content, [{ type: 'text', text: 'ledger closed: year end' }]);
          assert.equal(filtered.body.result.isError, true);
        });

        it('applies guards given in "decorators" to runtime tools and templates, in calls, lists and completions', async () => {
          const refused = await call(era, 'plain-token', 'tools/call', { name: 'runtime_admin_tool', arguments: {} });
          assert.equal(refused.body.result.isError, true);
          assert.equal(
            (await call(era, 'scopeless-admin-token', 'tools/call', { name: 'runtime_admin_tool', arguments: {} })).body
              .result.content[0].text,
            'admin ran',
          );
          assert.ok(
            !(await names(era, 'plain-token', 'tools/list', 'tools', 'name')).names.includes('runtime_admin_tool'),
          );
          assert.ok(
            (await names(era, 'scopeless-admin-token', 'tools/list', 'tools', 'name')).names.includes(
              'runtime_admin_tool',
            ),
          );
          const read = await call(era, 'plain-token', 'resources/read', { uri: 'runtime://vault/osprey' });
          assert.ok(read.body.error, JSON.stringify(read.body));
          const completion = await call(era, 'plain-token', 'completion/complete', {
            ref: { type: 'ref/resource', uri: 'runtime://vault/{codename}' },
            argument: { name: 'codename', value: '' },
          });
          assert.deepEqual(completion.body.error, read.body.error);
          assert.ok(
            !(
              await names(era, 'plain-token', 'resources/templates/list', 'resourceTemplates', 'uriTemplate')
            ).names.includes('runtime://vault/{codename}'),
          );
          const admin = await call(era, 'scopeless-admin-token', 'completion/complete', {
            ref: { type: 'ref/resource', uri: 'runtime://vault/{codename}' },
            argument: { name: 'codename', value: 'b' },
          });
          assert.deepEqual(
            admin.body.result.completion.values,
            ['bluebird', 'nightjar', 'osprey'],
            'the completer itself does not filter',
          );
          assert.equal(
            (await call(era, 'scopeless-admin-token', 'resources/read', { uri: 'runtime://vault/osprey' })).body.result
              .contents[0].text,
            'vault osprey',
          );
        });

        it('hides runtime capabilities from a principal the global guard refuses', async () => {
          assert.deepEqual((await names(era, 'blocked-token', 'tools/list', 'tools', 'name')).names, []);
          assert.deepEqual((await names(era, 'blocked-token', 'resources/list', 'resources', 'uri')).names, []);
          assert.deepEqual(
            (await names(era, 'blocked-token', 'resources/templates/list', 'resourceTemplates', 'uriTemplate')).names,
            [],
          );
          assert.deepEqual((await names(era, 'blocked-token', 'prompts/list', 'prompts', 'name')).names, []);
          assert.ok((await names(era, 'plain-token', 'tools/list', 'tools', 'name')).names.includes('runtime_tool'));
        });
      });

      describe("item 20: completions and lists run the target's guards", () => {
        it("refuses completion of a guarded prompt's argument with the error prompts/get gives, leaking no value", async () => {
          for (const prompt of ['admin_prompt', 'codename_brief']) {
            const get = await call(era, 'plain-token', 'prompts/get', {
              name: prompt,
              arguments: { codename: 'osprey' },
            });
            assert.ok(get.body.error, JSON.stringify(get.body));
            const completion = await call(era, 'plain-token', 'completion/complete', {
              ref: { type: 'ref/prompt', name: prompt },
              argument: { name: 'codename', value: '' },
            });
            assert.deepEqual(completion.body.error, get.body.error, prompt);
            assert.doesNotMatch(JSON.stringify(completion.body), /bluebird|nightjar|osprey/);
            const admin = await call(era, 'scopeless-admin-token', 'completion/complete', {
              ref: { type: 'ref/prompt', name: prompt },
              argument: { name: 'codename', value: 'n' },
            });
            assert.deepEqual(admin.body.result.completion.values, ['nightjar']);
          }
        });

        it("refuses completion of a guarded template's variable with the error resources/read gives", async () => {
          const read = await call(era, 'plain-token', 'resources/read', { uri: 'secret://plans/osprey' });
          assert.ok(read.body.error, JSON.stringify(read.body));
          const completion = await call(era, 'plain-token', 'completion/complete', {
            ref: { type: 'ref/resource', uri: 'secret://plans/{codename}' },
            argument: { name: 'codename', value: '' },
          });
          assert.deepEqual(completion.body.error, read.body.error);
          const blocked = await call(era, 'blocked-token', 'completion/complete', {
            ref: { type: 'ref/resource', uri: 'runtime://items/{id}' },
            argument: { name: 'id', value: '' },
          });
          assert.ok(blocked.body.error, JSON.stringify(blocked.body));
          assert.doesNotMatch(JSON.stringify(blocked.body), /"one"|"two"/);
          const admin = await call(era, 'scopeless-admin-token', 'completion/complete', {
            ref: { type: 'ref/resource', uri: 'secret://plans/{codename}' },
            argument: { name: 'codename', value: 'o' },
          });
          assert.deepEqual(admin.body.result.completion.values, ['osprey']);
        });

        it('leaves guarded prompts, resources and templates out of the lists of callers the guards refuse', async () => {
          const userPrompts = await names(era, 'plain-token', 'prompts/list', 'prompts', 'name');
          const adminPrompts = await names(era, 'scopeless-admin-token', 'prompts/list', 'prompts', 'name');
          for (const guarded of ['admin_prompt', 'codename_brief']) {
            assert.ok(!userPrompts.names.includes(guarded), guarded);
            assert.ok(adminPrompts.names.includes(guarded), guarded);
          }
          assert.ok(userPrompts.names.includes('public_prompt'));
          const userResources = await names(era, 'plain-token', 'resources/list', 'resources', 'uri');
          const adminResources = await names(era, 'scopeless-admin-token', 'resources/list', 'resources', 'uri');
          for (const guarded of ['admin://report', 'secret://plans']) {
            assert.ok(!userResources.names.includes(guarded), guarded);
            assert.ok(adminResources.names.includes(guarded), guarded);
          }
          const userTemplates = await names(
            era,
            'plain-token',
            'resources/templates/list',
            'resourceTemplates',
            'uriTemplate',
          );
          const adminTemplates = await names(
            era,
            'scopeless-admin-token',
            'resources/templates/list',
            'resourceTemplates',
            'uriTemplate',
          );
          assert.ok(!userTemplates.names.includes('secret://plans/{codename}'));
          assert.ok(adminTemplates.names.includes('secret://plans/{codename}'));
          if (era === 'modern') {
            for (const list of [userPrompts, userResources, userTemplates])
              assert.equal(list.result.cacheScope, 'private');
          }
        });

        it('shows an unguarded public list entry to everyone the global guard admits', async () => {
          assert.ok(
            (await names(era, 'plain-token', 'resources/list', 'resources', 'uri')).names.includes('runtime://status'),
          );
        });

        it('tells a listing probe from a call (McpExecutionContext.isListing)', async () => {
          assert.ok((await names(era, 'plain-token', 'prompts/list', 'prompts', 'name')).names.includes('listed_only'));
          const get = await call(era, 'plain-token', 'prompts/get', { name: 'listed_only' });
          assert.ok(get.body.error, JSON.stringify(get.body));
        });
      });
    });
  }
});
