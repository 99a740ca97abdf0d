/**
 * `npm run bench:expose`: the CPU a tools/call of an exposed route costs, next to the same work
 * as a `@Tool()` method, on Express and on Fastify. A route tool's call is a request injected
 * through the app's HTTP adapter (light-my-request on Express, Fastify's inject()), so it pays
 * for the HTTP machinery an HTTP client's request pays for: the router, middleware, body parsing,
 * JSON serialization of the answer. In process (McpInProcessTransport), process.cpuUsage over
 * many calls, in paired rounds that alternate which tool goes first; the median per side.
 *
 * Environment: BENCH_EXPOSE_CALLS calls per side per round (default 2000), BENCH_EXPOSE_ROUNDS
 * rounds (default 11).
 */
import 'reflect-metadata';
import { Controller, Get, Injectable, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { lastValueFrom } from 'rxjs';
import { IsString } from 'class-validator';
import { Args, McpModule, Tool } from 'nestjs-model-context';
import { McpInProcessTransport } from 'nestjs-model-context/transports';
import { count, median } from './stats.js';

class ItemDto {
  @IsString()
  id!: string;
}

@Controller('items')
class ItemsController {
  @Get(':id')
  one(@Param('id') id: string): { id: string; label: string } {
    return { id, label: `item ${id}` };
  }
}

@Injectable()
class ItemTools {
  @Tool({ description: 'One item by id.' })
  item(@Args() { id }: ItemDto): { id: string; label: string } {
    return { id, label: `item ${id}` };
  }
}

@Module({
  imports: [
    McpModule.forRoot({ name: 'route-cost', version: '1', expose: { routes: [{ controllers: [ItemsController] }] } }),
  ],
  controllers: [ItemsController],
  providers: [ItemTools],
})
class CostModule {}

const CALLS = count('BENCH_EXPOSE_CALLS', 2000);
const ROUNDS = count('BENCH_EXPOSE_ROUNDS', 11);
const _meta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

for (const platform of ['express', 'fastify'] as const) {
  const adapter = platform === 'fastify' ? new (await import('@nestjs/platform-fastify')).FastifyAdapter() : undefined;
  const app = adapter
    ? await NestFactory.create(CostModule, adapter, { logger: false })
    : await NestFactory.create(CostModule, { logger: false });
  await app.init();
  const transport = McpInProcessTransport.forApp(app);
  let id = 0;
  const cpuPerCall = async (name: 'one' | 'item'): Promise<number> => {
    const start = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) {
      const answer = (await lastValueFrom(
        transport.send({
          jsonrpc: '2.0',
          id: ++id,
          method: 'tools/call',
          params: { name, arguments: { id: 'A1' }, _meta },
        }),
      )) as { result?: { isError?: boolean } };
      if (!answer.result || answer.result.isError) throw new Error(`${name} failed: ${JSON.stringify(answer)}`);
    }
    const used = process.cpuUsage(start);
    return (used.user + used.system) / CALLS;
  };
  await cpuPerCall('one');
  await cpuPerCall('item');
  const route: number[] = [];
  const tool: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      route.push(await cpuPerCall('one'));
      tool.push(await cpuPerCall('item'));
    } else {
      tool.push(await cpuPerCall('item'));
      route.push(await cpuPerCall('one'));
    }
  }
  transport.close();
  await app.close();
  console.log(
    `${platform}: route tool ${median(route).toFixed(1)} µs, @Tool() ${median(tool).toFixed(1)} µs of CPU per tools/call (median of ${ROUNDS} paired rounds × ${CALLS} calls)`,
  );
}
