/**
 * One invocation's page (`/invocations/<id>`): its verification (done here, in the browser — see
 * verify.ts), status, lineage (a fork's parent, a superseded run's fork: lineage.ts) and pin
 * (`/api/invocations/<id>`, runtime/describe.ts), a timeline of epochs and
 * their steps, and the journal's records, each expandable to its body, seq, hash and prev. The
 * records shown are the lines the page verified itself (`/api/invocations/<id>/journal`).
 *
 * Its statechart (statechart.ts, laid out from the machine by `/api/machine`) is lit by the journal
 * replayed on the server (`/api/invocations/<id>/trail`); a resting journal can be stepped through
 * record by record (time-travel.ts), and `renderAt` draws the page as of a record: the sections that
 * follow time travel take the records up to it (the epochs by runtime/describe-epoch.ts `epochsOf`,
 * the pure function the server describes them with).
 *
 * Cancel, Resume and Fork (actions.ts), the lineage tree (lineage-tree.ts) and the top bar's approvals
 * inbox (inbox.ts) are sections of their own.
 *
 * Over 400 lines on purpose: it composes the page from its sections; each section's drawing lives
 * in its own module (statechart, timeline, plan-tree, verify, approve…).
 */
import type { JournalRecord } from '../../journal/records.js';
import { epochsOf } from '../../runtime/describe-epoch.js';
import { approvalForm } from './approve.js';
import { append, cut, el, failure, getJson, redraw, replace, setText, statusBadge, showWhere } from './dom.js';
import { journalLines, journalList } from './journal-list.js';
import { lineageLines } from './lineage.js';
import { lineageTreeSection } from './lineage-tree.js';
import { actionsPanel } from './actions.js';
import './inbox.js';
import { followJournal, journalLineCount, refresh, withLines } from './live.js';
import { dropPanel } from './drop.js';
import { KEY_CHANGED, keyForSeal, sealKeyIdOf } from './trusted-key.js';
import { modelRepliesSection } from './model-replies.js';
import { planTreeSection } from './plan-tree.js';
import { timelineSection } from './timeline.js';
import { verdictPanel } from './verdict-view.js';
import { statechart, stateOfStatus, viewAt, type Statechart } from './statechart.js';
import { timeTravel } from './time-travel.js';
import { serverVerdict, verifyInPage, type ShownVerdict, type Verdict } from './verify.js';
import type { DescriptionView, EpochView, LineRecord, MachineGraphView, PlansView, StepView, TrailView, TrustedKey, ViewerInfo } from './wire.js';

const root = document.getElementById('app')!;
const id = decodeURIComponent(location.pathname.replace(/^\/invocations\//, '').replace(/\/$/, ''));

const json = (value: unknown) => (value === null || value === undefined ? '' : JSON.stringify(value));

/**
 * The status as the description says it — unless the journal failed verification: then the badge
 * says the status is not to be believed ("completed — journal NOT verified", in red), since it was
 * read from records that do not hold.
 */
function statusOf(d: DescriptionView, verdict: Verdict): HTMLElement {
  if (verdict.kind !== 'failed') return statusBadge(d.status);
  return el('span', { class: 'status status-journal-bad', 'data-verified': 'no', title: `the journal fails verification at seq ${verdict.seq}: this status is read from records that do not hold` }, `${d.status.replace(/_/g, ' ')} — journal NOT verified`);
}

function header(d: DescriptionView, verdict: Verdict): HTMLElement {
  const rows: Array<[string, Node | string]> = [
    ['status', el('span', {}, statusOf(d, verdict), d.reason ? el('span', { class: 'reason' }, d.reason) : null)],
    ['tenant', d.tenant ?? '?'],
    ['intent', d.intent ?? '?'],
  ];
  const lineage = d.lineage ? lineageLines({ forkOf: d.lineage.forkOf, supersededBy: d.lineage.supersededBy, links: d.lineageLinks ?? [] }, { short: false, hash: true }) : [];
  if (lineage.length) rows.push(['lineage', el('div', {}, ...lineage)]);
  if (d.problem) rows.push(['problem', d.problem]);
  if (d.ending?.summary) rows.push(['ended', d.ending.summary]);
  if (d.pin) {
    rows.push(['library', el('span', { class: 'mono' }, d.pin.library)]);
    rows.push(['pin', `policy ${d.pin.policy} · seed ${d.pin.seed} · asOf ${d.pin.asOf} · model ${d.pin.model.id} · flags ${d.pin.flags.length ? d.pin.flags.join(',') : 'none'} · runtime ${d.pin.runtime}`]);
  }
  if (d.fix && d.commands.length === 0) rows.push(['next', el('span', { class: 'mono' }, d.fix)]);
  return el('section', { class: 'summary' }, el('dl', {}, ...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', { 'data-field': k }, v)])));
}

function stepRow(s: StepView): HTMLTableRowElement {
  const detail = s.failure ? `${s.failure.class} ${s.failure.code}: ${s.failure.message}` : s.result !== null ? json(s.result) : '';
  return el(
    'tr',
    { class: `step step-${s.outcome}` },
    el('td', { class: 'num' }, `#${s.step}`),
    el('td', { class: 'mono' }, [s.operator, s.actuator].filter((x) => x !== null).join(' → ') || '?'),
    el('td', { class: 'mono args' }, cut(json(s.args), 120)),
    el('td', {}, el('span', { class: `outcome outcome-${s.outcome}` }, s.outcome)),
    el('td', { class: 'num' }, s.attempts),
    el(
      'td',
      { class: 'mono detail' },
      cut(detail, 140),
      s.compensation ? el('div', {}, `undone by ${s.compensation.actuator}: ${s.compensation.outcome}`) : null,
      // Workers that refused it (flag 13): no attempt spent.
      s.refusals?.length ? el('div', { class: 'refusals' }, cut(`refused ${s.refusals.length}× (no attempt spent) by ${[...new Set(s.refusals.map((r) => `${r.worker} (${r.code})`))].join(', ')}`, 200)) : null,
    ),
  );
}

function epochBlock(e: EpochView): HTMLElement {
  const goal = e.goal ? `${e.goal.task}(${e.goal.args.map((a) => json(a)).join(', ')})` : 'no goal planned';
  const notes: string[] = [];
  if (e.admission && e.admission.decision !== 'allow') notes.push(`admission: ${e.admission.decision}${e.admission.reason ? ` — ${e.admission.reason}` : ''}`);
  if (e.approval) notes.push(e.approval.decision ? `approval: ${e.approval.decision} by ${e.approval.by ?? '?'}${e.approval.note ? ` — ${e.approval.note}` : ''}` : `approval requested${e.approval.reason ? `: ${e.approval.reason}` : ''}`);
  if (e.truncated) notes.push(`truncated: removed ${e.truncated.removed.map((n) => `#${n}`).join(', ') || 'nothing'} — ${e.truncated.reason}`);
  return el(
    'section',
    { class: `epoch epoch-${e.outcome}` },
    el('h3', {}, el('span', { class: 'epoch-no' }, `epoch ${e.epoch}`), el('span', { class: 'mono goal' }, goal), el('span', { class: 'plan' }, e.plan ? `${e.source ?? 'htn'} plan` : e.source === 'gap' ? 'gap path' : 'no plan'), el('span', { class: `outcome outcome-${e.outcome}` }, e.outcome)),
    ...notes.map((n) => el('p', { class: 'note' }, n)),
    // A rule that warned (flag 12): the run went on. Rule and reason are recorded text: text nodes only.
    ...(e.warnings ?? []).map((w) => el('p', { class: 'note warning' }, `warning: ${w.rule} on the ${w.subject === 'step' ? `step #${w.step ?? '?'}` : w.subject} — ${w.reason}`)),
    e.steps.length
      ? el('table', { class: 'steps' }, el('thead', {}, el('tr', {}, el('th', {}, 'step'), el('th', {}, 'operator → actuator'), el('th', {}, 'args'), el('th', {}, 'outcome'), el('th', { class: 'num' }, 'attempts'), el('th', {}, 'result'))), el('tbody', {}, ...e.steps.map(stepRow)))
      : null,
  );
}

/**
 * The approval form, one element per invocation, kept across redraws until a decision is sent from
 * it: a live redraw (a record, the plans or the trail arriving, the epoch read anew) must not wipe
 * what a person is typing, nor the button they are about to press — a form made anew beside a
 * person's typing (a browser filling the old one as it is replaced) lost what they typed. A form
 * that sent a decision stays while that approval is asked for, its status saying what it sent; a
 * later epoch asking again gets a fresh one.
 */
let approval: { id: string; epoch: number; node: HTMLElement } | null = null;
function approvalNode(d: DescriptionView, command: string): HTMLElement {
  const epoch = d.epochs.at(-1)?.epoch ?? 0;
  const sent = approval?.node.dataset.decided !== undefined;
  if (approval === null || approval.id !== d.id || (sent && approval.epoch !== epoch)) approval = { id: d.id, epoch, node: approvalForm(d.id, command) };
  else if (!sent) approval.epoch = epoch;
  return approval.node;
}

/** What a resting invocation waits for, and the commands that act on it (with this viewer's store flags). */
function nextPanel(d: DescriptionView, info: ViewerInfo): HTMLElement | null {
  const w = d.waiting;
  const parts: Node[] = [];
  if (w?.kind === 'approval') {
    parts.push(el('p', {}, "waiting for a person's approval", w.reason ? `: ${w.reason}` : ''));
    if (w.decided) parts.push(el('p', { class: 'note' }, `decided: ${w.decided.decision} by ${w.decided.by}${w.decided.note ? ` — ${w.decided.note}` : ''} (in its inbox, not yet recorded)`));
    if (w.steps) {
      parts.push(
        el(
          'table',
          { class: 'steps asked' },
          el('thead', {}, el('tr', {}, el('th', {}, 'step'), el('th', {}, 'operator → actuator'), el('th', {}, 'args'), el('th', {}, ''))),
          el('tbody', {}, ...w.steps.map((s) => el('tr', {}, el('td', { class: 'num' }, `#${s.step}`), el('td', { class: 'mono' }, `${s.operator} → ${s.actuator ?? '?'}`), el('td', { class: 'mono args' }, json(s.args)), el('td', {}, s.readOnly ? 'read-only' : '')))),
        ),
      );
    }
    const command = `${d.commands.find((c) => c.command.startsWith('weft approve'))?.command ?? `weft approve ${d.id} --by "$USER"`}${info.location ? ` ${info.location}` : ''}`;
    if (!w.decided || approval?.node.dataset.decided) parts.push(approvalNode(d, command));
  } else if (w?.kind === 'timer') parts.push(el('p', {}, `waiting for its timer${w.until ? ` until ${w.until}` : ''}`));
  else if (w?.kind === 'hibernated') parts.push(el('p', {}, 'hibernated at an epoch boundary, to be resumed'));
  else if (w?.kind === 'suspended') parts.push(el('p', {}, `suspended${w.class ? ` (${w.class}${w.code ? `, ${w.code}` : ''})` : ''}${w.reason ? `: ${w.reason}` : ''}`));
  if (d.commands.length) {
    parts.push(
      el(
        'dl',
        { class: 'commands' },
        ...d.commands.flatMap((c) => [el('dt', {}, c.does), el('dd', { class: 'mono' }, `${c.command}${info.location ? ` ${info.location}` : ''}`)]),
      ),
    );
  }
  return parts.length ? el('section', { class: 'next', id: 'next' }, el('h2', {}, w ? 'waiting' : 'commands'), ...parts) : null;
}

/** The journal's lines parsed (a line that is not JSON is left out): what the sections below are drawn from. */
function parsedRecords(text: string): LineRecord[] {
  const out: LineRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as LineRecord);
    } catch {
      // shown as text by journalList
    }
  }
  return out;
}

/** The drop target (a key, a journal, a bundle), made once: it stays the same node across redraws. */
let drop: HTMLElement | null = null;
/** The key the latest redraw verified against, for a file dropped later. */
let currentKey: TrustedKey | null = null;
function epochsSection(epochs: readonly EpochView[]): HTMLElement {
  return el('section', { class: 'timeline' }, el('h2', {}, 'epochs and steps'), ...(epochs.length ? epochs.map(epochBlock) : [el('p', { class: 'empty' }, 'no epoch yet')]));
}

/** What the page shows now: the machine's graph and the trail (fetched once each, the trail again as records arrive), the description, the records. */
const shown: { graph: MachineGraphView | null; trail: TrailView | null; trailProblem: string | null; description: DescriptionView | null; records: LineRecord[]; chart: Statechart | null } = {
  graph: null,
  trail: null,
  trailProblem: null,
  description: null,
  records: [],
  chart: null,
};

/** Time travel's record, or null to follow the latest. */
let travelAt: number | null = null;

/** Statuses at which a journal rests, so it can be stepped through (a running one moves on by itself). */
const RESTING = new Set(['completed', 'failed', 'handed_off', 'superseded', 'cancelled', 'awaiting_approval', 'waiting_timer', 'hibernated', 'suspended', 'interrupted', 'pending']);

/** The statechart, lit by the trail at the latest record (renderAt moves it), and the time-travel control. */
function chartSection(d: DescriptionView, travels: boolean): HTMLElement | null {
  const graph = shown.graph;
  if (!graph) return null;
  const chart = statechart(graph);
  shown.chart = chart;
  const records = shown.records.length;
  const trail = shown.trail;
  const caption = el('p', { class: 'chart-caption', id: 'chart-caption' });
  const travel = travels && RESTING.has(d.status) && records > 1 && trail !== null
    ? timeTravel({
        count: records,
        at: travelAt ?? records - 1,
        describe: (k) => {
          const r = shown.records[k];
          const state = trail.replayed ? trail.states[k] : null;
          // Counted as the journal's heading counts them ("56 records": record 1 of 56 is seq 0).
          return `record ${k + 1} of ${records} · seq ${k}${r?.kind !== undefined ? ` · ${String(r.kind)}` : ''}${state ? ` · ${state}` : ''}`;
        },
        onChange: (k) => {
          travelAt = k === records - 1 ? null : k;
          renderAt(shown.records.slice(0, k + 1));
        },
      })
    : null;
  const section = el('section', { class: 'statechart', id: 'statechart' }, el('h2', {}, 'statechart'), caption, travel, el('div', { class: 'chart-frame' }, chart.element), chartLegend());
  showChart(records - 1, records - 1);
  return section;
}

function chartLegend(): HTMLElement {
  const key = (cls: string, text: string) => el('span', { class: `key ${cls}` }, text);
  return el(
    'p',
    { class: 'chart-legend' },
    key('k-path', 'path taken'),
    key('k-last', 'last transition'),
    key('k-guard', 'guard'),
    key('k-rest', 'rests there'),
    key('k-final', 'final'),
    el('span', {}, "not drawn until a run takes one: every invoking state's onError into suspended, and resume [suspendedIn(state)] back to it"),
  );
}

/** Light the chart as of record k (of `last`), and say where it stands and how it knows. */
function showChart(k: number, last: number): void {
  const { chart, trail, graph, description } = shown;
  if (!chart || !graph || !description) return;
  const caption = chart.element.closest('section')?.querySelector<HTMLElement>('.chart-caption') ?? document.getElementById('chart-caption');
  let text: string;
  let tone = 'ok';
  if (trail?.replayed) {
    const view = viewAt(trail, graph.initial, k);
    chart.show(view);
    const where = view.current ?? 'not reached by replay';
    text = `${k === last ? 'at the last record' : `at record ${k}`}: ${where} — replayed from the journal with domain ${trail.domain}`;
    if (trail.error) {
      tone = 'bad';
      text += `; replay stopped${trail.error.seq !== null ? ` at seq ${trail.error.seq}` : ''}: ${trail.error.message}`;
    }
  } else {
    const state = k === last ? stateOfStatus(description.status) : null;
    chart.show({ current: state, visited: new Set(state ? [state] : []), taken: new Set(), last: null });
    text = `${trail ? trail.reason : `not replayed: ${shown.trailProblem ?? 'no trail'}`}${state ? ` — lit from its status (${description.status.replace(/_/g, ' ')})` : ''}${trail?.hint ? `; ${trail.hint}` : ''}`;
    tone = 'partial';
  }
  if (caption) {
    setText(caption, text);
    caption.className = `chart-caption ${tone}`;
  }
}

/**
 * The page as of the last of `records` (time travel: records 0..k): the statechart at the state
 * replay reached at k with the path up to it, the journal's later records dimmed, the epochs and
 * steps as records 0..k describe them. The latest record shows the description's own epochs.
 */
function renderAt(records: readonly LineRecord[]): void {
  const k = records.length - 1;
  const last = shown.records.length - 1;
  showChart(k, last);
  root.querySelectorAll<HTMLLIElement>('.journal li').forEach((li, i) => {
    li.classList.toggle('later', i > k);
    li.classList.toggle('at', i === k && k < last);
  });
  const epochs = k >= last && shown.description ? shown.description.epochs : (epochsOf(records as unknown as JournalRecord[], undefined, undefined) as unknown as EpochView[]);
  root.querySelector('section.timeline')?.replaceWith(epochsSection(epochs));
  // The plan trees, the timeline and the model's replies as records 0..k say (plan-tree.ts, timeline.ts, model-replies.ts).
  const description = shown.description; // labels only (goals): what is shown comes from records 0..k
  root.querySelector('#plans')?.replaceWith(planTreeSection(records, description, plans));
  root.querySelector('#timeline')?.replaceWith(timelineSection(records, description, plans));
  root.querySelector('#model-replies')?.replaceWith(modelRepliesSection(records));
  document.body.dataset.travel = k >= last ? 'latest' : String(k);
}

const crumbs = () => el('p', { class: 'crumbs' }, el('a', { href: '/' }, '← invocations'), ' / ', el('span', { class: 'mono' }, id));

/** The server's verdict when it redacted the journal (its `x-weft-redacted` header), else undefined: the page verifies. */
let server: ShownVerdict | undefined;

/** Ask the server for its verdict (a redacted journal only). */
async function fetchServerVerdict(path: string): Promise<void> {
  server = serverVerdict(await getJson<unknown>(`${path}/verdict`));
}

/** The page for what it has now: drawn again as records arrive (expanded records stay expanded). */
function render(description: DescriptionView, bytes: Uint8Array, key: TrustedKey | null, info: ViewerInfo): void {
  currentKey = key;
  const expanded = new Set<string | null>([...root.querySelectorAll('details.record[open] .seq')].map((s) => s.textContent));
  const text = new TextDecoder().decode(bytes);
  shown.description = description;
  shown.records = journalLines(text);
  const verdict: ShownVerdict = server ?? verifyInPage(bytes, key);
  const bad = verdict.kind === 'server' ? verdict.verdict : verdict;
  const records = parsedRecords(text);
  // Redrawn whole, keeping the focus of a field being typed in (the approval form is the same element).
  redraw(root, () => [
    crumbs(),
    el('h1', { class: 'mono' }, description.id),
    verdictPanel(verdict),
    header(description, bad),
    lineageTreeSection(description),
    nextPanel(description, info),
    actionsPanel(description, info.location),
    chartSection(description, bad.kind !== 'failed'),
    planTreeSection(records, description, plans),
    timelineSection(records, description, plans),
    epochsSection(description.epochs),
    modelRepliesSection(records),
    journalList(text, bad.kind === 'failed' ? bad.seq : null),
    (drop ??= dropPanel(() => currentKey)),
  ]);
  if (travelAt !== null && travelAt < shown.records.length - 1) renderAt(shown.records.slice(0, travelAt + 1));
  for (const d of root.querySelectorAll<HTMLDetailsElement>('details.record')) if (expanded.has(d.querySelector('.seq')?.textContent ?? null)) d.open = true;
  document.body.dataset.verdict = bad.kind;
  document.body.dataset.verifiedBy = verdict.kind === 'server' ? 'server' : 'page';
}

/** The trail (replay-trail.ts); one that cannot be had leaves the chart lit from the status, saying why. */
let trailAt = 0;
const TRAIL_EVERY_MS = 2_000;
async function loadTrail(path: string): Promise<void> {
  trailAt = Date.now();
  try {
    shown.trail = await getJson<TrailView>(`${path}/trail`);
    shown.trailProblem = null;
  } catch (err) {
    shown.trail = null;
    shown.trailProblem = err instanceof Error ? err.message : String(err);
  }
}

/**
 * The kinds of record a plan tree rests on (plan-trees.ts): the observation, the plan, the model's
 * replies, the epoch's admission. Not a step's admission (one per step under flag 9): no plan tree
 * reads it, so it re-derives nothing. (A canonical line escapes the quotes of any text inside it,
 * so `"subject":"step"` can only be the body's own field.)
 */
const PLANNING = /"kind":"(state\.observed|epoch\.derived|model\.completed|model\.rejected|admission\.decided)"/;
const STEP_ADMISSION = /"subject":"step"/;
const replans = (line: string) => PLANNING.test(line) && !(line.includes('"kind":"admission.decided"') && STEP_ADMISSION.test(line));

/** Each epoch's plan tree, re-derived by the server (plan-tree.ts); null until it answers. */
let plans: PlansView | Error | null = null;
const loadPlans = (path: string) =>
  getJson<PlansView>(`${path}/plans`).then(
    (p) => (plans = p),
    (err: unknown) => (plans = err instanceof Error ? err : new Error(String(err))),
  );

async function main(): Promise<void> {
  document.title = `${id} — weft inspect`;
  replace(root, crumbs(), el('p', { class: 'loading' }, 'loading…'));
  const path = `/api/invocations/${encodeURIComponent(id)}`;
  let description: DescriptionView;
  let bytes: Uint8Array;
  let key: TrustedKey | null;
  let info: ViewerInfo;
  // The statechart's graph and the trail are fetched beside the rest (a replay may take a moment on the server).
  const chartLoaded = Promise.all([
    getJson<MachineGraphView>('/api/machine').then(
      (graph) => void (shown.graph = graph),
      () => undefined,
    ),
    loadTrail(path),
  ]);
  try {
    [description, bytes, key, info] = await Promise.all([
      getJson<DescriptionView>(path),
      fetch(`${path}/journal`, { credentials: 'same-origin' }).then(async (res) => {
        if (!res.ok) throw new Error(`${path}/journal: HTTP ${res.status}`);
        if (res.headers.get('x-weft-redacted')) await fetchServerVerdict(path);
        return new Uint8Array(await res.arrayBuffer());
      }),
      getJson<TrustedKey | null>('/api/trusted-key'),
      getJson<ViewerInfo>('/api/viewer'),
    ]);
  } catch (err) {
    append(root, failure(err));
    root.querySelector('.loading')?.remove();
    return;
  }
  // The seal is checked against a dropped key, else --public-key, else the store's (labelled): trusted-key.ts.
  const viewerKey = key;
  key = await keyForSeal(viewerKey, sealKeyIdOf(bytes));
  await chartLoaded;
  render(description, bytes, key, info);
  document.addEventListener(KEY_CHANGED, () =>
    refresh(async () => {
      key = await keyForSeal(viewerKey, sealKeyIdOf(bytes));
      render(description, bytes, key, info);
    }),
  );
  void loadPlans(path).then(() => render(description, bytes, key, info));
  let replan = false;
  followJournal(id, journalLineCount(bytes), (lines) => {
    bytes = withLines(bytes, lines);
    // The plans are derived again only when a record they rest on arrived (not on every step).
    replan ||= lines.some(replans);
    refresh(async () => {
      const again = replan;
      replan = false;
      // The trail is a replay of the whole journal on the server: while the run moves, at most every
      // TRAIL_EVERY_MS (and once it rests), not on every record.
      const trailDue = Date.now() - trailAt >= TRAIL_EVERY_MS || (description && RESTING.has(description.status));
      [description] = await Promise.all([getJson<DescriptionView>(path), again ? loadPlans(path) : undefined, trailDue ? loadTrail(path) : undefined]);
      if (!trailDue && RESTING.has(description.status)) await loadTrail(path);
      key = await keyForSeal(viewerKey, sealKeyIdOf(bytes));
      if (server) await fetchServerVerdict(path);
      render(description, bytes, key, info);
    });
  });
}

showWhere();
void main();
