/**
 * Advisories — the invocation inbox's second compartment. The inbox's command slot (store.ts
 * `InboxMessage`: approval, cancel, rest) holds one message the runtime must act on; beside it, the
 * advisories are messages for a person only: each is a warning a rule raised (behaviour flag 12),
 * copied from the `admission.decided` record that holds it — its seq and the warning's index there
 * name it, so raising the same one twice (a resume re-deriving that record) keeps one.
 *
 * An advisory is never a command. It lives apart from the command slot (its own key or file), is
 * never returned by `peekInbox`, and its `type: 'advisory'` is not one `isInboxMessage` accepts —
 * so neither serve nor resume can take it for an approval or a cancel, and writing one cannot
 * replace a decision or a cancel waiting in the slot. It stops nothing and changes no run. The
 * journal stays the record: an advisory is observability (unhashed, like the status note), and
 * what `weft ls --warnings` lists. Pure.
 */

export interface AdvisoryMessage {
  type: 'advisory';
  /** The `admission.decided` record that holds the warning, and the warning's index in its `warnings`. */
  seq: number;
  index: number;
  epoch: number;
  subject: 'authoring' | 'epoch' | 'step';
  /** The step, for a step's admission at dispatch. */
  step?: number;
  /** The rule that warned (the pack's rule id) and why. */
  rule: string;
  reason: string;
  /** ms since the epoch, the raising runtime's clock (observability). */
  at: number;
}

/** At most this many advisories are kept per invocation (the first ones): a run with thousands of warned steps cannot grow its inbox without bound. */
export const MAX_ADVISORIES = 1000;

const count = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const text = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;

export function isAdvisoryMessage(value: unknown): value is AdvisoryMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  return (
    m.type === 'advisory' &&
    count(m.seq) &&
    count(m.index) &&
    count(m.epoch) &&
    (m.subject === 'authoring' || m.subject === 'epoch' || m.subject === 'step') &&
    (m.step === undefined || count(m.step)) &&
    text(m.rule, 200) &&
    text(m.reason, 2000) &&
    typeof m.at === 'number' &&
    Number.isFinite(m.at)
  );
}

/** Throws unless `message` is an advisory (what every store's putAdvisory accepts). */
export function assertAdvisoryMessage(message: unknown): asserts message is AdvisoryMessage {
  if (!isAdvisoryMessage(message)) throw new TypeError('not an advisory: { type: "advisory", seq, index, epoch, subject, step?, rule, reason, at }');
}

/** The key an advisory is kept under: one per warning of one record. */
export function advisoryKey(message: Pick<AdvisoryMessage, 'seq' | 'index'>): string {
  return `${message.seq}.${message.index}`;
}

/** Advisories in journal order (seq, then index), each kept once; those that do not read as advisories are left out (a damaged entry reads as absent). */
export function orderedAdvisories(values: readonly unknown[]): AdvisoryMessage[] {
  const byKey = new Map<string, AdvisoryMessage>();
  for (const value of values) if (isAdvisoryMessage(value) && !byKey.has(advisoryKey(value))) byKey.set(advisoryKey(value), value);
  return [...byKey.values()].sort((a, b) => a.seq - b.seq || a.index - b.index);
}

/** Parse a stored advisory's JSON text; undefined when it is not one. */
export function parseAdvisory(textValue: string): AdvisoryMessage | undefined {
  try {
    const value: unknown = JSON.parse(textValue);
    return isAdvisoryMessage(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
