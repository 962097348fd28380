// Property test of the journal reader (journal/reader.ts): random valid sealed journals × one
// random mutation of a hashed part. Every mutation must be detected (ok === false) and reported at
// the FIRST affected seq, computed independently from the mutation. A byte flip that leaves the
// parsed record canonically identical (e.g. `1e+21` → `1e021`, `\u001f` → `\u001F`) is not a
// mutation of the hashed content: the reader must then accept the journal unchanged.

import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { readJournalText } from '../journal/reader.js';
import { buildJournal } from './fixtures/journal/make.js';
import { journal, key, mutate, mutation, publicKey, toJsonl } from './journal-verify-generators.js';

function check(text: string, expected: number | 'ok', withKey: boolean): void {
  const report = readJournalText(text, withKey ? { publicKey } : {});
  if (expected === 'ok') {
    expect(report.error?.message).toBeUndefined();
    expect(report.ok).toBe(true);
  } else {
    expect(report.ok).toBe(false);
    expect(report.error?.seq, report.error?.message).toBe(expected);
    expect(report.error?.message).toMatch(new RegExp(`^seq ${expected}: `));
    expect(report.records).toHaveLength(expected); // exactly the records before it passed
  }
}

describe('journal reader', () => {
  test('random valid sealed journals verify, with their fingerprint', () => {
    fc.assert(
      fc.property(journal, (records) => {
        const report = readJournalText(toJsonl(records), { publicKey });
        expect(report.error?.message).toBeUndefined();
        expect(report.ok && report.sealed).toBe(true);
        expect(report.fingerprint).toBe(records.at(-2)!.hash);
        expect(report.records).toHaveLength(records.length);
      }),
      { numRuns: 150 },
    );
  });

  test('every mutation of a hashed part is reported at the first affected seq', () => {
    fc.assert(
      fc.property(journal, mutation, (records, m) => {
        const { text, withKey, withoutKey } = mutate(records, m);
        check(text, withKey, true);
        check(text, withoutKey, false);
      }),
      { numRuns: 600 },
    );
  });

  test('a byte flip that keeps the parsed record canonically identical is accepted', () => {
    const records = buildJournal(
      { invocation: 'inv', tenant: 't', intent: 'x', pin: { library: 'a'.repeat(64), runtime: 'r', flags: [], model: { id: 'm', params: {} }, seed: 's', asOf: 'now', policy: 'p' } },
      [{ kind: 'step.completed', epoch: 1, body: { step: 0, key: 'k', attempt: 1, result: { big: 1e21, ctl: '\u001f' } } }],
      { key },
    );
    const text = toJsonl(records);
    expect(text).toContain('1e+21');
    expect(text).toContain('\\u001f');
    for (const edited of [text.replace('1e+21', '1e021'), text.replace('\\u001f', '\\u001F')]) {
      expect(edited).not.toBe(text);
      const report = readJournalText(edited, { publicKey });
      expect(report.ok).toBe(true);
      expect(report.fingerprint).toBe(records.at(-2)!.hash);
    }
  });

  test('the earliest problem wins over a later line that is not JSON', () => {
    const records = buildJournal(
      { invocation: 'inv', tenant: 't', intent: 'x', pin: { library: 'a'.repeat(64), runtime: 'r', flags: [], model: { id: 'm', params: {} }, seed: 's', asOf: 'now', policy: 'p' } },
      [
        { kind: 'invocation.handed_off', epoch: 0, body: { reason: 'a' } },
        { kind: 'invocation.handed_off', epoch: 0, body: { reason: 'b' } },
      ],
      { key },
    );
    const lines = toJsonl(records).split('\n');
    lines[1] = lines[1]!.replace('"a"', '"A"');
    lines[3] = '{not json';
    const report = readJournalText(lines.join('\n'), { publicKey });
    expect(report.error?.message).toMatch(/^seq 1: hash mismatch/);
  });

  test('a record no writer could produce (lone surrogate) is reported, not thrown', () => {
    const records = buildJournal(
      { invocation: 'inv', tenant: 't', intent: 'x', pin: { library: 'a'.repeat(64), runtime: 'r', flags: [], model: { id: 'm', params: {} }, seed: 's', asOf: 'now', policy: 'p' } },
      [{ kind: 'invocation.handed_off', epoch: 0, body: { reason: 'ab' } }],
    );
    const text = toJsonl(records).replace('"ab"', '"\\ud800"');
    const report = readJournalText(text);
    expect(report.ok).toBe(false);
    expect(report.error?.message).toMatch(/^seq 1: .*lone UTF-16 surrogate/);
  });
});
