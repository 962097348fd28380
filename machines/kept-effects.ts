/**
 * How a world effect that stays done is said to a person — one wording wherever weft lists what it
 * leaves applied: the effects a cancel did not undo (`weft cancel`, cli/commands/cancel.ts) and the
 * model-authored effects a handed-off run leaves (flag 11, the `invocation.handed_off` reason):
 *
 *   epoch 1 step 1  taxi.book  key inv-….1.1  amount 35
 *
 * (`amount` only when it is known). The actuator is clipped like any quoted name; the key is the
 * runtime's own idempotency key. Pure.
 */
import type { KeptEffect } from './context.js';
import { clip, QUOTE_CHARS } from './untrusted-text.js';

/** One effect that stays done, in the words cancel prints. */
export function keptEffectText(effect: KeptEffect & { amount?: number }): string {
  const amount = effect.amount === undefined ? '' : `  amount ${effect.amount}`;
  return `epoch ${effect.epoch} step ${effect.step}  ${clip(effect.actuator, QUOTE_CHARS)}  key ${effect.key}${amount}`;
}
