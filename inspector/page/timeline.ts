/**
 * The timeline of one invocation, per epoch: every call out of the process as a row — the model's
 * exchanges (per purpose and attempt; a rejected reply with its reason, in red), the epoch's
 * observation, each step (its attempts, the backoff between them, the worker that ran each one),
 * and the compensations in the order they ran (the reverse of the steps). Durations come from the
 * records' envelope times (`meta.at`): a dispatch's write-ahead record to its completion.
 *
 * Built only from the journal's records (a prefix of them, for the time-travel slider): an attempt
 * whose completion is not yet among them is shown running up to the last record's time.
 *
 * One time axis for the whole run (`runSpanOf`: its first record to its last): every epoch's rows
 * are drawn on it, so a 36 ms epoch is a sliver beside a 2 s one, as it was, and the axis above
 * shows each epoch where it fell. Clicking an epoch (on the axis or its heading) zooms it to its own
 * scale, and again back to the run's; the zoom is kept across the redraws a live run causes. The
 * bars' positions are set through the CSSOM (`element.style`), which the page's
 * Content-Security-Policy allows (it forbids only style attributes and inline style elements). Pure
 * data first (`timelineOf`, `runSpanOf`), then the DOM.
 */
import { cut, el } from './dom.js';
import type { DescriptionView, LineRecord, PlanNodeView, PlansView } from './wire.js';

export interface Segment {
  /** ms since the epoch's start. */
  start: number;
  end: number;
  outcome: 'ok' | 'failed' | 'rejected' | 'running';
  attempt: number;
  worker: string | null;
  note: string | null;
}

export interface Row {
  kind: 'model' | 'observe' | 'step' | 'compensation';
  label: string;
  detail: string;
  segments: Segment[];
  /** Sum of the waits between an attempt's end and the next one's dispatch (ms). */
  backoffMs: number;
  outcome: Segment['outcome'];
  /** A rejected model reply's reason, or a failure's code and message. */
  reason: string | null;
}

export interface EpochTimeline {
  epoch: number;
  /** Wall time of the epoch's first record (ms since 1970), its length in ms. */
  startAt: number;
  spanMs: number;
  rows: Row[];
}

type Rec = { seq: number; kind: string; epoch: number; body: Record<string, unknown>; at: number | null; worker: string | null };

function recs(records: readonly LineRecord[]): Rec[] {
  return records
    .filter((r) => typeof r.kind === 'string' && typeof r.epoch === 'number')
    .map((r) => {
      const at = typeof r.meta?.at === 'string' ? Date.parse(r.meta.at) : NaN;
      return {
        seq: Number(r.seq),
        kind: r.kind as string,
        epoch: r.epoch as number,
        body: (r.body && typeof r.body === 'object' ? r.body : {}) as Record<string, unknown>,
        at: Number.isFinite(at) ? at : null,
        worker: typeof r.meta?.worker === 'string' ? r.meta.worker : null,
      };
    });
}

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/** Each step's task as the plan tree names it (`hold_flight(me, f-tp1353)`), per epoch. */
function stepTasks(plans: PlansView | null, epoch: number): Map<number, string> {
  const out = new Map<number, string>();
  const stack: PlanNodeView[] = [];
  const tree = plans?.epochs.find((e) => e.epoch === epoch)?.tree;
  if (tree) stack.push(tree);
  while (stack.length) {
    const node = stack.pop()!;
    if (node.step !== undefined) out.set(node.step, `${node.task}(${node.args.join(', ')})`);
    stack.push(...node.children);
  }
  return out;
}

/** Each epoch's rows, from the records (any prefix of a journal); step names from the plan trees when they are known. */
export function timelineOf(records: readonly LineRecord[], description: DescriptionView | null, plans: PlansView | null = null): EpochTimeline[] {
  const all = recs(records);
  const epochs = new Map<number, Rec[]>();
  for (const r of all) if (r.epoch >= 1) (epochs.get(r.epoch) ?? epochs.set(r.epoch, []).get(r.epoch)!).push(r);
  const out: EpochTimeline[] = [];
  for (const [epoch, list] of [...epochs].sort((a, b) => a[0] - b[0])) {
    const times = list.map((r) => r.at).filter((t): t is number => t !== null);
    const startAt = times.length ? Math.min(...times) : 0;
    const lastAt = times.length ? Math.max(...times) : 0;
    const rel = (t: number | null) => (t === null ? 0 : t - startAt);
    const operators = stepTasks(plans, epoch);
    for (const s of description?.epochs.find((e) => e.epoch === epoch)?.steps ?? []) if (s.operator && !operators.has(s.step)) operators.set(s.step, s.operator);
    const rows: Row[] = [];
    const open = new Map<string, { row: Row; seg: Segment }>();
    const byKey = new Map<string, Row>();
    let previousAt: number | null = null;
    for (let i = 0; i < list.length; i++) {
      const r = list[i]!;
      const b = r.body;
      if (r.kind === 'model.requested') {
        const key = `model:${str(b.purpose)}`;
        let row = byKey.get(key);
        if (!row) {
          row = { kind: 'model', label: `model · ${str(b.purpose)}`, detail: str(b.purpose) === 'parse' ? 'the intent → a goal' : 'authoring a fragment (gap path)', segments: [], backoffMs: 0, outcome: 'running', reason: null };
          byKey.set(key, row);
          rows.push(row);
        }
        const prev = row.segments.at(-1);
        // Backoff: the wait after a failed attempt (a re-prompt after a rejected reply is not one).
        if (prev && prev.outcome === 'failed' && r.at !== null) row.backoffMs += Math.max(0, rel(r.at) - prev.end);
        const seg: Segment = { start: rel(r.at), end: rel(lastAt), outcome: 'running', attempt: Number(b.attempt), worker: null, note: null };
        row.segments.push(seg);
        row.outcome = 'running';
        open.set(key, { row, seg });
      } else if (r.kind === 'model.completed' || r.kind === 'model.failed') {
        const o = open.get(`model:${str(b.purpose)}`);
        if (o) {
          o.seg.end = rel(r.at);
          const rejected = list[i + 1]?.kind === 'model.rejected' ? list[i + 1]! : undefined;
          if (r.kind === 'model.failed') {
            o.seg.outcome = 'failed';
            o.seg.note = `${str(b.class)} ${str(b.code)}: ${str(b.message)}`;
          } else if (rejected) {
            o.seg.outcome = 'rejected';
            o.seg.note = `rejected: ${str(rejected.body.reason)}`;
          } else o.seg.outcome = 'ok';
          o.row.outcome = o.seg.outcome;
          o.row.reason = o.seg.note;
          open.delete(`model:${str(b.purpose)}`);
        }
      } else if (r.kind === 'state.observed') {
        const failed = b.failure && typeof b.failure === 'object' ? (b.failure as Record<string, unknown>) : null;
        const start = previousAt ?? r.at;
        rows.push({
          kind: 'observe',
          label: `observe · ${str(b.actuator)}`,
          detail: 'the world as the planner sees it',
          segments: [{ start: rel(start), end: rel(r.at), outcome: failed ? 'failed' : 'ok', attempt: 1, worker: r.worker, note: failed ? `${str(failed.code)}: ${str(failed.message)}` : null }],
          backoffMs: 0,
          outcome: failed ? 'failed' : 'ok',
          reason: failed ? `${str(failed.code)}: ${str(failed.message)}` : null,
        });
      } else if (r.kind === 'step.shadowed') {
        // A shadow run's world effect: recorded, never dispatched — a row with no duration, saying so.
        const failed = b.failure && typeof b.failure === 'object' ? (b.failure as Record<string, unknown>) : null;
        const op = operators.get(Number(b.step));
        const note = failed ? `shadow failed: ${str(failed.code)}: ${str(failed.message)}` : 'shadowed, not dispatched';
        rows.push({
          kind: 'step',
          label: `#${str(b.step)} · ${str(b.actuator)}`,
          detail: `${op ? `${op} — ` : ''}shadowed, not dispatched`,
          segments: [{ start: rel(r.at), end: rel(r.at), outcome: failed ? 'failed' : 'ok', attempt: 1, worker: r.worker, note }],
          backoffMs: 0,
          outcome: failed ? 'failed' : 'ok',
          reason: note,
        });
      } else if (r.kind === 'step.dispatched' || r.kind === 'compensation.dispatched') {
        const undo = r.kind === 'compensation.dispatched';
        const key = `${undo ? 'undo' : 'step'}:${str(b.step)}`;
        let row = byKey.get(key);
        if (!row) {
          const op = operators.get(Number(b.step));
          row = {
            kind: undo ? 'compensation' : 'step',
            label: `${undo ? 'undo ' : ''}#${str(b.step)} · ${str(b.actuator)}`,
            detail: undo ? `undoes ${op ?? `step #${str(b.step)}`}` : (op ?? ''),
            segments: [],
            backoffMs: 0,
            outcome: 'running',
            reason: null,
          };
          byKey.set(key, row);
          rows.push(row);
        }
        const prev = row.segments.at(-1);
        // Backoff: the wait after a failed attempt (a re-prompt after a rejected reply is not one).
        if (prev && prev.outcome === 'failed' && r.at !== null) row.backoffMs += Math.max(0, rel(r.at) - prev.end);
        const seg: Segment = { start: rel(r.at), end: rel(lastAt), outcome: 'running', attempt: Number(b.attempt), worker: null, note: null };
        row.segments.push(seg);
        row.outcome = 'running';
        open.set(key, { row, seg });
      } else if (r.kind === 'step.completed' || r.kind === 'step.failed' || r.kind === 'compensation.completed') {
        const key = `${r.kind === 'compensation.completed' ? 'undo' : 'step'}:${str(b.step)}`;
        const o = open.get(key);
        if (o) {
          const failure = r.kind === 'step.failed' ? b : b.failure && typeof b.failure === 'object' ? (b.failure as Record<string, unknown>) : null;
          o.seg.end = rel(r.at);
          o.seg.worker = r.worker;
          o.seg.outcome = failure ? 'failed' : 'ok';
          o.seg.note = failure ? `${str(failure.class)} ${str(failure.code)}: ${str(failure.message)}` : null;
          o.row.outcome = o.seg.outcome;
          o.row.reason = o.seg.note;
          open.delete(key);
        }
      } else if (r.kind === 'step.refused') {
        // A worker would not run it (flag 13): the attempt stays open, back on the queue, no attempt spent.
        const o = open.get(`${str(b.key).endsWith('.undo') ? 'undo' : 'step'}:${str(b.step)}`);
        if (o) o.row.reason = o.seg.note = `refused by ${str(b.worker)} (${str(b.code)}), no attempt spent`;
      }
      if (r.at !== null) previousAt = r.at;
    }
    out.push({ epoch, startAt, spanMs: Math.max(0, lastAt - startAt), rows });
  }
  return out;
}

/** The whole run's time: the wall time of its first record and its length in ms (0, 0 when no record has a time). */
export function runSpanOf(records: readonly LineRecord[]): { startAt: number; spanMs: number } {
  const times = recs(records)
    .map((r) => r.at)
    .filter((t): t is number => t !== null);
  if (!times.length) return { startAt: 0, spanMs: 0 };
  const startAt = Math.min(...times);
  return { startAt, spanMs: Math.max(...times) - startAt };
}

/**
 * Where an epoch's rows are drawn: `offset` ms from the scale's start to the epoch's, over `span` ms
 * — the run's (offset: the epoch's start in the run) or, zoomed, the epoch's own (offset 0).
 */
export interface Scale {
  offset: number;
  span: number;
}

/** The scale epoch `e` is drawn on: the run's, or its own when zoomed. */
export function scaleOf(e: EpochTimeline, run: { startAt: number; spanMs: number }, zoomedIn: boolean): Scale {
  return zoomedIn || run.spanMs <= 0 ? { offset: 0, span: e.spanMs } : { offset: e.startAt - run.startAt, span: run.spanMs };
}

/** A duration for people: 850 ms, 1.2 s, 2 min 5 s. */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1_000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

function bar(row: Row, scale: Scale): HTMLElement {
  const track = el('div', { class: 'tl-track' });
  const span = scale.span > 0 ? scale.span : 1;
  // A position (ms since the epoch's start) on the scale; a length in ms as a width on it.
  const at = (ms: number) => `${Math.min(100, Math.max(0, ((scale.offset + ms) / span) * 100)).toFixed(3)}%`;
  const width = (ms: number) => `${Math.min(100, Math.max(0, (ms / span) * 100)).toFixed(3)}%`;
  for (let i = 0; i < row.segments.length; i++) {
    const seg = row.segments[i]!;
    const prev = row.segments[i - 1];
    if (prev && seg.start > prev.end) {
      const wait = el('div', { class: 'tl-backoff', title: `backoff ${duration(seg.start - prev.end)} before attempt ${seg.attempt}` });
      wait.style.left = at(prev.end);
      wait.style.width = width(seg.start - prev.end);
      track.append(wait);
    }
    const part = el('div', { class: `tl-seg tl-${seg.outcome}`, 'data-attempt': String(seg.attempt), title: `attempt ${seg.attempt}: ${seg.outcome}, ${duration(seg.end - seg.start)}${seg.worker ? ` on ${seg.worker}` : ''}${seg.note ? ` — ${seg.note}` : ''}` });
    part.style.left = at(seg.start);
    part.style.width = width(Math.max(seg.end - seg.start, 0));
    track.append(part);
  }
  return track;
}

function workers(row: Row): string {
  const names = [...new Set(row.segments.map((s) => s.worker).filter((w): w is string => w !== null))];
  return names.length ? names.join(', ') : row.kind === 'model' ? 'runtime' : '—';
}

function rowElement(row: Row, scale: Scale): HTMLElement {
  const took = row.segments.reduce((sum, s) => sum + Math.max(0, s.end - s.start), 0);
  const attempts = row.segments.length;
  return el(
    'div',
    { class: `tl-row tl-kind-${row.kind} tl-row-${row.outcome}` },
    el('div', { class: 'tl-label' }, el('span', { class: 'mono tl-name' }, row.label), row.detail ? el('span', { class: 'tl-detail', title: row.detail }, row.detail) : null),
    bar(row, scale),
    el('div', { class: 'tl-facts' },
      el('span', { class: `outcome outcome-${row.outcome === 'ok' ? 'ok' : row.outcome === 'running' ? 'dispatched' : 'failed'}` }, row.outcome),
      el('span', { class: 'tl-took num' }, duration(took)),
      el('span', { class: 'tl-attempts' }, `${attempts} attempt${attempts === 1 ? '' : 's'}`),
      el('span', { class: 'tl-wait' }, row.backoffMs > 0 ? `backoff ${duration(row.backoffMs)}` : ''),
      el('span', { class: 'tl-worker mono', title: 'the worker that ran it (meta.worker)' }, workers(row)),
    ),
    // Every attempt that did not succeed, with why: a rejected reply's reason, a failure's class and code.
    ...row.segments
      .filter((s) => s.note !== null)
      .map((s) => el('div', { class: `tl-reason${s.outcome === 'rejected' ? ' rejected' : ''}${row.outcome === 'ok' ? ' past' : ''}` }, cut(`attempt ${s.attempt}: ${s.note}`, 260))),
  );
}

/** The epochs zoomed to their own scale (kept across redraws; the page shows one invocation). */
const zoomed = new Set<number>();

/** The run's axis: its length, ticks at each quarter, and each epoch where it fell — a button that zooms it. */
function runAxis(epochs: readonly EpochTimeline[], run: { startAt: number; spanMs: number }, toggle: (epoch: number) => void): HTMLElement {
  const track = el('div', { class: 'tl-axis-track' });
  const span = run.spanMs > 0 ? run.spanMs : 1;
  const pct = (ms: number) => `${Math.min(100, Math.max(0, (ms / span) * 100)).toFixed(3)}%`;
  for (const q of [0, 0.25, 0.5, 0.75, 1]) {
    const tick = el('span', { class: `tl-tick${q === 1 ? ' tl-tick-end' : ''}` }, duration(run.spanMs * q));
    tick.style.left = pct(run.spanMs * q);
    track.append(tick);
  }
  for (const e of epochs) {
    const block = el(
      'button',
      { type: 'button', class: `tl-axis-epoch${zoomed.has(e.epoch) ? ' zoomed' : ''}`, 'data-epoch': String(e.epoch), title: `epoch ${e.epoch}: ${duration(e.spanMs)} from ${duration(e.startAt - run.startAt)} — click to ${zoomed.has(e.epoch) ? 'see it on the run\'s scale' : 'zoom to its own scale'}` },
      String(e.epoch),
    );
    block.style.left = pct(e.startAt - run.startAt);
    block.style.width = pct(e.spanMs);
    block.addEventListener('click', () => toggle(e.epoch));
    track.append(block);
  }
  return el(
    'div',
    { class: 'tl-axis', id: 'run-axis', 'data-span-ms': String(run.spanMs) },
    el('div', { class: 'tl-label' }, el('span', { class: 'tl-name' }, 'whole run'), el('span', { class: 'tl-detail' }, 'epochs on one scale; click one to zoom')),
    track,
    el('div', { class: 'tl-facts' }, el('span', {}, `${duration(run.spanMs)} from ${run.spanMs > 0 || run.startAt > 0 ? new Date(run.startAt).toISOString().slice(11, 23) : '—'}`)),
  );
}

/**
 * The timeline section: the run's axis, then one block per epoch, rows as bars on the run's time
 * axis — or the epoch's own, for an epoch zoomed in.
 */
export function timelineSection(records: readonly LineRecord[], description: DescriptionView | null, plans: PlansView | Error | null = null): HTMLElement {
  const epochs = timelineOf(records, description, plans instanceof Error ? null : plans);
  const run = runSpanOf(records);
  let section: HTMLElement;
  // Zoom an epoch in or out, and draw the section again in place (the same records).
  const toggle = (epoch: number) => {
    if (!zoomed.delete(epoch)) zoomed.add(epoch);
    const again = timelineSection(records, description, plans);
    section.replaceWith(again);
    again.querySelector<HTMLElement>(`.tl-epoch[data-epoch="${epoch}"] .tl-zoom`)?.focus({ preventScroll: true });
  };
  section = el(
    'section',
    { class: 'tl', id: 'timeline' },
    el('h2', {}, 'timeline'),
    epochs.length === 0 ? el('p', { class: 'empty' }, 'nothing dispatched yet') : runAxis(epochs, run, toggle),
    ...epochs.map((e) => {
      const goal = description?.epochs.find((d) => d.epoch === e.epoch)?.goal;
      const zoomedIn = zoomed.has(e.epoch);
      const scale = scaleOf(e, run, zoomedIn);
      const zoom = el(
        'button',
        { type: 'button', class: 'tl-zoom', 'aria-pressed': String(zoomedIn), title: zoomedIn ? "back to the whole run's scale" : 'zoom to this epoch (its own scale)' },
        zoomedIn ? `zoomed: its own scale (${duration(e.spanMs)}) — back to the run's` : `on the run's scale (${duration(run.spanMs)}) — zoom in`,
      );
      zoom.addEventListener('click', () => toggle(e.epoch));
      return el(
        'div',
        { class: `tl-epoch${zoomedIn ? ' zoomed' : ''}`, 'data-epoch': String(e.epoch), 'data-scale': zoomedIn ? 'epoch' : 'run' },
        el('h3', {}, el('span', { class: 'epoch-no' }, `epoch ${e.epoch}`), goal ? el('span', { class: 'mono goal' }, `${goal.task}(${goal.args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(', ')})`) : null, el('span', { class: 'plan' }, `${duration(e.spanMs)} from ${new Date(e.startAt).toISOString().slice(11, 23)}`), zoom),
        ...e.rows.map((row) => rowElement(row, scale)),
      );
    }),
  );
  return section;
}
