// The journal's fast paths against their specifications:
// - validate-fast.ts against the zod schemas of records.ts: fast accept ⇒ zod accepts, always; and
//   on ordinary data (plain objects and arrays, no `__proto__` key) they agree exactly — for every
//   kind, on random valid bodies and on mutated ones;
// - the composed hashed text (chain.ts) against canonicalize + SHA-256 (noble, the reference);
// - encode.ts `recordLine` against `canonicalize(record)`;
// - the reader's canonical-line fast path against the complete path (verifyRecords on the parsed
//   values), on canonical journals and on lines re-serialized non-canonically.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { canonicalBytes, canonicalize } from '../journal/canonical.js';
import { chainRecord, chainRecordForAppend, genesisHash, hashedBytes, recordHash } from '../journal/chain.js';
import { bytesToHex, hexToBytes, referenceSha256 } from '../journal/digest.js';
import { forgetContentText, recordLine } from '../journal/encode.js';
import { readJournalText, verifyRecords } from '../journal/reader.js';
import { recordKinds, recordShapeSchema, type JournalRecord, type RecordKind } from '../journal/records.js';
import { fastBodyOk, fastShapeOk } from '../journal/validate-fast.js';
import { fixtureKey, sealRecord } from './fixtures/journal/make.js';
import { clone, count, digest, hasProtoKey, json, keysInOrder, mutate, mutation, name, ordinary, pin, str, validBody, zodOk } from './journal-body-generators.js';


describe('fast validators vs the zod schemas', () => {
  test('valid bodies of every kind: fast and zod both accept', () => {
    fc.assert(
      fc.property(validBody, ([k, body]) => {
        expect(zodOk(k, body)).toBe(true);
        // The fast path hands any own `__proto__` member to zod on purpose (validate-fast.ts).
        if (hasProtoKey(body)) return;
        expect(fastBodyOk(k, body)).toBe(true);
        // Parsed from canonical JSON, the sorted mode accepts unless V8 lists an integer-like key
        // out of text order (then the reader takes the slow path).
        const parsed: unknown = JSON.parse(canonicalize(body));
        expect(fastBodyOk(k, parsed, true, true)).toBe(keysInOrder(parsed));
      }),
      { numRuns: 1000 },
    );
  });

  test('mutated bodies: fast accept ⇒ zod accept; on ordinary data they agree', () => {
    let agreedRejects = 0;
    fc.assert(
      fc.property(validBody, fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.constantFrom(...recordKinds), fc.boolean(), ([k, body], ms, otherKind, swapKind) => {
        const kindUsed = swapKind ? otherKind : k;
        const mutated = ms.reduce(mutate, body);
        const zod = zodOk(kindUsed, mutated);
        const fast = fastBodyOk(kindUsed, mutated);
        if (fast) expect(zod).toBe(true);
        if (fastBodyOk(kindUsed, mutated, true, false)) expect(zod).toBe(true);
        if (ordinary(mutated)) expect(fast).toBe(zod);
        if (!zod && !fast) agreedRejects++;
      }),
      { numRuns: 4000 },
    );
    expect(agreedRejects).toBeGreaterThan(1000); // the mutations do reach the validators
  });

  test('sorted mode refuses out-of-order keys (they go to the slow path)', () => {
    expect(fastBodyOk('invocation.handed_off', { reason: 'x' }, true, true)).toBe(true);
    expect(fastBodyOk('step.completed', { step: 0, key: 'k', attempt: 1, result: 1 }, true, true)).toBe(false);
    expect(fastBodyOk('step.completed', { attempt: 1, key: 'k', result: { b: 1, a: 2 }, step: 0 }, true, true)).toBe(false);
    expect(fastBodyOk('step.completed', { attempt: 1, key: 'k', result: { a: 2, b: 1 }, step: 0 }, true, true)).toBe(true);
    expect(fastBodyOk('step.completed', { attempt: 1, key: 'k', result: { '10': 1, '9': 2 }, step: 0 }, true, true)).toBe(false); // V8 lists "9" first
  });

  test('record shape: fast accept ⇒ zod accept; canonical parsed records are accepted', () => {
    const record = fc.record(
      { seq: count, kind: fc.oneof(fc.constantFrom(...recordKinds), str), epoch: count, body: json, prev: digest, hash: digest, meta: fc.record({ at: str, worker: str, writer: str }, { requiredKeys: [] }) },
      { requiredKeys: ['seq', 'kind', 'epoch', 'body', 'prev', 'hash'] },
    );
    fc.assert(
      fc.property(record, fc.array(mutation, { maxLength: 2 }), (r, ms) => {
        expect(fastShapeOk(JSON.parse(canonicalize(r)))).toBe(true);
        const mutated = ms.reduce(mutate, r);
        if (fastShapeOk(mutated, false)) expect(recordShapeSchema.safeParse(mutated).success).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('composed canonical texts', () => {
  const content = validBody.chain(([k, body]) => fc.record({ seq: count, kind: fc.constant(k), epoch: count, body: fc.constant(body) }));

  test('the hash is SHA-256(prev ‖ canonical({seq, kind, epoch, body})), by the reference implementation', () => {
    fc.assert(
      fc.property(digest, content, (prev, c) => {
        const canonical = canonicalBytes({ seq: c.seq, kind: c.kind, epoch: c.epoch, body: c.body });
        const expected = new Uint8Array(32 + canonical.length);
        expected.set(hexToBytes(prev), 0);
        expected.set(canonical, 32);
        expect(hashedBytes(prev, c as never)).toEqual(expected);
        const hash = bytesToHex(referenceSha256(expected));
        expect(recordHash(prev, c as never)).toBe(hash);
        expect(chainRecord(prev, c as never).hash).toBe(hash);
        expect(chainRecordForAppend(prev, c as never).hash).toBe(hash);
      }),
      { numRuns: 500 },
    );
  });

  test('recordLine(record) === canonicalize(record), with or without the texts, after edits', () => {
    const meta = fc.option(fc.record({ at: str, writer: str }, { requiredKeys: [] }), { nil: undefined });
    const edit = fc.constantFrom('none', 'newBody', 'extraKey', 'metaUndefined', 'metaReplaced', 'metaAfter', 'seq', 'deepEdit');
    fc.assert(
      fc.property(digest, content, meta, edit, fc.boolean(), (prev, c, m, e, remembered) => {
        // The writer hands the envelope to chainRecordForAppend; a meta set afterwards is a change.
        const record = (remembered ? chainRecordForAppend(prev, c as never, e === 'metaAfter' ? undefined : m) : chainRecord(prev, c as never)) as JournalRecord;
        if (m !== undefined && (!remembered || e === 'metaAfter')) record.meta = m;
        if (e === 'metaReplaced') record.meta = { writer: 'someone else' };
        if (e === 'newBody') record.body = clone(record.body) as never;
        if (e === 'extraKey') (record as unknown as Record<string, unknown>).extra = 1;
        if (e === 'metaUndefined') record.meta = undefined;
        if (e === 'seq') record.seq += 1;
        if (e === 'deepEdit' && !remembered && record.body !== null && typeof record.body === 'object') (record.body as Record<string, unknown>).zz = 1;
        expect(recordLine(record)).toBe(canonicalize(record));
        forgetContentText([record]);
        expect(recordLine(record)).toBe(canonicalize(record));
      }),
      { numRuns: 1000 },
    );
  });

  test('recordLine reports an unencodable member like canonicalize does', () => {
    const record = chainRecordForAppend('a'.repeat(64), { seq: 1, kind: 'invocation.handed_off', epoch: 0, body: { reason: 'x' } }) as JournalRecord;
    record.meta = { at: '\ud800' };
    expect(() => recordLine(record)).toThrow(/cannot canonicalize \$\.meta\.at: string contains a lone UTF-16 surrogate/);
    expect(() => chainRecord('a'.repeat(64), { seq: 1, kind: 'invocation.handed_off', epoch: Number.NaN, body: { reason: 'x' } })).toThrow(/cannot canonicalize \$\.epoch: NaN/);
    expect(() => chainRecord('a'.repeat(64), { seq: 1, kind: 'state.observed', epoch: 0, body: { actuator: 'a', key: 'k', state: { n: Infinity } } })).toThrow(/cannot canonicalize \$\.body\.state\.n: Infinity/);
  });
});

describe('reader fast path vs the complete path', () => {
  const key = fixtureKey('fast-path');
  const pinArb = pin.map((p) => p as never);
  const journal = fc
    .tuple(name, pinArb, fc.array(validBody.filter(([k]) => k !== 'invocation.pinned' && k !== 'invocation.rekeyed' && k !== 'invocation.sealed'), { maxLength: 12 }), fc.boolean())
    .map(([invocation, p, drafts, sealed]) => {
      const records: JournalRecord[] = [];
      let prev = genesisHash(invocation, p);
      const all = [['invocation.pinned', { schema: 1, invocation, tenant: 't', intent: 'i', pin: p }] as const, ...drafts];
      for (const [k, body] of all) {
        const r = chainRecord(prev, { seq: records.length, kind: k as RecordKind, epoch: 0, body: body as never }) as JournalRecord;
        r.meta = { writer: 'w' };
        records.push(r);
        prev = r.hash;
      }
      if (sealed) records.push(sealRecord(records, key));
      return records;
    });

  /** Same JSON value, other text: not canonical, so the fast path must hand it to the slow one. */
  const respell = fc.constantFrom(
    (line: string) => line.replace('{"body":', '{ "body":'),
    (line: string) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(line) as object).reverse())),
    (line: string) => line.replace(/"([a-z])/, (_, c: string) => `"\\u00${c.charCodeAt(0).toString(16)}`),
    (line: string) => line.replace(/:(\d+)([,}])/, ':$1.0$2'),
    (line: string) => line.replace(/"seq":(\d+)/, '"seq":$1,"seq":$1'),
    (line: string) => line.replace('"body":{', '"body":{"zz":1,'),
    (line: string) => line,
  );

  test('readJournalText gives the verdict verifyRecords gives on the parsed lines', () => {
    fc.assert(
      fc.property(journal, fc.array(fc.tuple(fc.nat(), respell), { maxLength: 3 }), (records, edits) => {
        const lines = records.map((r) => canonicalize(r));
        for (const [at, f] of edits) lines[at % lines.length] = f(lines[at % lines.length]!);
        const text = lines.map((l) => l + '\n').join('');
        const fast = readJournalText(text);
        const slow = verifyRecords(lines.map((l) => JSON.parse(l) as unknown));
        expect(fast.error?.message).toBe(slow.error?.message);
        expect(fast.ok).toBe(slow.ok);
        expect(fast.records).toEqual(slow.records);
        expect(fast.fingerprint).toBe(slow.fingerprint);
        if (edits.length === 0) expect(fast.ok).toBe(true);
      }),
      { numRuns: 400 },
    );
  });
});
