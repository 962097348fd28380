/**
 * Weft's telemetry, the public face: OpenTelemetry traces (spans from records as they are written:
 * record-tracer.ts; a worker's span under its dispatch: worker-span.ts), turned on with
 * `installTracing` (setup.ts; the SDK is an optional peer, loaded only then) or by registering any
 * tracer provider of your own; a process's own work (serve's polls and outages: serve-spans.ts; the viewer's
 * requests: http-span.ts; `weft mine`: mine-span.ts); Prometheus metrics and health (metrics.ts, metrics-server.ts).
 * The effect side only: the replay side (htn/, machines/, journal/, mining/, policy/) never imports it.
 */
export { installTracing, TracingUnavailable, SDK_PACKAGES, type Tracing, type TracingOptions, type SpanExporterLike } from './setup.js';
export { traceIdOf, invocationSpanIdOf, formatTraceparent, parseTraceparent } from './ids.js';
export { SEMCONV_VERSION, GEN_AI, WEFT as WEFT_ATTRIBUTES } from './semconv.js';
export { METRICS, metricsText } from './metrics.js';
export { startMetricsEndpoint, type MetricsEndpoint, type MetricsEndpointOptions } from './metrics-server.js';
export { setProcessSegment } from './segment.js';
