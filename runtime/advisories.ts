/**
 * Raising advisories: each warning an `admission.decided` records (behaviour flag 12) becomes an
 * advisory in the invocation's inbox (journal/advisory.ts) — for a person, never a command: it sits
 * apart from the inbox's command slot, and nothing the runtime does waits on it or reads it.
 *
 * Raised once the record is durable (the handle's `record` event), re-derived records included: a
 * crash between the record and its advisory is mended by the resume that re-derives the record
 * (putAdvisory is idempotent by seq and index). A store that cannot take it loses only the copy —
 * the journal holds the warning, and `weft show` and `weft policy explain` read it there.
 */
import type { AdvisoryMessage } from '../journal/advisory.js';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';

/** The advisories `record` raises: one per warning of an `admission.decided`, none for any other record. */
export function advisoriesOf(record: JournalRecord, at: number): AdvisoryMessage[] {
  if (record.kind !== 'admission.decided') return [];
  const body = (record as JournalRecord<'admission.decided'>).body;
  return (body.warnings ?? []).map((w, index) => ({
    type: 'advisory' as const,
    seq: record.seq,
    index,
    epoch: record.epoch,
    subject: body.subject,
    ...(body.step === undefined ? {} : { step: body.step }),
    rule: w.rule,
    reason: w.reason,
    at,
  }));
}

/**
 * A listener for the handle's `record` event that files each warning as an advisory in
 * `invocation`'s inbox. Each put is its own (a store keeps one per seq and index, so none races
 * another); the memory and file stores do the whole put before the listener returns.
 */
export function advisoryRaiser(store: JournalStore, invocation: string, now: () => number): (record: JournalRecord) => void {
  return (record) => {
    for (const advisory of advisoriesOf(record, now())) void store.putAdvisory(invocation, advisory).catch(() => undefined);
  };
}
