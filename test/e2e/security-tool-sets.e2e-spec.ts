/**
 * Tool sets from the attacker's side. Two principals with different sets, and two anonymous
 * clients choosing sets in the URL, try to see, find, complete or call what is not theirs: lists
 * (every page, with another caller's cursor), calls alone and in a 2025-03-26 batch, tasks,
 * completion, and progressive mode's discovery tools (list sets, search, each call tool), on both
 * eras. A tool outside the caller's sets, or refused by its guards or scopes, must answer exactly
 * as a name never registered (or as the direct call's refusal), and the call tool's annotation
 * tier must not tell a refused caller anything. A failing `select` leaks nothing; its cache is
 * bounded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc } from '../utils/clients.js';
import { ENTRY_PATHS, PathClient, type EntryPath, type PathAnswer } from '../utils/paths.js';
import { McpTestClient } from 'nestjs-model-context/testing';
import { TOOL_SET_TOKENS, ToolSetsAppModule, ran } from '../fixtures/tool-sets.module.js';

type Json = Record<string, any>;

const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });
const ANN = bearer('ann-token'); // billing
const SAM = bearer('sam-token'); // crm
const EVE = bearer('eve-token'); // admin set, refused by the admin tool's guard

/** The error of a response with the tool's name masked: what an unknown-name answer looks like for any name. */
function masked(answer: PathAnswer, name: string): Json {
  assert.ok(answer.body.error, `expected an error, got ${JSON.stringify(answer.body)}`);
  const text = JSON.stringify({ status: answer.status, error: answer.body.error });
  return JSON.parse(text.split(name).join('<name>')) as Json;
}

async function assertUnknown(
  client: PathClient,
  path: EntryPath,
  headers: Record<string, string>,
  name: string,
  call: (name: string) => Json,
): Promise<void> {
  const outside = await client.call(path, 'tools/call', call(name), headers);
  const never = await client.call(path, 'tools/call', call('never_registered_tool'), headers);
  assert.deepEqual(masked(outside, name), masked(never, 'never_registered_tool'), `${path}: ${name}`);
}

const direct = (name: string): Json => ({ name, arguments: { customer: 'acme', invoiceId: 'i-9' } });
const throughCall =
  (via: string) =>
  (name: string): Json => ({ name: via, arguments: { name, arguments: { customer: 'acme', invoiceId: 'i-9' } } });

describe('security: tool sets', () => {
  describe('two principals', () => {
    let app: RunningApp;
    let progressive: RunningApp;
    before(async () => {
      app = await startApp(ToolSetsAppModule.register({ auth: true, pageSize: 2 }));
      progressive = await startApp(ToolSetsAppModule.register({ auth: true, toolSets: { mode: 'progressive' } }));
    });
    after(async () => {
      await app.close();
      await progressive.close();
    });

    it("sam never sees ann's tools on any page of any era, even with ann's cursors", async () => {
      const client = new PathClient(app.url);
      for (const path of ENTRY_PATHS) {
        const seen: string[] = [];
        let cursor: string | undefined;
        const annCursors: string[] = [];
        do {
          const page = await client.call(path, 'tools/list', cursor ? { cursor } : {}, ANN);
          cursor = page.body.result.nextCursor;
          if (cursor) annCursors.push(cursor);
        } while (cursor);
        assert.ok(annCursors.length >= 2, "ann's list has several pages");
        for (const stolen of annCursors) {
          const page = await client.call(path, 'tools/list', { cursor: stolen }, SAM);
          // Another caller's cursor pages only sam's own list, or is invalid for it.
          if (page.body.result) seen.push(...(page.body.result.tools as Json[]).map((t) => t.name));
          else assert.equal(page.body.error.code, -32602);
        }
        let own: string | undefined;
        do {
          const page = await client.call(path, 'tools/list', own ? { cursor: own } : {}, SAM);
          seen.push(...(page.body.result.tools as Json[]).map((t) => t.name));
          own = page.body.result.nextCursor;
        } while (own);
        assert.deepEqual([...new Set(seen)].sort(), ['find_customer', 'whoami'], path);
      }
    });

    it("sam calling ann's tools, alone, in a batch or as a task, gets exactly the unknown-tool answer", async () => {
      const client = new PathClient(app.url);
      for (const path of ENTRY_PATHS) {
        for (const name of ['list_invoices', 'void_invoice', 'revenue_report'])
          await assertUnknown(client, path, SAM, name, direct);
        // void_invoice needs the billing scope sam lacks: still unknown, never a 403 telling it exists.
        await assertUnknown(client, path, SAM, 'export_ledger', (name) => ({ ...direct(name), task: {} }));
      }
      assert.ok(!ran.some((entry) => entry.endsWith('i-9') || entry.endsWith(':acme')), "no handler of ann's ran");
    });

    it("the Mcp-Param-* check tells nothing of a tool outside the caller's sets (2026-07-28)", async () => {
      const args = { name: 'regional_revenue', arguments: { region: 'eu' } };
      // ann holds the tool: a call without its Mcp-Param-Region header is refused by the check.
      const ann = await modernRpc(app.url, 'tools/call', args, { headers: ANN });
      assert.equal((ann.json as Json).error.code, -32020);
      const sam = await modernRpc(app.url, 'tools/call', args, { headers: SAM });
      const never = await modernRpc(
        app.url,
        'tools/call',
        { ...args, name: 'never_registered_tool' },
        { headers: SAM },
      );
      assert.equal(sam.status, never.status);
      assert.deepEqual(
        { ...(sam.json as Json).error, message: '', data: '' },
        { ...(never.json as Json).error, message: '', data: '' },
      );
      assert.equal(
        (sam.json as Json).error.message.replace('regional_revenue', 'X'),
        (never.json as Json).error.message.replace('never_registered_tool', 'X'),
      );
      assert.ok(!ran.some((entry) => entry.startsWith('regional_revenue')));
    });

    it('completion about a tool name answers as about any unknown name', async () => {
      const client = new PathClient(app.url);
      for (const path of ENTRY_PATHS) {
        const ask = (name: string) =>
          client.call(
            path,
            'completion/complete',
            { ref: { type: 'ref/prompt', name }, argument: { name: 'customer', value: 'a' } },
            SAM,
          );
        assert.deepEqual(
          masked(await ask('list_invoices'), 'list_invoices'),
          masked(await ask('never_registered_tool'), 'never_registered_tool'),
          path,
        );
      }
    });

    it("progressive mode: sam lists only his sets, finds none of ann's tools, and no call tool reaches them", async () => {
      const client = new PathClient(progressive.url);
      for (const path of ENTRY_PATHS) {
        const sets = await client.call(path, 'tools/call', { name: 'list_tool_sets', arguments: {} }, SAM);
        assert.deepEqual(
          sets.body.result.structuredContent.sets.map((s: Json) => s.name),
          ['crm'],
          path,
        );
        for (const query of ['invoice', 'void invoice customer', 'revenue report year', 'ledger export']) {
          const found = await client.call(path, 'tools/call', { name: 'search_tools', arguments: { query } }, SAM);
          const names = (found.body.result.structuredContent.tools as Json[]).map((t) => t.name);
          assert.ok(
            names.every((name) => ['find_customer', 'whoami'].includes(name)),
            `${path} ${query}: ${names}`,
          );
        }
        const bySet = await client.call(
          path,
          'tools/call',
          { name: 'search_tools', arguments: { set: 'billing' } },
          SAM,
        );
        assert.deepEqual(
          bySet.body.result.structuredContent,
          { tools: [], total: 0 },
          'a set sam lacks finds what an unknown set finds',
        );
        for (const via of ['call_tool_read', 'call_tool_write', 'call_tool_destructive']) {
          for (const name of ['list_invoices', 'void_invoice', 'create_invoice'])
            await assertUnknown(client, path, SAM, name, throughCall(via));
        }
      }
      assert.ok(!ran.some((entry) => entry.endsWith('i-9') || entry.endsWith(':acme')));
    });

    it('search shows each principal exactly what its full list shows, no more', async () => {
      const client = new PathClient(progressive.url);
      const full = new PathClient(`${progressive.url}?mode=full`);
      for (const who of ['ann-token', 'sam-token', 'eve-token', 'root-token', 'tim-token']) {
        for (const path of ENTRY_PATHS) {
          const listed = ((await full.call(path, 'tools/list', {}, bearer(who))).body.result.tools as Json[])
            .map((t) => t.name)
            .sort();
          const found = (await client.call(path, 'tools/call', { name: 'search_tools', arguments: {} }, bearer(who)))
            .body.result.structuredContent;
          assert.deepEqual((found.tools as Json[]).map((t) => t.name).sort(), listed, `${who} ${path}`);
          assert.equal(found.total, listed.length);
        }
      }
    });

    it('a tool the guards refuse is neither listed nor found, and a milder call tool tells its refusal, not its tier', async () => {
      const client = new PathClient(progressive.url);
      for (const path of ENTRY_PATHS) {
        const found = await client.call(
          path,
          'tools/call',
          { name: 'search_tools', arguments: { query: 'delete every record tenant' } },
          EVE,
        );
        assert.ok(!(found.body.result.structuredContent.tools as Json[]).some((t) => t.name === 'purge_tenant'), path);
        const directCall = await client.call(path, 'tools/call', { name: 'purge_tenant', arguments: {} }, EVE);
        for (const via of ['call_tool_read', 'call_tool_destructive']) {
          const answer = await client.call(
            path,
            'tools/call',
            { name: via, arguments: { name: 'purge_tenant', arguments: {} } },
            EVE,
          );
          assert.deepEqual(answer.body.result, directCall.body.result, `${path} ${via}`);
          assert.equal(answer.body.result.isError, true);
          assert.doesNotMatch(JSON.stringify(answer.body), /destructive|call_tool_/);
        }
      }
      assert.ok(!ran.includes('purge_tenant'));
    });

    it('a call tool outside progressive mode is a name like any other unknown one', async () => {
      const client = new PathClient(app.url);
      for (const path of ENTRY_PATHS)
        await assertUnknown(client, path, ANN, 'call_tool_read', (name) => ({
          name,
          arguments: { name: 'list_invoices', arguments: { customer: 'acme' } },
        }));
      assert.ok(!ran.includes('list_invoices:acme'));
    });

    it("in process, on both eras: a principal sees and calls only its sets, and another's tool is unknown", async () => {
      for (const era of ['2026-07-28', '2025-11-25'] as const) {
        const sam = await McpTestClient.create(app.app, { era, principal: TOOL_SET_TOKENS['sam-token'] });
        try {
          assert.deepEqual((await sam.listTools()).map((t) => t.name).sort(), ['find_customer', 'whoami'], era);
          const outside = await sam.callTool('list_invoices', { customer: 'acme' }).then(
            () => undefined,
            (error: Error & { code?: number }) => error,
          );
          const never = await sam.callTool('never_registered_tool', { customer: 'acme' }).then(
            () => undefined,
            (error: Error & { code?: number }) => error,
          );
          assert.equal(outside?.code, -32602, era);
          assert.equal(
            outside?.message.replace('list_invoices', 'X'),
            never?.message.replace('never_registered_tool', 'X'),
          );
        } finally {
          await sam.close();
        }
      }
    });

    it('a failing select answers -32603 with a reference, and nothing of its error', async () => {
      const client = new PathClient(app.url);
      const answer = await client.call('modern', 'tools/list', {}, bearer('err-token'));
      assert.equal(answer.body.error.code, -32603);
      assert.match(answer.body.error.message, /reference [0-9a-f-]{36}/);
      assert.doesNotMatch(JSON.stringify(answer.body), /secret-dsn|unreachable/);
    });
  });

  describe('two anonymous clients', () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp(ToolSetsAppModule.register({ toolSets: { default: [], mode: 'progressive' } }));
    });
    after(() => app.close());

    it("each gets the sets its own URL names, never the other's, on every path and through discovery", async () => {
      const crm = new PathClient(`${app.url}?toolsets=crm&mode=full`);
      const billing = new PathClient(`${app.url}?toolsets=billing&mode=full`);
      const bare = new PathClient(`${app.url}?mode=full`);
      for (const path of ENTRY_PATHS) {
        // Interleaved, so that a selection kept for one request could only leak to the next.
        const [a, b, c] = await Promise.all([
          crm.call(path, 'tools/list'),
          billing.call(path, 'tools/list'),
          bare.call(path, 'tools/list'),
        ]);
        assert.deepEqual((a.body.result.tools as Json[]).map((t) => t.name).sort(), ['find_customer', 'whoami'], path);
        assert.ok(
          (b.body.result.tools as Json[]).every((t) => t.name !== 'find_customer'),
          path,
        );
        assert.deepEqual(
          (c.body.result.tools as Json[]).map((t) => t.name),
          ['whoami'],
          `${path}: the default is no set`,
        );
        await assertUnknown(crm, path, {}, 'list_invoices', direct);
        await assertUnknown(billing, path, {}, 'find_customer', (name) => ({ name, arguments: { name: 'x' } }));
      }
      const discovering = new PathClient(`${app.url}?toolsets=crm`);
      for (const path of ENTRY_PATHS) {
        const found = await discovering.call(path, 'tools/call', {
          name: 'search_tools',
          arguments: { query: 'invoice ledger revenue' },
        });
        assert.deepEqual(found.body.result.structuredContent.tools, [], path);
        await assertUnknown(discovering, path, {}, 'list_invoices', throughCall('call_tool_read'));
      }
    });

    it('a URL naming every set cannot widen what select granted a principal', async () => {
      const authed = await startApp(ToolSetsAppModule.register({ auth: true }));
      try {
        const client = new PathClient(`${authed.url}?toolsets=billing,crm,admin`);
        const answer = await client.call('modern', 'tools/list', {}, SAM);
        assert.deepEqual((answer.body.result.tools as Json[]).map((t) => t.name).sort(), ['find_customer', 'whoami']);
      } finally {
        await authed.close();
      }
    });
  });

  describe('what it holds', () => {
    it("keeps at most cache.maxPrincipals principals' sets: the oldest is asked again", async () => {
      ToolSetsAppModule.selects.clear();
      const app = await startApp(ToolSetsAppModule.register({ auth: true, toolSets: { cache: { maxPrincipals: 2 } } }));
      try {
        const client = new PathClient(app.url);
        for (const who of [ANN, SAM, ANN, EVE, ANN]) await client.call('modern', 'tools/list', {}, who);
        // ann, sam cached; ann hit; eve drops sam (the least recent); ann still cached.
        assert.deepEqual(Object.fromEntries(ToolSetsAppModule.selects), { ann: 1, sam: 1, eve: 1 });
        await client.call('modern', 'tools/list', {}, SAM);
        assert.equal(ToolSetsAppModule.selects.get('sam'), 2, 'sam was dropped at the bound and asked again');
      } finally {
        await app.close();
      }
    });
  });
});
