/**
 * The journal's records as a list: each line's seq, kind, epoch, time and one-line summary
 * (record-summary.ts), expandable to its hash, prev, writer, worker and pretty-printed body. A line
 * that is not JSON is shown as text; with a failed verification, the first bad record and those
 * after it are flagged. Drawn from the lines themselves, on an invocation's page and for a dropped
 * journal or bundle (offline-run.ts). Untrusted text reaches the DOM as text only (dom.ts).
 */
import { cut, el } from './dom.js';
import { isSadKind, recordSummary } from './record-summary.js';
import type { LineRecord } from './wire.js';

/** A record's one line (record-summary.ts), cut for the row; the whole body is under it. */
function summaryOf(rec: LineRecord): HTMLElement {
  return el('span', { class: `gist record-summary${isSadKind(rec.kind) ? ' rejected' : ''}` }, cut(recordSummary(rec.kind, rec.body), 220));
}

/** The journal's lines as the page received them; a line that is not JSON is shown as text. */
export function journalList(text: string, badSeq: number | null): HTMLElement {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const items = lines.map((line, i) => {
    let rec: LineRecord | undefined;
    try {
      rec = JSON.parse(line) as LineRecord;
    } catch {
      rec = undefined;
    }
    const bad = badSeq !== null && i === badSeq;
    const after = badSeq !== null && i > badSeq;
    const summary = el(
      'summary',
      {},
      el('span', { class: 'num seq' }, i),
      el('span', { class: `mono kind${rec && /\.(rejected|failed)$/.test(String(rec.kind)) ? ' sad' : ''}` }, rec ? String(rec.kind) : '(not JSON)'),
      el('span', { class: 'epoch-tag' }, rec && rec.epoch !== undefined ? `epoch ${String(rec.epoch)}` : ''),
      el('span', { class: 'at' }, rec?.meta?.at !== undefined ? String(rec.meta.at) : ''),
      rec ? summaryOf(rec) : null,
      bad ? el('span', { class: 'flag bad' }, 'first bad record') : after ? el('span', { class: 'flag after' }, 'after the bad record') : null,
    );
    const detail = rec
      ? el(
          'dl',
          {},
          el('dt', {}, 'hash'),
          el('dd', { class: 'mono' }, String(rec.hash)),
          el('dt', {}, 'prev'),
          el('dd', { class: 'mono' }, String(rec.prev)),
          rec.meta?.writer !== undefined ? el('dt', {}, 'writer') : null,
          rec.meta?.writer !== undefined ? el('dd', { class: 'mono' }, String(rec.meta.writer)) : null,
          rec.meta?.worker !== undefined ? el('dt', {}, 'worker') : null,
          rec.meta?.worker !== undefined ? el('dd', { class: 'mono' }, String(rec.meta.worker)) : null,
          el('dt', {}, 'body'),
          el('dd', {}, el('pre', {}, JSON.stringify(rec.body, null, 2))),
        )
      : el('pre', {}, line);
    return el('li', {}, el('details', { class: bad ? 'record bad' : 'record' }, summary, detail));
  });
  return el('section', { class: 'journal' }, el('h2', {}, `journal — ${lines.length} record${lines.length === 1 ? '' : 's'}`), el('ol', { start: '0' }, ...items));
}

/** The journal's lines as records, one per line (a line that is not JSON is an empty one, shown as text by journalList). */
export function journalLines(text: string): LineRecord[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line) => {
    try {
      return JSON.parse(line) as LineRecord;
    } catch {
      return {};
    }
  });
}
