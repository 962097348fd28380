/**
 * The names machine-graph.ts gives the statechart's transitions — an edge's id
 * `<source>|<event>|<index>`, an event's and a guard's shown names — apart from the layout, so that
 * replay-trail.ts names the transitions a replay takes by the same ids without loading dagre: the
 * layout is computed only when a page asks for it (`GET /api/machine`), the trail on every replay.
 */
import type { AnyStateNode, AnyTransitionDefinition } from 'xstate';

/** The id the page and the trail share for a transition: see the header. */
export function edgeId(source: string, event: string, index: number): string {
  return `${source}|${event}|${index}`;
}

/** How an event type is shown: the actor's done and error events by the names the machine's config uses. */
export function eventName(eventType: string): string {
  if (eventType === '') return 'always';
  if (eventType.startsWith('xstate.done.actor.')) return 'onDone';
  if (eventType.startsWith('xstate.error.actor.')) return 'onError';
  return eventType;
}

/** A guard's name, with its parameter when the parameter is static text (`suspendedIn(execute)`). */
export function guardName(guard: AnyTransitionDefinition['guard']): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') return guard.name || 'inline';
  const g = guard as { type?: unknown; params?: unknown };
  const type = typeof g.type === 'string' ? g.type : 'guard';
  return typeof g.params === 'string' ? `${type}(${g.params})` : type;
}

/** A transition's place among its source's transitions for the same event (what `edgeId` numbers). */
export function transitionIndex(t: AnyTransitionDefinition): number {
  const source = t.source as AnyStateNode;
  const list = t.eventType === '' ? source.always ?? [] : source.transitions.get(t.eventType) ?? [];
  return list.indexOf(t);
}
