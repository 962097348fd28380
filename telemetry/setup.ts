/**
 * Turning tracing on: the OpenTelemetry SDK, loaded with `import()` only here and only when asked
 * (`--otel`, WEFT_OTEL=1, or `installTracing` in code), registered as the global tracer provider.
 *
 * - The SDK packages are optional peer dependencies: where they are missing, `TracingUnavailable`
 *   says which and gives the `npm i …` line.
 * - The exporter reads the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, …_TRACES_ENDPOINT,
 *   …_HEADERS, …_TIMEOUT): `OTEL_EXPORTER_OTLP_PROTOCOL` (or …_TRACES_PROTOCOL) `http/json` uses
 *   exporter-trace-otlp-http, `http/protobuf` (the default) exporter-trace-otlp-proto when it is
 *   installed (else JSON, said once); `grpc` is not offered (JSON over HTTP instead, said once).
 *   `OTEL_SERVICE_NAME` (default `weft`) and `OTEL_RESOURCE_ATTRIBUTES` name the resource.
 * - Spans go through a batch processor: a slow or failing exporter costs the run nothing (its
 *   errors go to OpenTelemetry's diagnostics, silent unless a user turns them on).
 * - `shutdown(withinMs)` flushes what is pending, waiting at most `withinMs` (the CLI: 2 s).
 * - The provider's id generator gives an invocation's own span the ids its segments name (ids.ts).
 */
import { trace } from '@opentelemetry/api';
import { forcedIds } from './ids.js';

export const SDK_PACKAGES = ['@opentelemetry/sdk-trace-base@~2.12.1', '@opentelemetry/resources@~2.12.1', '@opentelemetry/exporter-trace-otlp-http@~0.223.1', '@opentelemetry/exporter-trace-otlp-proto@~0.223.1'];

export class TracingUnavailable extends Error {
  override readonly name = 'TracingUnavailable';
}

/** Something that takes finished spans (an SDK SpanExporter, structurally). */
export interface SpanExporterLike {
  export(spans: unknown[], done: (result: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
  forceFlush?(): Promise<void>;
}

export interface TracingOptions {
  /** Where spans go; default the OTLP exporter the environment describes. */
  exporter?: SpanExporterLike;
  /** `batch` (default) or `simple` (each span exported as it ends: tests). */
  processor?: 'batch' | 'simple';
  /** Said once when the environment asks for something not offered (a protocol). */
  warn?: (line: string) => void;
}

export interface Tracing {
  /** Flush what is pending (at most `withinMs`), then stop; never throws. */
  shutdown(withinMs?: number): Promise<void>;
  forceFlush(withinMs?: number): Promise<void>;
}

async function load<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException)?.code === 'ERR_MODULE_NOT_FOUND' || (err as NodeJS.ErrnoException)?.code === 'MODULE_NOT_FOUND') {
      throw new TracingUnavailable(`tracing needs the OpenTelemetry SDK, which is not installed (${name} is missing): npm i ${SDK_PACKAGES.join(' ')}`);
    }
    throw err;
  }
}

const bounded = (work: Promise<unknown>, ms: number): Promise<void> =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
    work.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });

/** The OTLP exporter the standard variables describe. */
async function otlpExporter(warn: (line: string) => void): Promise<SpanExporterLike> {
  const protocol = (process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? process.env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol === 'http/protobuf') {
    try {
      const { OTLPTraceExporter } = await load<{ OTLPTraceExporter: new () => SpanExporterLike }>('@opentelemetry/exporter-trace-otlp-proto');
      return new OTLPTraceExporter();
    } catch (err) {
      if (!(err instanceof TracingUnavailable)) throw err;
      warn('weft: OTLP http/protobuf needs @opentelemetry/exporter-trace-otlp-proto; exporting http/json instead');
    }
  } else if (protocol !== 'http/json') {
    warn(`weft: OTEL_EXPORTER_OTLP_PROTOCOL=${protocol.slice(0, 40)} is not offered; exporting http/json instead`);
  }
  const { OTLPTraceExporter } = await load<{ OTLPTraceExporter: new () => SpanExporterLike }>('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter();
}

/**
 * Register Weft's tracer provider globally (replacing none a user registered: an existing global
 * provider is kept and used as it is, and this returns a no-op handle). Throws TracingUnavailable
 * when the SDK is not installed.
 */
export async function installTracing(options: TracingOptions = {}): Promise<Tracing> {
  const sdk = await load<typeof import('@opentelemetry/sdk-trace-base')>('@opentelemetry/sdk-trace-base');
  const resources = await load<typeof import('@opentelemetry/resources')>('@opentelemetry/resources');
  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  const exporter = options.exporter ?? (await otlpExporter(warn));
  const random = new sdk.RandomIdGenerator();
  const idGenerator = {
    generateTraceId: () => forcedIds()?.traceId ?? random.generateTraceId(),
    generateSpanId: () => forcedIds()?.spanId ?? random.generateSpanId(),
  };
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    .merge(resources.resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || 'weft' }));
  const processor = options.processor === 'simple' ? new sdk.SimpleSpanProcessor(exporter as never) : new sdk.BatchSpanProcessor(exporter as never);
  const provider = new sdk.BasicTracerProvider({ resource, idGenerator, spanProcessors: [processor] });
  if (!trace.setGlobalTracerProvider(provider)) {
    await provider.shutdown().catch(() => undefined);
    return { shutdown: async () => undefined, forceFlush: async () => undefined };
  }
  return {
    forceFlush: (withinMs = 2_000) => bounded(provider.forceFlush(), withinMs),
    shutdown: async (withinMs = 2_000) => {
      await bounded(provider.forceFlush(), withinMs);
      void provider.shutdown().catch(() => undefined);
      trace.disable();
    },
  };
}
