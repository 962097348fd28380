/**
 * How a worker's span becomes a child of the dispatch span: no active-context manager (a user may
 * have registered none; Node 20 has none of OpenTelemetry's 3.x line), but a table from a job's
 * (idempotency key, attempt) to the span context of the step attempt that dispatched it. The record
 * tracer fills it when it passes a `step.dispatched` or `compensation.dispatched` — written ahead,
 * so before the dispatcher adds the job — and the BullMQ dispatcher reads it into the job's
 * `traceparent` (queue/bullmq.ts), a field of the job payload that is never journaled.
 */
import type { SpanContext } from '@opentelemetry/api';
import { formatTraceparent } from './ids.js';

const open = new Map<string, SpanContext>();

export function rememberJob(key: string, attempt: number, ctx: SpanContext): void {
  open.set(`${key}#${attempt}`, ctx);
}

export function forgetJob(key: string, attempt: number): void {
  open.delete(`${key}#${attempt}`);
}

/** The `traceparent` a job of this attempt carries, when its dispatch is being traced. */
export function traceparentOf(key: string, attempt: number): string | undefined {
  const ctx = open.get(`${key}#${attempt}`);
  return ctx === undefined ? undefined : formatTraceparent(ctx);
}
