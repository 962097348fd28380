/**
 * Trace and span ids derived from an invocation id, and W3C `traceparent` text.
 *
 * One invocation is one trace however many processes continue it, hours apart: its trace id is
 * the first 16 bytes of SHA-256("weft.trace\0" + id), and its invocation span's id the first 8
 * bytes of SHA-256("weft.invocation\0" + id). Every process segment (run, resume, approve, …) is a
 * child of that span by id alone, so no process needs to have seen another's spans. The invocation
 * span itself is exported once, when the invocation ends: the provider Weft builds (setup.ts) takes
 * its ids from `forcedIds` for that one span (an SDK's ids are otherwise random).
 */
import { createHash } from 'node:crypto';

const hex = (label: string, id: string, bytes: number): string => {
  const out = createHash('sha256').update(`${label}\0${id}`).digest('hex').slice(0, bytes * 2);
  // An all-zero id is invalid in W3C trace context; SHA-256 practically never gives one, but never is better.
  return /^0+$/.test(out) ? `${out.slice(0, -1)}1` : out;
};

/** The trace id of invocation `id` (32 hex digits). */
export function traceIdOf(invocation: string): string {
  return hex('weft.trace', invocation, 16);
}

/** The span id of invocation `id`'s own span, the parent of each of its process segments (16 hex digits). */
export function invocationSpanIdOf(invocation: string): string {
  return hex('weft.invocation', invocation, 8);
}

/** A `traceparent` header value (version 00) for a span context. */
export function formatTraceparent(ctx: { traceId: string; spanId: string; traceFlags: number }): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${(ctx.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A `traceparent` read back, or undefined when it is not one (never throws: it came in a job payload). */
export function parseTraceparent(text: unknown): { traceId: string; spanId: string; traceFlags: number } | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(text);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16) };
}

/**
 * Ids the next span started must take (Weft's own provider reads them: setup.ts): set only around
 * one synchronous `startSpan` call, so no other span can take them.
 */
let forced: { traceId: string; spanId: string } | undefined;

export function forcedIds(): { traceId: string; spanId: string } | undefined {
  return forced;
}

export function withForcedIds<T>(ids: { traceId: string; spanId: string }, start: () => T): T {
  forced = ids;
  try {
    return start();
  } finally {
    forced = undefined;
  }
}
