/**
 * `npm run bench:telemetry` (also run by `npm run bench`): the CPU a tools/call costs with
 * `@opentelemetry/api` installed but no SDK registered, next to `telemetry: false` (the same app
 * without its OpenTelemetry observer, swapped per round), and then with
 * a real SDK registered as NodeSDK sets one up (AsyncLocalStorage context, W3C propagator, a
 * BatchSpanProcessor, here to an in-memory exporter, and a MeterProvider with a reader). In process
 * (McpInProcessTransport), so only the server's work is counted: process.cpuUsage over many
 * calls, in paired rounds that alternate which app goes first, so drifts of the machine cancel
 * out. The figure is the median of the per-round ratios.
 *
 * Environment: BENCH_TELEMETRY_CALLS calls per side per round (default 3000),
 * BENCH_TELEMETRY_ROUNDS rounds (default 31).
 * Exits with 1 when the API-without-SDK ratio is over 1.03 (the 3% target).
 */
import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { lastValueFrom } from 'rxjs';
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, InMemorySpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { McpModule } from 'nestjs-model-context';
import { McpEvents } from 'nestjs-model-context/telemetry';
import { McpInProcessTransport } from 'nestjs-model-context/transports';
import { EchoTools } from './echo-tool.js';
import { count, median } from './stats.js';
import { MCP_DISPATCHER } from '../lib/common/mcp.constants.js';
import type { McpDispatcher } from '../lib/protocol/dispatcher.js';
import { McpObservers } from '../lib/telemetry/observer.js';

@Module({})
class CostModule {
  static register(telemetry: boolean | undefined): DynamicModule {
    return {
      module: CostModule,
      imports: [McpModule.forRoot({ name: 'telemetry-cost', version: '1', telemetry })],
      providers: [EchoTools],
    };
  }
}

const CALLS = count('BENCH_TELEMETRY_CALLS', 3000);
const ROUNDS = count('BENCH_TELEMETRY_ROUNDS', 31);

// One app, two observer sets swapped per round: exactly what `telemetry: false` leaves out (the
// OpenTelemetry sink), with no difference between two apps' heaps or JIT state in the figures.
const app = await NestFactory.createApplicationContext(CostModule.register(undefined), { logger: false });
const server = app.get<symbol, McpDispatcher>(MCP_DISPATCHER, { strict: false });
const observers = {
  on: server.observer!,
  off: new McpObservers([app.get(McpEvents).sink], 10_000, {
    method: () => true,
    tool: (name) => name,
    prompt: (name) => name,
    resource: (uri) => uri,
  }),
};
const transport = McpInProcessTransport.forApp(app);
const _meta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
let id = 0;

/** CPU microseconds per call over `CALLS` calls, with one observer set. */
async function cpuPerCall(side: 'on' | 'off'): Promise<number> {
  server.observer = observers[side];
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    await lastValueFrom(
      transport.send({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hi' }, _meta },
      }),
    );
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

/** Paired rounds, alternating which side runs first: the median off/on figures and ratio. */
async function paired(): Promise<{ off: number; on: number; ratio: number }> {
  for (const side of ['off', 'on'] as const) await cpuPerCall(side);
  const offs: number[] = [];
  const ons: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let a: number;
    let b: number;
    if (round % 2 === 0) {
      a = await cpuPerCall('off');
      b = await cpuPerCall('on');
    } else {
      b = await cpuPerCall('on');
      a = await cpuPerCall('off');
    }
    offs.push(a);
    ons.push(b);
    ratios.push(b / a);
  }
  return { off: median(offs), on: median(ons), ratio: median(ratios) };
}

const noSdk = await paired();

class PullReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}
const exporter = new InMemorySpanExporter();
const tracerProvider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter })] });
const meterProvider = new MeterProvider({ readers: [new PullReader()] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
trace.setGlobalTracerProvider(tracerProvider);
metrics.setGlobalMeterProvider(meterProvider);
// The in-memory exporter keeps every span: empty it between rounds' worth of calls.
const sweep = setInterval(() => exporter.reset(), 200);
const withSdk = await paired();
clearInterval(sweep);

transport.close();
await Promise.all([app.close(), tracerProvider.shutdown(), meterProvider.shutdown()]);

const pct = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;
console.log(`Telemetry cost per tools/call (CPU, in process, median of ${ROUNDS} paired rounds × ${CALLS} calls):`);
console.log(
  `  @opentelemetry/api, no SDK registered: ${noSdk.on.toFixed(1)} µs vs ${noSdk.off.toFixed(1)} µs without the OpenTelemetry observer (telemetry: false), ratio ${noSdk.ratio.toFixed(3)} (${pct(noSdk.ratio)}; target within 3%)`,
);
console.log(
  `  with an SDK registered (BatchSpanProcessor + MeterProvider; both sides under its AsyncLocalStorage context manager): ${withSdk.on.toFixed(1)} µs vs ${withSdk.off.toFixed(1)} µs, ratio ${withSdk.ratio.toFixed(3)} (${pct(withSdk.ratio)}, +${(withSdk.on - withSdk.off).toFixed(1)} µs per call)`,
);
if (noSdk.ratio > 1.03) process.exitCode = 1;
