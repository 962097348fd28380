/**
 * Offline audit: a dropped journal or `weft export` bundle drawn as a run — entirely in the page,
 * from the file's own records, with nothing of it sent anywhere. It is verified first (verify.ts
 * `verifyFile`, by drop.ts): the verdict heads the view, and nothing in it is shown as trusted
 * unless the verdict holds. A failed verification names the first record that does not hold (its
 * seq and kind), marks the whole view untrusted, flags that record and those after it in the
 * journal, and shows no trust badge.
 *
 * What it draws, with the modules the invocation page uses:
 * - a summary: invocation, tenant, intent, how it ended (the sealed ending its records hold), the
 *   trust its seal was checked at (trusted-key.ts `Trust`: green for a key you gave, amber for the
 *   store's and for the bundle's own key), the pinned library, and its lineage — a fork's parent
 *   from its pin, and the parents' journals a bundle carries, each chain checked here;
 * - the statechart (statechart.ts), lit at the state its ending rests in. Replay — the trail the
 *   invocation page lights the path from — runs the domain's code on a viewer's server, so it is not
 *   done offline, and the caption says so. The machine's layout is the viewer's (`/api/machine`, the
 *   same for every run: nothing of the file is in that request);
 * - the plans: not re-derived offline (offline-plans.ts says why), with what the journal recorded;
 * - the timeline (timeline.ts) and the journal's records (journal-list.ts), from the file's lines.
 */
import { verifyJournalBytes } from '../../journal/verify-bytes.js';
import { epochsOf } from '../../runtime/describe-epoch.js';
import type { JournalRecord } from '../../journal/records.js';
import { el, getJson, statusBadge } from './dom.js';
import { journalLines, journalList } from './journal-list.js';
import { lineageLines } from './lineage.js';
import { offlinePlansSection } from './offline-plans.js';
import { separateStatechart, stateOfStatus } from './statechart.js';
import { timelineSection } from './timeline.js';
import { trustOf, type Trust } from './trusted-key.js';
import { verdictPanel } from './verdict-view.js';
import type { FileVerdict, Verdict } from './verify.js';
import type { EpochView, LineRecord, MachineGraphView } from './wire.js';

/** The words and colour of each level of trust, wherever a seal's trust is shown beside a run (the verdict panel says it at length). */
export const TRUST_BADGE: Record<Trust, { tone: string; text: string; title: string }> = {
  given: { tone: 'ok', text: '✓ sealed — checked against a key you gave', title: 'the seal is by the key you gave (dropped here, or weft inspect --public-key): it shows who sealed the journal' },
  store: { tone: 'partial', text: "✓ sealed — checked against the store's key, not independent", title: "the store's own key shows the journal unchanged since that key sealed it, not whose key it is" },
  bundle: {
    tone: 'partial',
    text: "✓ integrity only — checked against the bundle's own key",
    title: "a bundle's own key proves only that the journal was not changed after signing, not who signed it: compare its id with a key you trust, or drop your weft.pub here",
  },
};

/** How a journal's records end: the sealed ending they hold (as journal/store.ts endingOf reads it), or "not ended" (still running, or resting) — a file cannot say which. */
export function endingOfRecords(records: readonly LineRecord[]): string {
  const kinds = new Set(records.map((r) => r.kind));
  for (const [kind, status] of [
    ['invocation.completed', 'completed'],
    ['invocation.failed', 'failed'],
    ['invocation.handed_off', 'handed_off'],
    ['invocation.superseded', 'superseded'],
    ['invocation.cancelled', 'cancelled'],
  ] as const) {
    if (kinds.has(kind)) return status;
  }
  return 'not_ended';
}

/** The badge beside the status: the seal's trust, or what was (not) checked. */
function trustBadge(verdict: Verdict, untrusted: boolean): HTMLElement {
  if (verdict.kind === 'failed') return el('span', { class: 'trust-badge bad', id: 'offline-trust', 'data-trust': 'none' }, `✗ NOT verified — fails at seq ${verdict.seq}`);
  if (untrusted) return el('span', { class: 'trust-badge bad', id: 'offline-trust', 'data-trust': 'none' }, '✗ NOT trusted — the bundle does not hold together');
  if (verdict.kind === 'chain-only') {
    return el('span', { class: 'trust-badge partial', id: 'offline-trust', 'data-trust': 'chain' }, verdict.sealed ? 'chain intact — seal not checked (no key given)' : 'chain intact — not sealed');
  }
  const trust = trustOf(verdict.key);
  const badge = TRUST_BADGE[trust];
  return el('span', { class: `trust-badge ${badge.tone} trust-${trust}`, id: 'offline-trust', 'data-trust': trust, title: badge.title }, badge.text);
}

/** "seq 12 (step.completed)": the record a failure names, as the file holds it. */
function namedRecord(records: readonly LineRecord[], seq: number): string {
  const kind = records[seq]?.kind;
  return typeof kind === 'string' ? `seq ${seq} (${kind})` : `seq ${seq}`;
}

function summary(records: readonly LineRecord[], verdict: Verdict, untrusted: boolean, file: FileVerdict): HTMLElement {
  const pinned = records[0]?.kind === 'invocation.pinned' ? (records[0].body as { tenant?: unknown; intent?: unknown; invocation?: unknown; pin?: { library?: unknown }; forkOf?: { parent?: unknown; atEpoch?: unknown; parentHash?: unknown } }) : undefined;
  const status = endingOfRecords(records);
  const statusNode =
    verdict.kind === 'failed' || untrusted
      ? el('span', { class: 'status status-journal-bad', 'data-verified': 'no' }, `${status.replace(/_/g, ' ')} — journal NOT verified`)
      : status === 'not_ended'
        ? el('span', { class: 'status status-other', title: 'the file holds no sealed ending: it was exported while running or resting' }, 'not ended')
        : statusBadge(status);
  const rows: Array<[string, Node | string]> = [
    ['invocation', el('span', { class: 'mono' }, String(pinned?.invocation ?? file.invocation ?? '?'))],
    ['tenant', String(pinned?.tenant ?? '?')],
    ['intent', String(pinned?.intent ?? '?')],
    ['status', el('span', {}, statusNode, ' ', trustBadge(verdict, untrusted))],
    ['records', String(records.length)],
  ];
  if (typeof pinned?.pin?.library === 'string') {
    const carried = file.bundle && Object.hasOwn(file.bundle.libraries, pinned.pin.library) ? ' (carried in the bundle, its digest checked)' : '';
    rows.push(['library', el('span', {}, el('span', { class: 'mono' }, pinned.pin.library), carried)]);
  }
  const fork = pinned?.forkOf;
  const lineage: HTMLElement[] =
    fork && typeof fork.parent === 'string'
      ? lineageLines({ forkOf: { parent: fork.parent, atEpoch: Number(fork.atEpoch), ...(typeof fork.parentHash === 'string' ? { parentHash: fork.parentHash } : {}) }, supersededBy: null, links: [] }, { short: false, hash: true })
      : [];
  const superseded = records.find((r) => r.kind === 'invocation.superseded')?.body as { by?: unknown } | undefined;
  if (typeof superseded?.by === 'string') lineage.push(...lineageLines({ forkOf: null, supersededBy: superseded.by, links: [] }, { short: false, hash: false }));
  // A fork's bundle carries its parents' journals up to the fork: each one's chain, checked here.
  for (const parent of file.bundle?.lineage ?? []) {
    const check = verifyJournalBytes(new TextEncoder().encode(parent.journal));
    lineage.push(
      el(
        'div',
        { class: `lineage lineage-carried ${check.ok ? 'ok' : 'bad'}`, 'data-parent': parent.invocation },
        "parent's journal in the bundle: ",
        el('span', { class: 'mono' }, parent.invocation),
        check.ok ? ` — ${check.count} records, chain intact` : ` — ✗ fails at seq ${check.error?.seq ?? '?'}: ${check.error?.problem ?? 'does not verify'}`,
      ),
    );
  }
  if (lineage.length) rows.push(['lineage', el('div', {}, ...lineage)]);
  return el('section', { class: 'summary' }, el('dl', {}, ...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', { 'data-field': k }, v)])));
}

/** The statechart, once the viewer's layout of the machine arrives, lit at the state the ending rests in. */
function chartSection(records: readonly LineRecord[], untrusted: boolean): HTMLElement {
  const caption = el('p', { class: 'chart-caption partial', id: 'offline-chart-caption' }, 'laying out the machine…');
  const frame = el('div', { class: 'chart-frame' });
  const section = el('section', { class: 'statechart', id: 'offline-statechart' }, el('h2', {}, 'statechart'), caption, frame);
  const status = endingOfRecords(records);
  getJson<MachineGraphView>('/api/machine').then(
    (graph) => {
      const chart = separateStatechart(graph);
      frame.append(chart.element);
      const state = untrusted ? null : stateOfStatus(status);
      chart.show({ current: state, visited: new Set(state ? [state] : []), taken: new Set(), last: null });
      caption.textContent = untrusted
        ? 'not lit: the journal does not verify, so where it ended is not to be believed'
        : `not replayed offline: replaying a journal through the machine runs its domain's code, which a viewer over its store does (weft inspect), not this page${state ? ` — lit from how its records end (${status.replace(/_/g, ' ')})` : ' — its records hold no ending to light it from'}`;
      section.dataset.ready = 'yes';
    },
    (err: unknown) => {
      caption.className = 'chart-caption bad';
      caption.textContent = `the machine's layout could not be had from this viewer: ${err instanceof Error ? err.message : String(err)}`;
      section.dataset.ready = 'failed';
    },
  );
  return section;
}

/** The banner over a run that does not verify: nothing below is to be trusted, and which record broke. */
function untrustedBanner(file: FileVerdict, records: readonly LineRecord[]): HTMLElement | null {
  const v = file.verdict;
  if (v.kind === 'failed') {
    return el(
      'p',
      { class: 'untrusted-banner', id: 'offline-untrusted', 'data-seq': String(v.seq) },
      `✗ NOT VERIFIED — ${v.sealMismatch ? 'the seal does not match' : `record ${namedRecord(records, v.seq)} does not hold`}: ${v.problem}. Nothing below is to be trusted: it is drawn from records that were changed or damaged.`,
    );
  }
  if (file.problem) return el('p', { class: 'untrusted-banner', id: 'offline-untrusted' }, `✗ NOT TRUSTED — ${file.problem}. Nothing below is to be trusted.`);
  return null;
}

/** The run a dropped file holds, verified first (its verdict in `file`); `name` is the file's name. */
export function offlineRunView(name: string, file: FileVerdict): HTMLElement {
  const bytes = file.journal;
  if (!bytes) {
    // A bundle that cannot be read: there is no run to draw, only why.
    return el('article', { class: 'offline-run untrusted', id: 'offline-run', 'data-trusted': 'no' }, el('h2', {}, el('span', { class: 'mono' }, name), ' — not a run'), verdictPanel(file.verdict));
  }
  const text = new TextDecoder().decode(bytes);
  const records = journalLines(text);
  const verdict = file.verdict;
  const untrusted = verdict.kind === 'failed' || file.problem !== null;
  const trusted = untrusted ? 'no' : verdict.kind === 'verified' ? trustOf(verdict.key) : 'chain';
  const epochs = (() => {
    try {
      return epochsOf(records as unknown as JournalRecord[], undefined, undefined) as unknown as EpochView[];
    } catch {
      return [];
    }
  })();
  return el(
    'article',
    { class: `offline-run${untrusted ? ' untrusted' : ''}`, id: 'offline-run', 'data-trusted': trusted, 'data-input': file.input },
    el('h2', {}, 'the run in ', el('span', { class: 'mono' }, name), ` — a ${file.input}, drawn in this page from its own records (nothing was sent)`),
    verdictPanel(verdict),
    untrustedBanner(file, records),
    summary(records, verdict, untrusted, file),
    chartSection(records, untrusted),
    offlinePlansSection(epochs, file.bundle !== null),
    timelineSection(records, null, null),
    journalList(text, verdict.kind === 'failed' ? verdict.seq : null),
  );
}
