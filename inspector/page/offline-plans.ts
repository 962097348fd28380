/**
 * The plans of a dropped journal or bundle (offline-run.ts), where the invocation page shows each
 * epoch's plan tree re-derived (plan-tree.ts, from the server's inspector/plan-trees.ts).
 *
 * A plan tree is not re-derived offline, and the section says so in one sentence: re-deriving runs
 * the HTN planner over the pinned library and the recorded observation — and a domain's evaluable
 * predicates, which are code — on a viewer's server (`weft inspect` over the run's store, or
 * `weft replay` of the bundle). Nothing is faked: what is shown is what the journal recorded — each
 * epoch's goal, its plan's source and digest (`epoch.derived`), and its steps as their records say
 * (runtime/describe-epoch.ts `epochsOf`), under the heading "recorded", never "re-derived".
 * Goals, operators and actuators come from the library and the model: text only (dom.ts).
 */
import { el } from './dom.js';
import { epochHeading } from './plan-tree.js';
import type { EpochView } from './wire.js';

export const PLANS_OFFLINE =
  "Plan trees are not re-derived offline: re-deriving one runs the HTN planner over the pinned library and the recorded observation (and a domain's evaluables, which are code), which a viewer over the run's store does (weft inspect), not this page. Shown: what the journal recorded.";


function epochBlock(e: EpochView): HTMLElement {
  return el(
    'div',
    { class: 'pt-epoch', 'data-epoch': String(e.epoch) },
    epochHeading(e.epoch, e.goal, e.source),
    el(
      'p',
      { class: 'pt-verdict muted', 'data-verdict': 'offline' },
      e.plan ? 'recorded plan, not re-derived offline' : 'no plan recorded',
      e.plan ? el('span', { class: 'mono pt-digest', title: e.plan }, e.plan.slice(0, 16)) : null,
    ),
    e.steps.length
      ? el(
          'ul',
          { class: 'pt-tree pt-recorded' },
          ...e.steps.map((s) =>
            el(
              'li',
              {},
              el(
                'div',
                { class: 'pt-node pt-step' },
                el('span', { class: 'pt-index num' }, `#${s.step}`),
                // The journal names a step's operator only through a snapshot's plan: without one, its actuator says what it did.
                s.operator ? el('span', { class: 'mono pt-call' }, s.operator) : null,
                s.actuator ? el('span', { class: 'mono pt-actuator' }, `→ ${s.actuator}`) : null,
                el('span', { class: `pt-state pt-${s.outcome}` }, s.outcome),
              ),
            ),
          ),
        )
      : null,
  );
}

/** The plans section of an offline run: the notice, then each epoch as recorded. `bundle`: the file carried its library. */
export function offlinePlansSection(epochs: readonly EpochView[], bundle: boolean): HTMLElement {
  return el(
    'section',
    { class: 'pt', id: 'offline-plans', 'data-offline': 'yes' },
    el('h2', {}, 'plans'),
    el('p', { class: 'note pt-offline', id: 'plans-offline' }, PLANS_OFFLINE, bundle ? ' The bundle carries the pinned library, so weft replay can re-derive them from this file alone.' : ''),
    ...(epochs.length ? epochs.map(epochBlock) : [el('p', { class: 'empty' }, 'no epoch recorded')]),
  );
}
