/**
 * What the Nest pipeline (ExternalContextCreator: guards, interceptors, pipes, filters, param
 * decorators) costs a tools/call when no enhancer is declared, next to calling the method
 * directly. In-process, so it isolates the pipeline from HTTP and JSON-RPC.
 *   npm run build && node dist/bench/pipeline-cost.js
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { lastValueFrom } from 'rxjs';
import { McpModule, McpRegistry } from 'nestjs-model-context';
import { EchoDto, EchoTools } from './echo-tool.js';

@Module({ imports: [McpModule.forRoot({ name: 'pipeline-cost', version: '1' })], providers: [EchoTools] })
class CostModule {}

const app = await NestFactory.createApplicationContext(CostModule, { logger: false });
const tool = app.get(McpRegistry, { strict: false }).tool('echo')!;
const tools = app.get(EchoTools);
const dto = Object.assign(new EchoDto(), { text: 'hi' });
// The call object stands for itself (McpCall.context), as McpContext does.
const call: Record<string, unknown> = { signal: new AbortController().signal, request: undefined };
call.context = call;
const ctx = call as never;
const N = 200_000;

async function time(label: string, run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20_000; i++) await run();
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await run();
  const micros = Number(process.hrtime.bigint() - start) / 1000 / N;
  console.log(`${label}: ${micros.toFixed(2)} µs per call`);
  return micros;
}

const direct = await time('direct method call', async () => tools.echo(dto));
const piped = await time('through the Nest pipeline', () => lastValueFrom(tool.invoke(dto, { text: 'hi' }, ctx)));
const validated = await time('argument validation (DtoCaster)', async () => tool.parseArguments({ text: 'hi' }));
console.log(
  `pipeline cost: ${(piped - direct).toFixed(2)} µs per call; validation: ${validated.toFixed(2)} µs per call`,
);
await app.close();

// How fast a resource URI template matches long near-miss URIs (the spec only counts steps).
const { UriTemplate } = await import('../lib/protocol/uri-template.js');
for (const [template, uri] of [
  ['x://{+a}/x/{+b}/y', (n: number) => 'x://' + '/x/'.repeat(n / 3)],
  ['x://{a}-{b}-{c}!', (n: number) => 'x://' + '-'.repeat(n)],
  ['x://r{/segs*}/end', (n: number) => 'x://r' + '/a'.repeat(n / 2) + '/'],
] as const) {
  const t = UriTemplate.parse(template);
  const timings = [6_000, 60_000].map((n) => {
    const input = uri(n);
    for (let i = 0; i < 5; i++) t.match(input);
    const runs = 20;
    const start = process.hrtime.bigint();
    for (let i = 0; i < runs; i++) t.match(input);
    return `${input.length} chars ${(Number(process.hrtime.bigint() - start) / 1e6 / runs).toFixed(2)} ms`;
  });
  console.log(`URI template ${template} near-miss match: ${timings.join(', ')}`);
}
