import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';

/** A pull reader: the test asks for the metrics when it wants them. */
class TestMetricReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

export interface InstalledOtel {
  exporter: InMemorySpanExporter;
  /** The spans ended so far. */
  spans(): ReadableSpan[];
  /** Every metric collected now, flattened. */
  metrics(): Promise<ResourceMetrics['scopeMetrics'][number]['metrics']>;
  shutdown(): Promise<void>;
}

/**
 * Registers a real OpenTelemetry SDK globally in this test process, as an app's NodeSDK would:
 * AsyncLocalStorage context, W3C trace context, in-memory spans and pull metrics.
 * `spanProcessors` run after the in-memory one (a faulty processor or exporter of the test's).
 */
export function installOtel(options: { spanProcessors?: SpanProcessor[] } = {}): InstalledOtel {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter }), ...(options.spanProcessors ?? [])],
  });
  const reader = new TestMetricReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    metrics: async () => {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    },
    shutdown: async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    },
  };
}
