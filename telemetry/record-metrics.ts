/**
 * Metrics from records (metrics.ts), counted as the recorder writes them — never for records read
 * back: step attempts by outcome and their latency (dispatch to outcome), model calls by outcome and
 * their latency, and refusals. Works whether or not anything traces.
 */
import type { JournalRecord } from '../journal/records.js';
import { METRICS } from './metrics.js';

export class RecordMetrics {
  private readonly started = new Map<string, { at: number; label: string }>();

  onRecord(record: JournalRecord, replayed: boolean): void {
    if (replayed) return;
    const body = record.body as Record<string, unknown>;
    const now = performance.now();
    switch (record.kind) {
      case 'model.requested':
        this.started.set(`model:${body.purpose as string}#${body.attempt as number}`, { at: now, label: body.purpose as string });
        break;
      case 'model.completed':
      case 'model.failed': {
        const open = this.take(`model:${body.purpose as string}#${body.attempt as number}`);
        METRICS.modelCalls.inc({ purpose: body.purpose as string, outcome: record.kind === 'model.completed' ? (body.refused ? 'refused' : 'ok') : (body.class as string) });
        if (open) METRICS.modelSeconds.observe({ purpose: open.label }, (now - open.at) / 1000);
        break;
      }
      case 'step.dispatched':
        this.started.set(`step:${body.key as string}#${body.attempt as number}`, { at: now, label: body.actuator as string });
        break;
      case 'step.refused':
        METRICS.refusals.inc({ code: body.code as string });
        break;
      case 'step.completed':
      case 'step.failed': {
        const open = this.take(`step:${body.key as string}#${body.attempt as number}`);
        const actuator = open?.label ?? 'unknown';
        METRICS.steps.inc({ actuator, outcome: record.kind === 'step.completed' ? 'ok' : (body.class as string) });
        if (open) METRICS.stepSeconds.observe({ actuator }, (now - open.at) / 1000);
        break;
      }
      default:
        break;
    }
  }

  /** The start of the call or attempt `id` names, forgotten as it is read. */
  private take(id: string): { at: number; label: string } | undefined {
    const open = this.started.get(id);
    this.started.delete(id);
    return open;
  }
}
