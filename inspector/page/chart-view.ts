/**
 * What the statechart shows lit, as of one record: the current state, where the run has been and
 * the transitions it took — from the trail the server replayed (`/api/invocations/<id>/trail`,
 * inspector/replay-trail.ts), or from the status alone when the journal could not be replayed.
 * Pure: no DOM.
 */
import type { TrailView } from './wire.js';

/** What the chart shows lit: the current state, where the run has been, and the edges it took (the last one apart). */
export interface ChartView {
  current: string | null;
  visited: ReadonlySet<string>;
  taken: ReadonlySet<string>;
  last: string | null;
  /**
   * The path of the whole run, whatever record is shown: every state its trail visits and every
   * transition it takes. The chart lays out only these by default (statechart.ts). Absent when
   * the journal was not replayed.
   */
  route?: { states: ReadonlySet<string>; taken: ReadonlySet<string> };
}

export const EMPTY_VIEW: ChartView = { current: null, visited: new Set(), taken: new Set(), last: null };

/** The trail as of record `k`: the state replay reached once record k was passed, and the path up to it. */
export function viewAt(trail: TrailView, initial: string, k: number): ChartView {
  if (!trail.replayed) return EMPTY_VIEW;
  const route = { states: new Set<string>([initial]), taken: new Set<string>() };
  for (const t of trail.transitions) {
    route.states.add(t.from);
    route.states.add(t.to);
    route.taken.add(t.edge);
  }
  const current = trail.states[Math.min(k, trail.states.length - 1)] ?? null;
  if (current === null) return { ...EMPTY_VIEW, route };
  const visited = new Set<string>([initial]);
  const taken = new Set<string>();
  let last: string | null = null;
  for (const t of trail.transitions) {
    if (t.after > k) break;
    visited.add(t.from);
    visited.add(t.to);
    taken.add(t.edge);
    last = t.edge;
  }
  route.states.add(current);
  return { current, visited, taken, last, route };
}

/** The state a status rests in, for an invocation the viewer could not replay (the page says why). */
export function stateOfStatus(status: string): string | null {
  const states: Record<string, string> = {
    completed: 'completed',
    failed: 'failed',
    handed_off: 'handedOff',
    superseded: 'superseded',
    cancelled: 'cancelled',
    awaiting_approval: 'awaitingApproval',
    waiting_timer: 'awaitingTimer',
    hibernated: 'hibernated',
    suspended: 'suspended',
  };
  return Object.hasOwn(states, status) ? states[status]! : null;
}
