/**
 * The plan tree of each epoch (goal → method → steps), as the server re-derived it
 * (`/api/invocations/<id>/plans`, inspector/plan-trees.ts) and checked against the digest
 * `epoch.derived` recorded: "re-derived, digest matches", or the mismatch with both digests, or
 * "not re-derived: <why>" (a user domain's evaluables are code the viewer runs only with
 * `--domain`). On the gap path: why no method applied (per method, the first literal that failed),
 * the model-authored fragment marked "authored", its constraint check and its recorded admission.
 *
 * Shown against a prefix of the journal (records up to seq k, for the time-travel slider): an
 * epoch appears once its records do, and its tree once the record it rests on (`seq`) is in the
 * prefix. Task names and args come from the library and the model: text only (dom.ts).
 */
import { el } from './dom.js';
import type { DescriptionView, EpochPlanView, LineRecord, PlanNodeView, PlansView } from './wire.js';

const call = (task: string, args: readonly unknown[]) => `${task}(${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(', ')})`;

/** An epoch's heading: its number, its goal as a call, and where its plan came from (none: not shown). Shared with the offline view (offline-plans.ts). */
export function epochHeading(epoch: number, goal: { task: string; args: readonly unknown[] } | null | undefined, source: string | null | undefined): HTMLElement {
  return el(
    'h3',
    {},
    el('span', { class: 'epoch-no' }, `epoch ${epoch}`),
    goal ? el('span', { class: 'mono goal' }, call(goal.task, goal.args)) : null,
    source ? el('span', { class: `pt-badge ${source === 'htn' ? 'htn' : 'authored'}` }, source === 'htn' ? 'planned (HTN)' : 'authored (gap path)') : null,
  );
}

/** What became of each step of an epoch, as far as the records go: done, failed, undone (compensated), running, shadowed (a shadow run). */
function stepStates(records: readonly LineRecord[], epoch: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const r of records) {
    if (r.epoch !== epoch) continue;
    const step = Number((r.body as { step?: unknown } | undefined)?.step);
    if (r.kind === 'step.dispatched') out.set(step, 'running');
    else if (r.kind === 'step.completed') out.set(step, 'done');
    else if (r.kind === 'step.failed') out.set(step, 'failed');
    else if (r.kind === 'step.refused') out.set(step, 'refused'); // a worker would not run it: back on the queue, no attempt spent
    else if (r.kind === 'step.shadowed') out.set(step, 'shadowed'); // a shadow run's world effect: recorded, never dispatched
    else if (r.kind === 'compensation.completed' && !(r.body as { failure?: unknown }).failure) out.set(step, 'undone');
  }
  return out;
}

/** One node and its subtree, as nested lists (depth-first, iterative so a deep plan cannot overflow the stack). */
function treeList(root: PlanNodeView, states: Map<number, string>): HTMLElement {
  const top = el('ul', { class: 'pt-tree' });
  const stack: Array<{ node: PlanNodeView; into: HTMLElement }> = [{ node: root, into: top }];
  while (stack.length) {
    const { node, into } = stack.pop()!;
    const leaf = node.step !== undefined;
    const label = el(
      'div',
      { class: `pt-node ${leaf ? 'pt-step' : node.authored ? 'pt-authored' : 'pt-task'}` },
      leaf ? el('span', { class: 'pt-index num' }, `#${node.step}`) : null,
      node.authored ? el('span', { class: 'pt-badge authored' }, 'authored') : el('span', { class: 'mono pt-call' }, call(node.task, node.args)),
      node.method && !node.authored ? el('span', { class: 'pt-method', title: 'the method chosen for this task' }, el('span', { class: 'pt-via' }, 'method '), el('span', { class: 'mono' }, node.method)) : null,
      node.authored ? el('span', { class: 'pt-via' }, 'fragment the model authored, certified by the planner') : null,
      node.actuator ? el('span', { class: 'mono pt-actuator' }, `→ ${node.actuator}`) : null,
      leaf && node.readOnly ? el('span', { class: 'pt-badge ro' }, 'read-only') : null,
      leaf && states.has(node.step!) ? el('span', { class: `pt-state pt-${states.get(node.step!)}` }, states.get(node.step!)!) : null,
    );
    const item = el('li', {}, label);
    into.append(item);
    if (node.children.length) {
      const sub = el('ul', {});
      item.append(sub);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push({ node: node.children[i]!, into: sub });
    }
  }
  return top;
}

function verdictLine(v: EpochPlanView): HTMLElement {
  if (v.verdict.kind === 'matches') return el('p', { class: 'pt-verdict ok', 'data-verdict': 'matches' }, 're-derived, digest matches', el('span', { class: 'mono pt-digest' }, v.verdict.digest.slice(0, 16)));
  if (v.verdict.kind === 'mismatch') {
    return el(
      'div',
      { class: 'pt-verdict bad', 'data-verdict': 'mismatch' },
      el('p', {}, `re-derived, digest MISMATCH: ${v.verdict.reason}`),
      el('dl', {}, el('dt', {}, 'expected (journal)'), el('dd', { class: 'mono' }, v.verdict.expected || '—'), el('dt', {}, 'got (re-derived)'), el('dd', { class: 'mono' }, v.verdict.got ?? 'no plan')),
    );
  }
  return el('p', { class: 'pt-verdict muted', 'data-verdict': 'not-derived' }, `not re-derived: ${v.verdict.reason}`);
}

function noMethodBox(n: NonNullable<EpochPlanView['noMethod']>): HTMLElement {
  const methods = n.goal.methods ?? [];
  return el(
    'div',
    { class: 'pt-nomethod' },
    el('p', {}, el('strong', {}, 'why no method applied: '), n.explanation),
    methods.length
      ? el('table', { class: 'pt-methods' }, el('thead', {}, el('tr', {}, el('th', {}, `method of ${n.goal.task}`), el('th', {}, 'outcome'), el('th', {}, 'failed at'))), el('tbody', {}, ...methods.map((m) => el('tr', {}, el('td', { class: 'mono' }, m.method), el('td', {}, m.outcome), el('td', { class: 'mono' }, m.failed ?? '')))))
      : null,
    n.recorded === null ? null : n.recorded === n.explanation ? el('p', { class: 'note' }, 're-derived: the same explanation the runtime gave the model when it asked for a fragment') : el('p', { class: 'note bad' }, `the model was told something else: ${n.recorded}`),
  );
}

function authoredBox(a: NonNullable<EpochPlanView['authored']>, k: number): HTMLElement {
  const admission = a.admission && a.admission.seq <= k ? a.admission : null;
  return el(
    'dl',
    { class: 'pt-checks' },
    el('dt', {}, 'authored'),
    el('dd', {}, `by the model, reply at seq ${a.seq} (attempt ${a.attempt})`),
    el('dt', {}, 'constraints'),
    el('dd', { class: a.constraints ? 'bad' : 'ok' }, a.constraints ?? "the goal's declared constraints hold"),
    el('dt', {}, 'admission'),
    el('dd', { class: admission && admission.decision !== 'allow' ? 'bad' : '' }, admission ? `${admission.decision} by ${admission.policy}${admission.reason ? ` — ${admission.reason}` : ' (contract envelope and policy passed)'}` : 'not yet decided'),
  );
}

function epochBlock(v: EpochPlanView, k: number, records: readonly LineRecord[]): HTMLElement {
  const ready = v.seq <= k;
  const rejected = v.rejected.filter((r) => r.seq <= k);
  return el(
    'div',
    { class: 'pt-epoch', 'data-epoch': String(v.epoch) },
    epochHeading(v.epoch, v.goal, ready ? v.source : undefined),
    ready ? verdictLine(v) : el('p', { class: 'pt-verdict muted' }, 'not planned yet at this record'),
    v.noMethod && v.noMethod.seq <= k ? noMethodBox(v.noMethod) : null,
    ready && v.authored ? authoredBox(v.authored, k) : null,
    ready && v.tree ? treeList(v.tree, stepStates(records, v.epoch)) : null,
    ...rejected.map((r) => el('p', { class: 'pt-rejected' }, el('strong', {}, `reply rejected (attempt ${r.attempt}, seq ${r.seq}): `), r.reason)),
  );
}

/**
 * The plan-tree section for the records up to seq k (`records` is that prefix). `plans` is the
 * server's answer (null while it loads, or an Error when it could not be had).
 */
export function planTreeSection(records: readonly LineRecord[], _description: DescriptionView | null, plans: PlansView | Error | null): HTMLElement {
  const k = records.length ? Math.max(...records.map((r) => (typeof r.seq === 'number' ? r.seq : -1))) : -1;
  const present = new Set(records.map((r) => r.epoch));
  const head = el('h2', {}, 'plan trees');
  if (plans === null) return el('section', { class: 'pt', id: 'plans' }, head, el('p', { class: 'loading' }, 're-deriving…'));
  if (plans instanceof Error) return el('section', { class: 'pt', id: 'plans' }, head, el('p', { class: 'error' }, `the plans could not be had: ${plans.message}`));
  const shown = plans.epochs.filter((e) => present.has(e.epoch));
  return el(
    'section',
    { class: 'pt', id: 'plans' },
    head,
    el('p', { class: 'pt-lib' }, 'library ', el('span', { class: 'mono' }, plans.library.name ?? '?'), ' ', el('span', { class: 'mono muted' }, plans.library.digest.slice(0, 16)), ' · re-derived by the viewer from the pinned library and each recorded observation'),
    shown.length === 0 ? el('p', { class: 'empty' }, plans.problem ? `not re-derived: ${plans.problem}` : 'no epoch planned yet') : null,
    ...shown.map((e) => epochBlock(e, k, records)),
  );
}
