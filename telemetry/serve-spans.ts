/**
 * The spans of a long-lived process's own work (`weft serve`, `weft worker`), beside the
 * invocations' (record-tracer.ts):
 *
 *   weft serve.poll | weft serve.repair   one listing of the open invocations (a repair brings the
 *                                         status index's open set in line first): how many were open,
 *                                         how many were taken; an error when the store did not answer
 *   weft redis.outage                     from the start of an outage of Redis to its end (a span
 *                                         held only while the outage lasts; one still under way when
 *                                         the process stops is ended then, marked `ongoing`)
 *
 * No error message is put in a span (it may name the store's URL); only which part failed.
 * Without a tracer provider each costs one no-op span.
 */
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { weftTracer } from './record-tracer.js';

export interface PollSpan {
  /** The listing answered: `open` invocations listed. */
  listed(open: number): void;
  /** The listing failed (the store did not answer). */
  failed(): void;
  /** One listed invocation was taken (resumed, its timer fired, …). */
  took(): void;
  /** The poll's work is done (after taking what it took). */
  end(): void;
}

const NO_POLL: PollSpan = { listed: () => undefined, failed: () => undefined, took: () => undefined, end: () => undefined };

/** Start the span of one poll (`repair`: the listing repairs the open set first). */
export function startPollSpan(repair: boolean): PollSpan {
  let span: Span;
  try {
    span = weftTracer().startSpan(repair ? 'weft serve.repair' : 'weft serve.poll', { kind: SpanKind.INTERNAL, attributes: { 'weft.serve.repair': repair } });
    if (!span.isRecording()) return NO_POLL;
  } catch {
    return NO_POLL;
  }
  let taken = 0;
  return {
    listed: (open) => span.setAttribute('weft.serve.open', open),
    failed: () => {
      span.setAttribute('error.type', 'store.unreachable');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the store did not answer the listing' });
    },
    took: () => {
      taken++;
    },
    end: () => {
      try {
        span.setAttribute('weft.serve.taken', taken);
        span.end();
      } catch {
        // observation only
      }
    },
  };
}

/** A span over one outage of Redis: started with it (`since`, ms since the epoch); `end` when it ends. */
export function startOutageSpan(since: number, who: string): { end(at: number, ongoing?: boolean): void } {
  try {
    const span = weftTracer().startSpan('weft redis.outage', { kind: SpanKind.INTERNAL, startTime: since, attributes: { 'weft.outage.process': who } });
    if (!span.isRecording()) return { end: () => undefined };
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'Redis out of reach' });
    return {
      end: (at, ongoing = false) => {
        try {
          span.setAttributes({ 'weft.outage.ms': Math.max(0, at - since), 'weft.outage.ongoing': ongoing });
          span.end(at);
        } catch {
          // observation only
        }
      },
    };
  } catch {
    return { end: () => undefined };
  }
}
