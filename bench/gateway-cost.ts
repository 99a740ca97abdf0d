/**
 * What mounting costs: a `tools/call` of `up_echo` through a gateway (McpMountModule, the
 * gateway's pipeline, then the official client forwarding over Streamable HTTP) against the same
 * `echo` called directly on the upstream, by the same client, as a ratio of the median per-call
 * time over interleaved rounds. Sequential calls: it measures latency added, not throughput.
 *   npm run build && node dist/bench/gateway-cost.js
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { McpModule } from 'nestjs-model-context';
import { McpClient, McpClientModule, McpMountModule } from 'nestjs-model-context/client';
import { EchoTools } from './echo-tool.js';
import { count, median } from './stats.js';

const CALLS = count('BENCH_GATEWAY_CALLS', 500);
const ROUNDS = count('BENCH_GATEWAY_ROUNDS', 5);

async function listen(module: unknown): Promise<{ app: INestApplication; url: string }> {
  const app = await NestFactory.create(module as never, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/mcp` };
}

@Module({ imports: [McpModule.forRoot({ name: 'upstream', version: '1' })], providers: [EchoTools] })
class UpstreamModule {}
const upstream = await listen(UpstreamModule);

@Module({
  imports: [
    McpModule.forRoot({ name: 'gateway', version: '1' }),
    McpClientModule.forRoot({ clients: [{ name: 'upstream', transport: { type: 'http', url: upstream.url } }] }),
    McpMountModule.forRoot({ mounts: [{ client: 'upstream', prefix: 'up_' }] }),
  ],
})
class GatewayModule {}
const gateway = await listen(GatewayModule);

const direct = new McpClient({ name: 'direct', transport: { type: 'http', url: upstream.url } });
const mounted = new McpClient({ name: 'mounted', transport: { type: 'http', url: gateway.url } });

async function perCall(client: McpClient, tool: string): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) await client.callTool(tool, { text: 'hi' });
  return Number(process.hrtime.bigint() - start) / 1000 / CALLS;
}

for (let i = 0; i < 200; i++) {
  await direct.callTool('echo', { text: 'hi' });
  await mounted.callTool('up_echo', { text: 'hi' });
}
const directs: number[] = [];
const mounteds: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // Alternate the order so a drift of the machine weighs on both alike.
  if (round % 2 === 0) {
    directs.push(await perCall(direct, 'echo'));
    mounteds.push(await perCall(mounted, 'up_echo'));
  } else {
    mounteds.push(await perCall(mounted, 'up_echo'));
    directs.push(await perCall(direct, 'echo'));
  }
}
const d = median(directs);
const m = median(mounteds);
console.log(
  `Gateway proxy overhead (2026-07-28 tools/call over Streamable HTTP, sequential): direct ${d.toFixed(0)} µs, mounted ${m.toFixed(0)} µs per call, ratio ${(m / d).toFixed(2)}×`,
);
await direct.close();
await mounted.close();
await gateway.app.close();
await upstream.app.close();
