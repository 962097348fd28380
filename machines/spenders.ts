/**
 * Which actuators spend — declared once, on the actuator: `spends: 'amount'` names the numeric
 * arg of a world effect that is money out (a charge, a refund, a payout). Under behaviour flag 2
 * the contract envelope's spending cap counts only those actuators (envelope.ts), so a message
 * that mentions an amount ("we refunded 600") is not spending.
 *
 * `spendDeclarationProblem` refuses, when a domain or runtime is built, a declaration that could
 * be read two ways:
 * - `spends` that is not a non-empty string, or on a read-only actuator (a read changes nothing);
 * - `spends` naming another arg than the one the envelope caps (which of the two is money?);
 * - the envelope's `spend.actuators` listing other actuators than those that declare `spends`;
 * - an envelope with a spending cap and no actuator that declares `spends` (the cap would count
 *   nothing under flag 2).
 *
 * Pure: no clock, no I/O.
 */
import type { ContractEnvelope } from './envelope.js';

/** What the check needs of an actuator. */
export interface SpendingDeclaration {
  name: string;
  readOnly: boolean;
  spends?: unknown;
}

/** The actuators that declare they spend. */
export function spendersOf(actuators: readonly SpendingDeclaration[]): ReadonlySet<string> {
  return new Set(actuators.filter((a) => typeof a.spends === 'string' && a.spends.length > 0 && !a.readOnly).map((a) => a.name));
}

const names = (list: Iterable<string>) => [...list].sort().join(', ') || 'none';

/** A one-line reason the declaration is ambiguous, saying what to change; undefined when it is not. */
export function spendDeclarationProblem(envelope: ContractEnvelope | undefined, actuators: readonly SpendingDeclaration[]): string | undefined {
  for (const a of actuators) {
    if (a.spends === undefined) continue;
    if (typeof a.spends !== 'string' || a.spends.length === 0) return `actuator ${a.name}: spends must name its numeric arg that is money out (e.g. spends: 'amount'), got ${JSON.stringify(a.spends)}`;
    if (a.readOnly) return `actuator ${a.name} is readOnly and declares spends: '${a.spends}'; a read spends nothing — drop spends or readOnly`;
  }
  const spend = envelope?.spend;
  if (!spend) return undefined;
  const declared = actuators.filter((a) => a.spends !== undefined);
  const other = declared.find((a) => a.spends !== spend.arg);
  if (other) {
    return `actuator ${other.name} declares spends: '${String(other.spends)}' but the policy's envelope caps '${spend.arg}'; name the same arg in both`;
  }
  const spenders = spendersOf(actuators);
  if (spenders.size === 0) {
    return `the policy's envelope caps spend.arg '${spend.arg}' but no actuator declares spends: '${spend.arg}'; add it to the actuators whose '${spend.arg}' is money out (not to a message that only mentions an amount)`;
  }
  if (spend.actuators !== undefined) {
    const listed = new Set(spend.actuators);
    const same = listed.size === spenders.size && [...listed].every((name) => spenders.has(name));
    if (!same) {
      return `the policy's envelope lists spend.actuators ${names(listed)} but the actuators that declare spends are ${names(spenders)}; declare spending once, on the actuators (spends: '${spend.arg}'), and drop spend.actuators`;
    }
  }
  return undefined;
}
