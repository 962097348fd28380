/**
 * `weft mine` traced (cli/commands/mine.ts; mining/ itself stays free of OpenTelemetry): one span
 * `weft mine` over the judging of the candidates, with how many gap-path epochs and recorded
 * decompositions it read, how many candidates were accepted and how many were not, by verdict
 * (`weft.mine.verdict.<verdict>`), and one `mine.candidate` event per candidate with its verdict.
 * No goal, task or reason text is put in the span: they came from a model.
 */
import { SpanKind, type Attributes } from '@opentelemetry/api';
import { weftTracer } from './record-tracer.js';

interface MineReportShape {
  base: string;
  accepted: number;
  checkedEpochs: number;
  candidates: ReadonlyArray<{ verdict: string }>;
}

/** Start the span now; `end` with what the mining found. */
export function startMineSpan(): { end(result: { gaps: number; corpus: number; report: MineReportShape; library: string }): void } {
  try {
    const span = weftTracer().startSpan('weft mine', { kind: SpanKind.INTERNAL });
    if (!span.isRecording()) return { end: () => undefined };
    return {
      end: ({ gaps, corpus, report, library }) => {
        try {
          const byVerdict = new Map<string, number>();
          for (const c of report.candidates) byVerdict.set(c.verdict, (byVerdict.get(c.verdict) ?? 0) + 1);
          const attributes: Attributes = {
            'weft.library.digest': report.base,
            'weft.mine.library': library,
            'weft.mine.gap_epochs': gaps,
            'weft.mine.corpus_epochs': corpus,
            'weft.mine.checked': report.checkedEpochs,
            'weft.mine.candidates': report.candidates.length,
            'weft.mine.accepted': report.accepted,
            'weft.mine.rejected': report.candidates.length - report.accepted,
          };
          for (const [verdict, n] of [...byVerdict].sort(([a], [b]) => (a < b ? -1 : 1))) attributes[`weft.mine.verdict.${verdict}`] = n;
          span.setAttributes(attributes);
          report.candidates.forEach((c, i) => span.addEvent('mine.candidate', { 'weft.mine.candidate.index': i, 'weft.mine.verdict': c.verdict }));
          span.end();
        } catch {
          // observation only
        }
      },
    };
  } catch {
    return { end: () => undefined };
  }
}
