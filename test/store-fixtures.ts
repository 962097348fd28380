/**
 * Record fixtures for store and writer tests: a valid pin, the first record of a journal, and
 * chains of valid records after it — built with the real chain functions, so every fixture
 * passes the reader.
 */
import { chainRecord, genesisHash } from '../journal/chain.js';
import type { JournalRecord, Pin } from '../journal/records.js';

export const testPin: Pin = {
  library: '0'.repeat(64),
  runtime: 'weft@0.1.0',
  flags: [],
  model: { id: 'scripted', params: {} },
  seed: '1',
  asOf: '2026-01-01T00:00:00Z',
  policy: 'allow-all@1',
};

/** The first record of `invocation`'s journal. */
export function pinned(invocation: string): JournalRecord {
  return chainRecord(genesisHash(invocation, testPin), {
    seq: 0,
    kind: 'invocation.pinned',
    epoch: 0,
    body: { schema: 1, invocation, tenant: 'acme', intent: 'conformance', pin: testPin },
  }) as JournalRecord;
}

/** `n` records chained after `after` (or starting the journal when `after` is a string id). */
export function chain(after: JournalRecord | string, n: number): JournalRecord[] {
  const out: JournalRecord[] = [];
  let prev = typeof after === 'string' ? undefined : after;
  for (let i = 0; i < n; i++) {
    const record: JournalRecord =
      prev === undefined
        ? pinned(after as string)
        : (chainRecord(prev.hash, { seq: prev.seq + 1, kind: 'state.observed', epoch: 0, body: { actuator: 'probe', key: `k${prev.seq + 1}`, state: { n: prev.seq + 1 } } }) as JournalRecord);
    out.push(record);
    prev = record;
  }
  return out;
}
