/**
 * The runtime's one hook into telemetry (runtime/executor.ts calls it for each run of a machine):
 * the run's records, as the recorder passes them, go to the metrics (record-metrics.ts) and — when a
 * tracer provider is registered — to a segment tracer (record-tracer.ts); the run's settling ends
 * the segment. Nothing here can throw into the run, and nothing it does is written anywhere.
 */
import type { EventEmitter } from 'node:events';
import type { JournalRecord } from '../journal/records.js';
import { RecordMetrics } from './record-metrics.js';
import { SegmentTracer, type SegmentInfo } from './record-tracer.js';

/** What a run's segment is traced with; `marks` and `forkOf` are read only when it is traced. */
export type ObservedRun = SegmentInfo;

export function observeRun(handle: EventEmitter & { done: Promise<{ status: string; fingerprint?: string; reason?: string }> }, run: ObservedRun): void {
  const metrics = new RecordMetrics();
  let tracer: SegmentTracer | undefined;
  try {
    tracer = SegmentTracer.start(run);
  } catch {
    tracer = undefined;
  }
  handle.on('record', (record: JournalRecord, replayed: boolean) => {
    try {
      metrics.onRecord(record, replayed);
      tracer?.onRecord(record, replayed);
    } catch {
      // Observation only: a telemetry fault never reaches the run.
    }
  });
  if (tracer) {
    const t = tracer;
    handle.done.then(
      (result) => safely(() => t.finish(result)),
      (err: unknown) => safely(() => t.finish({ status: 'suspended', reason: err instanceof Error ? err.message : String(err) })),
    );
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // as above
  }
}
