/**
 * How a worker's span becomes a child of the dispatch span: no active-context manager (a user may
 * have registered none; Node 20 has none of OpenTelemetry's 3.x line), but a table from a job's
 * (idempotency key, attempt) to the span context of the step attempt that dispatched it. The record
 * tracer fills it when it passes a `step.dispatched` or `compensation.dispatched` — written ahead,
 * so before the dispatcher adds the job — and the BullMQ dispatcher reads it into the job's
 * `traceparent` (queue/bullmq.ts), a field of the job payload that is never journaled.
 *
 * The table is kept only once a dispatcher that sends jobs elsewhere asked for it (`wantJobContexts`):
 * a run whose steps are done in-process pays nothing per step for it.
 */
import type { SpanContext } from '@opentelemetry/api';
import { formatTraceparent } from './ids.js';

const open = new Map<string, { spanContext(): SpanContext }>();
let wanted = false;

/** A dispatcher that hands jobs to other processes needs their traceparents from now on (queue/bullmq.ts). */
export function wantJobContexts(): void {
  wanted = true;
}

export function rememberJob(key: string, attempt: number, span: { spanContext(): SpanContext }): void {
  if (wanted) open.set(`${key}#${attempt}`, span);
}

export function forgetJob(key: string, attempt: number): void {
  if (wanted) open.delete(`${key}#${attempt}`);
}

/** The `traceparent` a job of this attempt carries, when its dispatch is being traced. */
export function traceparentOf(key: string, attempt: number): string | undefined {
  const span = open.get(`${key}#${attempt}`);
  return span === undefined ? undefined : formatTraceparent(span.spanContext());
}
