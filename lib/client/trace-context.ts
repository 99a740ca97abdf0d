import type * as OtelApi from '@opentelemetry/api';

let api: typeof OtelApi | null | undefined;
let loading: Promise<void> | undefined;

/** Loads `@opentelemetry/api` if installed; without it no trace context is sent. */
export function loadTraceApi(): Promise<void> {
  loading ??= import('@opentelemetry/api').then(
    (loaded) => {
      api = loaded as typeof OtelApi;
    },
    () => {
      api = null;
    },
  );
  return loading;
}

/**
 * `traceparent` (and `tracestate`) of the active span, for `_meta`, so the upstream's spans join
 * the caller's trace. Built from the span context directly: it needs no propagator registered.
 */
export function traceMeta(): Record<string, string> | undefined {
  if (!api) return undefined;
  const span = api.trace.getSpan(api.context.active());
  const context = span?.spanContext();
  if (!context || !api.trace.isSpanContextValid(context)) return undefined;
  const meta: Record<string, string> = {
    traceparent: `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`,
  };
  const state = context.traceState?.serialize();
  if (state) meta.tracestate = state;
  return meta;
}
