/**
 * Behaviour flags: numbered changes of what the runtime records, pinned in `invocation.pinned`
 * (`pin.flags`) so that an invocation resumes and replays under the behaviour it started with.
 * A journal pinned without a flag replays exactly as before the flag existed; new invocations pin
 * every flag the runtime implements.
 *
 * 1 — fail closed: pinned caps on intents, replies, args and summaries; strict JSON replies (no
 *     duplicate names, bounded depth, well-formed Unicode); task constraints and the policy's
 *     contract envelope checked on every epoch and step; the authoring call admitted, authored
 *     world effects approved, every authored step's admission recorded.
 * 2 — spend counted only on the actuators that spend: the envelope's spending cap sums its arg
 *     over the steps whose actuator declares `spends` (machines/spenders.ts), not over every world
 *     effect that happens to pass an arg of that name.
 * 3 — the sealing key pinned at start: the pin records the key id that will seal the journal
 *     (`pin.sealKey`); a resume or approval that would seal with another key is refused unless it
 *     re-keys explicitly, which the journal records (`invocation.rekeyed`); replay and verify hold
 *     the seal to the key in force (pinned, or the last re-key's).
 */
import type { Pin } from '../journal/records.js';

export const FLAG_FAIL_CLOSED = 1;
export const FLAG_DECLARED_SPEND = 2;
export const FLAG_SEAL_KEY_PINNED = 3;

/** Every flag this version implements (what a new invocation pins). */
export const IMPLEMENTED_FLAGS: readonly number[] = [FLAG_FAIL_CLOSED, FLAG_DECLARED_SPEND, FLAG_SEAL_KEY_PINNED];

export function hasFlag(pin: Pick<Pin, 'flags'>, flag: number): boolean {
  return pin.flags.includes(flag);
}
