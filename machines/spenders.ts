/**
 * Which actuators spend — declared once, on the actuator: `spends: 'amount'` names the numeric
 * arg of a world effect that is money out (a charge, a refund, a payout). Under behaviour flag 2
 * the contract envelope's spending cap (envelope.ts) and spendApprovalPolicy's limit count only
 * those actuators, so a message that mentions an amount ("we refunded 600") is not spending.
 *
 * The declarations are pinned: a new invocation records the sorted list of its spending actuators
 * (name and arg) in `pin.spenders`, and admission — live, on resume, on replay — reads the spend
 * scope from the pin (`pinnedSpendScope`), never from the actuators a runtime has now. So a replay
 * by a runtime with no actuators re-derives the same admissions, and an edit of `spends` applies
 * to new invocations only (resuming an older one with it is a pin mismatch, runtime/pin-check.ts).
 *
 * An empty list means "undeclared": a domain that declares `spends` nowhere keeps the rule before
 * flag 2 — every world effect passing the cap's arg counts (`spend.actuators` still scopes it) —
 * so existing domains run, resume and replay unchanged, and the rule that counts more applies.
 *
 * `spendDeclarationProblem` refuses, when a domain or runtime is built, a declaration that could
 * be read two ways — checked only for a domain that uses `spends`:
 * - `spends` that is not a non-empty string, or on a read-only actuator (a read changes nothing);
 * - `spends` naming another arg than the one the envelope caps (which of the two is money?);
 * - the envelope's `spend.actuators` listing other actuators than those that declare `spends`.
 *
 * Pure: no clock, no I/O; lists are sorted by code unit, never left in iteration order.
 */
import type { Pin } from '../journal/records.js';
import type { ContractEnvelope } from './envelope.js';
import { FLAG_DECLARED_SPEND, hasFlag } from './flags.js';

/** What the check needs of an actuator. */
export interface SpendingDeclaration {
  name: string;
  readOnly: boolean;
  spends?: unknown;
}

/** One pinned spending actuator: its name and the arg that is money out. */
export type PinnedSpender = NonNullable<Pin['spenders']>[number];

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The actuators that declare they spend. */
export function spendersOf(actuators: readonly SpendingDeclaration[]): ReadonlySet<string> {
  return new Set(pinnedSpenders(actuators).map((s) => s.actuator));
}

/**
 * What a new invocation pins as `pin.spenders`: every actuator that declares `spends` (a non-empty
 * string, not read-only), sorted by name then arg; empty when none declares (undeclared).
 */
export function pinnedSpenders(actuators: readonly SpendingDeclaration[]): PinnedSpender[] {
  return actuators
    .filter((a): a is SpendingDeclaration & { spends: string } => typeof a.spends === 'string' && a.spends.length > 0 && !a.readOnly)
    .map((a) => ({ actuator: a.name, arg: a.spends }))
    .sort((a, b) => byCodeUnit(a.actuator, b.actuator) || byCodeUnit(a.arg, b.arg));
}

/**
 * The spend scope of an invocation with this pin: the pinned spending actuators under flag 2 when
 * it declares some; undefined — every world effect passing the arg, the rule before flag 2 — without
 * flag 2, or when the pin declares none (an undeclared domain, or a flag-2 pin without the list).
 */
export function pinnedSpendScope(pin: Pick<Pin, 'flags' | 'spenders'>): ReadonlySet<string> | undefined {
  if (!hasFlag(pin, FLAG_DECLARED_SPEND)) return undefined;
  const declared = pin.spenders ?? [];
  return declared.length === 0 ? undefined : new Set(declared.map((s) => s.actuator));
}

/** The pinned list as one line: `card.charge (amount), refund.issue (amount)`, or `none declared`. */
export function describeSpenders(spenders: readonly PinnedSpender[]): string {
  return spenders.length === 0 ? 'none declared' : spenders.map((s) => `${s.actuator} (${s.arg})`).join(', ');
}

const names = (list: Iterable<string>) => [...list].sort(byCodeUnit).join(', ') || 'none';

/** A one-line reason the declaration is ambiguous, saying what to change; undefined when it is not. */
export function spendDeclarationProblem(envelope: ContractEnvelope | undefined, actuators: readonly SpendingDeclaration[]): string | undefined {
  const declared = actuators.filter((a) => a.spends !== undefined);
  // A domain that declares spends nowhere is not ambiguous: it keeps the rule before flag 2.
  if (declared.length === 0) return undefined;
  for (const a of declared) {
    if (typeof a.spends !== 'string' || a.spends.length === 0) return `actuator ${a.name}: spends must name its numeric arg that is money out (e.g. spends: 'amount'), got ${JSON.stringify(a.spends)}`;
    if (a.readOnly) return `actuator ${a.name} is readOnly and declares spends: '${a.spends}'; a read spends nothing — drop spends or readOnly`;
  }
  const spend = envelope?.spend;
  if (!spend) return undefined;
  const other = declared.find((a) => a.spends !== spend.arg);
  if (other) {
    return `actuator ${other.name} declares spends: '${String(other.spends)}' but the policy's envelope caps '${spend.arg}'; name the same arg in both`;
  }
  if (spend.actuators !== undefined) {
    const spenders = spendersOf(actuators);
    const listed = new Set(spend.actuators);
    const same = listed.size === spenders.size && [...listed].every((name) => spenders.has(name));
    if (!same) {
      return `the policy's envelope lists spend.actuators ${names(listed)} but the actuators that declare spends are ${names(spenders)}; declare spending once, on the actuators (spends: '${spend.arg}'), and drop spend.actuators`;
    }
  }
  return undefined;
}
