/**
 * What a shadow run pins (pin.shadow; docs/operate-shadow.md), decided once at start: whether every
 * world-effect actuator the pinned library can dispatch gives a shadow result (`Actuator.shadow`).
 *
 * - `actuators`: each one does, so each shadowed step records what `run` would have returned and the
 *   run goes on past its shadowed epochs (the next observation is still the real, unchanged world).
 * - `none`: at least one does not (or the dispatcher cannot tell), so no shadow result is asked of
 *   any: nothing at all is sent for a world effect, and the run ends after the first epoch that
 *   shadowed one.
 *
 * The world-effect actuators are those the library's operators bind that are not read-only — the
 * durable sleep (`weft.sleep`) is not one. A library with none pins `actuators`: nothing is shadowed.
 */
import type { Library } from '../htn/library/schema.js';
import type { Pin } from '../journal/records.js';
import { SLEEP_ACTUATOR } from '../machines/sleep.js';
import type { Dispatcher } from '../queue/dispatcher.js';

export type ShadowPin = NonNullable<Pin['shadow']>;

/** The world-effect actuators the library's operators bind, sorted. */
export function worldEffectActuators(library: Library): string[] {
  const names = new Set<string>();
  for (const op of library.operators) if (!op.readOnly && op.actuator && op.actuator.actuator !== SLEEP_ACTUATOR) names.add(op.actuator.actuator);
  return [...names].sort();
}

export function shadowPin(library: Library, dispatcher: Pick<Dispatcher, 'canShadow'> | undefined): ShadowPin {
  const shadowable = (name: string) => dispatcher?.canShadow?.(name) === true;
  return { results: worldEffectActuators(library).every(shadowable) ? 'actuators' : 'none' };
}
