/**
 * One invocation's page (`/invocations/<id>`): its verification (done here, in the browser — see
 * verify.ts), status and pin (`/api/invocations/<id>`, runtime/describe.ts), a timeline of epochs and
 * their steps, and the journal's records, each expandable to its body, seq, hash and prev. The
 * records shown are the lines the page verified itself (`/api/invocations/<id>/journal`).
 */
import { approvalForm } from './approve.js';
import { append, cut, el, failure, getJson, replace, statusBadge, showWhere } from './dom.js';
import { followJournal, journalLineCount, refresh, withLines } from './live.js';
import { verdictPanel } from './verdict-view.js';
import { serverVerdict, verifyInPage, type ShownVerdict } from './verify.js';
import type { DescriptionView, EpochView, StepView, TrustedKey, ViewerInfo } from './wire.js';

const root = document.getElementById('app')!;
const id = decodeURIComponent(location.pathname.replace(/^\/invocations\//, '').replace(/\/$/, ''));

const json = (value: unknown) => (value === null || value === undefined ? '' : JSON.stringify(value));

function header(d: DescriptionView): HTMLElement {
  const rows: Array<[string, Node | string]> = [
    ['status', el('span', {}, statusBadge(d.status), d.reason ? el('span', { class: 'reason' }, d.reason) : null)],
    ['tenant', d.tenant ?? '?'],
    ['intent', d.intent ?? '?'],
  ];
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
    el('td', { class: 'mono detail' }, cut(detail, 140), s.compensation ? el('div', {}, `undone by ${s.compensation.actuator}: ${s.compensation.outcome}`) : null),
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
    e.steps.length
      ? el('table', { class: 'steps' }, el('thead', {}, el('tr', {}, el('th', {}, 'step'), el('th', {}, 'operator → actuator'), el('th', {}, 'args'), el('th', {}, 'outcome'), el('th', { class: 'num' }, 'attempts'), el('th', {}, 'result'))), el('tbody', {}, ...e.steps.map(stepRow)))
      : null,
  );
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
    if (!w.decided) parts.push(approvalForm(d.id, `${d.commands.find((c) => c.command.startsWith('weft approve'))?.command ?? `weft approve ${d.id} --by <you>`}${info.location ? ` ${info.location}` : ''}`));
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

interface LineRecord {
  seq?: unknown;
  kind?: unknown;
  epoch?: unknown;
  body?: unknown;
  hash?: unknown;
  prev?: unknown;
  meta?: { at?: unknown; writer?: unknown };
}

/** The journal's lines as the page received them; a line that is not JSON is shown as text. */
function journalList(text: string, badSeq: number | null): HTMLElement {
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
          el('dt', {}, 'body'),
          el('dd', {}, el('pre', {}, JSON.stringify(rec.body, null, 2))),
        )
      : el('pre', {}, line);
    return el('li', {}, el('details', { class: bad ? 'record bad' : 'record' }, summary, detail));
  });
  return el('section', { class: 'journal' }, el('h2', {}, `journal — ${lines.length} record${lines.length === 1 ? '' : 's'}`), el('ol', { start: '0' }, ...items));
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
  const expanded = new Set<string | null>([...root.querySelectorAll('details.record[open] .seq')].map((s) => s.textContent));
  const text = new TextDecoder().decode(bytes);
  const verdict: ShownVerdict = server ?? verifyInPage(bytes, key);
  const bad = verdict.kind === 'server' ? verdict.verdict : verdict;
  replace(
    root,
    crumbs(),
    el('h1', { class: 'mono' }, description.id),
    verdictPanel(verdict),
    header(description),
    nextPanel(description, info),
    el('section', { class: 'timeline' }, el('h2', {}, 'epochs and steps'), ...(description.epochs.length ? description.epochs.map(epochBlock) : [el('p', { class: 'empty' }, 'no epoch yet')])),
    journalList(text, bad.kind === 'failed' ? bad.seq : null),
  );
  for (const d of root.querySelectorAll<HTMLDetailsElement>('details.record')) if (expanded.has(d.querySelector('.seq')?.textContent ?? null)) d.open = true;
  document.body.dataset.verdict = bad.kind;
  document.body.dataset.verifiedBy = verdict.kind === 'server' ? 'server' : 'page';
}

async function main(): Promise<void> {
  document.title = `${id} — weft inspect`;
  replace(root, crumbs(), el('p', { class: 'loading' }, 'loading…'));
  const path = `/api/invocations/${encodeURIComponent(id)}`;
  let description: DescriptionView;
  let bytes: Uint8Array;
  let key: TrustedKey | null;
  let info: ViewerInfo;
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
  render(description, bytes, key, info);
  followJournal(id, journalLineCount(bytes), (lines) => {
    bytes = withLines(bytes, lines);
    refresh(async () => {
      description = await getJson<DescriptionView>(path);
      if (server) await fetchServerVerdict(path);
      render(description, bytes, key, info);
    });
  });
}

showWhere();
void main();
