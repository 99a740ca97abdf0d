/**
 * Issue 29's acceptance on the 300-tool enterprise catalog (bench/tool-catalog.ts): progressive
 * `tools/list` costs at most 3% of the full list's tokens (gpt-tokenizer), and a scripted agent
 * (no model) finds and calls each of 30 named tools in at most 3 requests, counted by the server,
 * through the official SDK v1 (2025-11-25) and v2 (2026-07-28) clients and the Vercel AI SDK
 * client on both eras, in a client that lists once per tool and never re-lists on list_changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { McpEvents, type McpRequestFinishedEvent } from 'nestjs-model-context/telemetry';
import { AGENT_CLIENTS, allTools, findAndCall, tokensOf } from '../../bench/scripted-agent.js';
import { EnterpriseCatalogModule, NAMED_TOOLS } from '../../bench/tool-catalog.js';
import { startApp, type RunningApp } from '../utils/app.js';

describe('tool sets: the 300-tool catalog through real agent clients', () => {
  let app: RunningApp;
  const finished: McpRequestFinishedEvent[] = [];
  before(async () => {
    app = await startApp(EnterpriseCatalogModule.register());
    app.app.get(McpEvents).events$.subscribe((event) => event.type === 'request.finished' && finished.push(event));
  });
  after(() => app.close());

  it("progressive tools/list is at most 3% of the full list's tokens", async () => {
    const full = await allTools(app.url);
    const progressive = await allTools(`${app.url}?mode=progressive`);
    assert.equal(full.length, 300);
    assert.equal(progressive.length, 5);
    const ratio = tokensOf(progressive) / tokensOf(full);
    console.log(`tokens: full ${tokensOf(full)}, progressive ${tokensOf(progressive)} (${(ratio * 100).toFixed(2)}%)`);
    assert.ok(ratio <= 0.03, `progressive is ${(ratio * 100).toFixed(2)}% of full`);
  });

  for (const { label, connect } of AGENT_CLIENTS) {
    it(`${label}: finds and calls each of the 30 named tools in at most 3 requests`, async () => {
      const client = await connect(`${app.url}?mode=progressive`);
      try {
        assert.equal(
          client.protocolVersion,
          label.includes('2025-11-25') ? '2025-11-25' : '2026-07-28',
          'the era the label names',
        );
        assert.equal(NAMED_TOOLS.length, 30);
        for (const target of NAMED_TOOLS) {
          const before = finished.length;
          const run = await findAndCall(client, target);
          assert.ok(run.found && run.called, `${target}: ${JSON.stringify(run)}`);
          const served = finished
            .slice(before)
            .filter((event) => event.method === 'tools/list' || event.method === 'tools/call');
          assert.ok(served.length <= 3 && run.requests <= 3, `${target}: ${served.length} requests`);
          // The call went through the call tool, and the server's events name the real tool.
          assert.equal(served.at(-1)?.tool, target);
          assert.equal(served.at(-1)?.outcome, 'ok');
        }
      } finally {
        await client.close();
      }
    });
  }
});
