// `npm run bench:tokens` (also part of `npm run bench`): the 300-tool enterprise catalog
// (bench/tool-catalog.ts) served by one app, and
// - the tokens of its tools/list in full mode and in progressive mode, counted with gpt-tokenizer
//   (o200k), over what a client hands its model: the tools array of every page;
// - a scripted agent (no model) finding and calling each of 30 named tools through the official
//   SDK v1 and v2 clients and the Vercel AI SDK client, with the requests each needed.
// Exits 1 when an acceptance line of issue 29 fails: progressive > 3% of full, or a tool not found
// and called in at most 3 requests.
//
// Environment: BENCH_DIST  compiled output holding bench/*.js (default <repo>/dist)
import 'reflect-metadata';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NestFactory } from '@nestjs/core';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = process.env.BENCH_DIST ?? join(root, 'dist');
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { EnterpriseCatalogModule, NAMED_TOOLS } = await load('bench/tool-catalog.js');
const agent = await load('bench/scripted-agent.js');

const app = await NestFactory.create(EnterpriseCatalogModule.register(), { logger: false });
await app.listen(0, '127.0.0.1');
const url = `http://127.0.0.1:${app.getHttpServer().address().port}/mcp`;
let failed = false;
try {
  const full = await agent.allTools(url);
  const progressive = await agent.allTools(`${url}?mode=progressive`);
  const fullTokens = agent.tokensOf(full);
  const progressiveTokens = agent.tokensOf(progressive);
  const ratio = progressiveTokens / fullTokens;
  console.log(`\ntools/list of the ${full.length}-tool enterprise catalog (gpt-tokenizer, o200k):`);
  console.log(`  full          ${String(fullTokens).padStart(7)} tokens  (${full.length} tools)`);
  console.log(
    `  progressive   ${String(progressiveTokens).padStart(7)} tokens  (${progressive.length} discovery tools)  = ${(ratio * 100).toFixed(2)}% of full  [acceptance: <= 3%]`,
  );
  if (ratio > 0.03) failed = true;

  console.log(
    `\nscripted agent, progressive mode: find and call each of ${NAMED_TOOLS.length} named tools (requests per tool: tools/list, search_tools, call) [acceptance: <= 3]`,
  );
  for (const { label, connect } of agent.AGENT_CLIENTS) {
    const client = await connect(`${url}?mode=progressive`);
    const runs = [];
    try {
      for (const target of NAMED_TOOLS) runs.push(await agent.findAndCall(client, target));
    } finally {
      await client.close();
    }
    const ok = runs.filter((run) => run.found && run.called && run.requests <= 3).length;
    const max = Math.max(...runs.map((run) => run.requests));
    const missed = runs.filter((run) => !(run.found && run.called && run.requests <= 3)).map((run) => run.target);
    console.log(
      `  ${label.padEnd(30)} ${ok}/${runs.length} found and called, at most ${max} requests each${missed.length ? `; missed: ${missed.join(', ')}` : ''}`,
    );
    if (missed.length) failed = true;
  }
} finally {
  await app.close();
}
if (failed) {
  console.error('\ntoken bench: an acceptance line failed (see above).');
  process.exitCode = 1;
}
