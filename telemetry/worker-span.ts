/**
 * A worker's part of a trace, and its job metrics: each job it takes runs under a CONSUMER span
 * that is a child of the step attempt that dispatched it — read from the job's `traceparent`
 * (job-context.ts), never from an active-context manager. A job without one (tracing off where it
 * was dispatched, an older runtime) gets no span; the metrics are counted either way.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { parseTraceparent } from './ids.js';
import { METRICS } from './metrics.js';
import { weftTracer } from './record-tracer.js';
import { GEN_AI, WEFT } from './semconv.js';

interface JobShape {
  key: string;
  attempt: number;
  actuator: string;
  op: string;
  traceparent?: string | undefined;
}

type Outcome = { ok: true } | { ok: false; failure: { class: string; code: string } };

export async function traceJob<O extends Outcome>(job: JobShape, where: { queue: string; worker: string }, run: () => Promise<O>): Promise<O> {
  const started = performance.now();
  const parent = parseTraceparent(job.traceparent);
  let span: Span | undefined;
  if (parent) {
    try {
      span = weftTracer().startSpan(
        `process ${job.actuator}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.system': 'bullmq',
            'messaging.operation.type': 'process',
            'messaging.destination.name': where.queue,
            [GEN_AI.toolName]: job.actuator,
            [WEFT.actuator]: job.actuator,
            [WEFT.key]: job.key,
            [WEFT.attempt]: job.attempt,
            [WEFT.worker]: where.worker,
            'weft.job.op': job.op,
          },
        },
        trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true }),
      );
    } catch {
      span = undefined;
    }
  }
  const done = (outcome: string, code?: string) => {
    METRICS.jobs.inc({ actuator: job.actuator, outcome });
    METRICS.jobSeconds.observe({ actuator: job.actuator }, (performance.now() - started) / 1000);
    if (!span) return;
    span.setAttribute(WEFT.stepOutcome, outcome);
    if (code !== undefined) {
      span.setAttribute('error.type', code);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  try {
    const outcome = await run();
    if (outcome.ok) done('ok');
    else done(outcome.failure.class, outcome.failure.code);
    return outcome;
  } catch (err) {
    const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'worker.error';
    if (code.startsWith('worker.')) METRICS.refusals.inc({ code });
    done('refused', code);
    throw err;
  }
}
