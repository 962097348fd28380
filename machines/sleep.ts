/**
 * Durable sleep: the built-in `weft.sleep` step. An operator binds it like any actuator —
 * `actuator: { actuator: 'weft.sleep', args: { until: '?when' } }` — where `until` is an ISO 8601
 * time (a string) or milliseconds since the epoch (a number). It is not a world effect and runs on
 * no worker: the runtime records `timer.set`, the invocation rests in `awaitingTimer` (status
 * `waiting_timer`) with no actor in memory, and `weft serve` (or a `resume` once the time has come)
 * wakes it, recording `timer.fired`. Resumed early, it rests again. Pure: the clock is the runtime's.
 */
export const SLEEP_ACTUATOR = 'weft.sleep';

/** The sleep step's `until` as ISO 8601, or throws with what to write. */
export function sleepUntil(args: Record<string, string | number> | undefined): string {
  const raw = args?.until;
  const ms = typeof raw === 'number' ? raw : typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
  if (!Number.isFinite(ms)) throw new TypeError(`a ${SLEEP_ACTUATOR} step needs args { until: <ISO 8601 time or ms since the epoch> }, got ${JSON.stringify(raw)}`);
  return new Date(ms).toISOString();
}

/** Why a sleep step's args are not usable, or undefined (certification). */
export function sleepArgsProblem(args: Record<string, string | number> | undefined): string | undefined {
  try {
    sleepUntil(args);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
