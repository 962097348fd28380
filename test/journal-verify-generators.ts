// The random journal and mutation generators shared by the reader's property test and the
// verify-only tests: random valid sealed journals, one random mutation of a hashed part each, and
// the first affected seq, computed independently from the mutation.
import fc from 'fast-check';
import { expect } from 'vitest';
import '../journal/sha256-node.js';
import { canonicalize } from '../journal/canonical.js';
import { chainRecord } from '../journal/chain.js';
import type { JournalReport, JournalVerdict } from '../journal/reader.js';
import { pinSchema, recordKinds, type BodyOf, type JournalRecord, type Pin, type RecordMeta } from '../journal/records.js';
import { shapeOf } from '../journal/shapes.js';
import { publicKeyOf, signFingerprint } from '../journal/seal.js';
import { buildJournal, fixtureKey, rechain, sealRecord, toJsonl, type Draft, type GenesisInfo } from './fixtures/journal/make.js';
import { arbitraryOf, bodyArbitraries, count } from './record-arbitraries.js';

export { toJsonl };

export const key = fixtureKey('property');
const other = fixtureKey('property-other');
export const publicKey = publicKeyOf(key);

// ---- valid random bodies, one arbitrary per kind (record-arbitraries.ts) ------------------------
const str = fc.string({ unit: 'grapheme', maxLength: 10 });
const name = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 });
const json = fc.jsonValue({ maxDepth: 2, stringUnit: 'grapheme' });
const leaves = { str, name, json };
const bodies = bodyArbitraries(leaves);

// Kinds with a place of their own are left out: the pin (first), the seal (last), a re-key (each from the previous one's key, and the seal by the last one's).
const draftKinds = recordKinds.filter((kind) => kind !== 'invocation.pinned' && kind !== 'invocation.rekeyed' && kind !== 'invocation.sealed');

const draft: fc.Arbitrary<Draft> = fc
  .constantFrom(...draftKinds)
  .chain((kind) => fc.record({ kind: fc.constant(kind), epoch: count, body: bodies[kind] as fc.Arbitrary<never> }));

const genesis: fc.Arbitrary<GenesisInfo> = fc.record({ invocation: name, tenant: name, intent: str, pin: arbitraryOf(shapeOf(pinSchema), leaves) as fc.Arbitrary<Pin> });

const meta: fc.Arbitrary<RecordMeta | undefined> = fc.option(fc.record({ at: str, writer: str }, { requiredKeys: [] }), { nil: undefined });

/** A valid sealed journal of 2..40 records (pinned + 0..38 drafts + seal). */
export const journal = fc
  .tuple(genesis, fc.array(draft, { maxLength: 38 }), fc.array(meta, { minLength: 40, maxLength: 40 }))
  .map(([g, drafts, metas]) => buildJournal(g, drafts, { key, meta: (seq) => metas[seq] }));

// ---- mutations -------------------------------------------------------------------------------
const HASHED = ['seq', 'kind', 'epoch', 'body', 'prev', 'hash'] as const;
type Field = (typeof HASHED)[number];

export type Mutation =
  | { type: 'flip'; at: number; field: Field; offset: number; xor: number }
  | { type: 'drop' | 'duplicate' | 'torn'; at: number; cut: number }
  | { type: 'swap'; at: number; with: number }
  | { type: 'truncate'; k: number }
  | { type: 'schema'; at: number; variant: number }
  | { type: 'reseal'; variant: number };

const nat = fc.nat({ max: 1 << 20 });
export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ type: fc.constant('flip' as const), at: nat, field: fc.constantFrom(...HASHED), offset: nat, xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ type: fc.constantFrom('drop' as const, 'duplicate' as const, 'torn' as const), at: nat, cut: nat }),
  fc.record({ type: fc.constant('swap' as const), at: nat, with: nat }),
  fc.record({ type: fc.constant('truncate' as const), k: nat }),
  fc.record({ type: fc.constant('schema' as const), at: nat, variant: nat }),
  fc.record({ type: fc.constant('reseal' as const), variant: nat }),
);

const encoder = new TextEncoder();
const decoder = new TextDecoder(); // non-fatal, like fs.readFile(file, 'utf8')

/** A record's JSONL line as the stores write it (canonical JSON) and the byte span of each hashed field (key and value). */
export function lineWithSpans(record: JournalRecord): { line: string; spans: Record<Field, [number, number]> } {
  let out = '{';
  const spans = {} as Record<Field, [number, number]>;
  const fields = [...HASHED, ...(record.meta ? (['meta'] as const) : [])].sort();
  fields.forEach((field, i) => {
    if (i > 0) out += ',';
    const start = encoder.encode(out).length;
    out += `${JSON.stringify(field)}:${canonicalize(record[field])}`;
    if (field !== 'meta') spans[field] = [start, encoder.encode(out).length];
  });
  out += '}';
  return { line: out, spans };
}

export interface Expectation {
  text: string;
  /** The first affected seq with the key, or 'ok' when the mutation left the hashed content intact. */
  withKey: number | 'ok';
  /** The same without a key (an unsealed or re-sealed journal is intact as a chain). */
  withoutKey: number | 'ok';
}

/** An invalid body for `kind`; it fails its schema while staying canonical JSON. */
function badBody(record: JournalRecord, variant: number): unknown {
  const body = record.body as Record<string, unknown>;
  switch (variant % 3) {
    case 0:
      return { ...body, unexpected: true }; // bodies are strict objects
    case 1:
      return [body]; // not an object
    default: {
      // a required field of the wrong type (every body has a non-json required field)
      const key = Object.keys(body).find((k) => typeof body[k] === 'string' || typeof body[k] === 'number');
      return key === undefined ? null : { ...body, [key]: typeof body[key] === 'string' ? 1.5 : 'x' };
    }
  }
}

export function mutate(records: JournalRecord[], m: Mutation): Expectation {
  const n = records.length;
  const lines = records.map((r) => canonicalize(r));
  const join = (ls: string[]) => ls.map((l) => l + '\n').join('');
  switch (m.type) {
    case 'flip': {
      const at = m.at % n;
      const { line, spans } = lineWithSpans(records[at]!);
      expect(line).toBe(lines[at]);
      const [start, end] = spans[m.field];
      const bytes = encoder.encode(line);
      const pos = start + (m.offset % (end - start));
      bytes[pos] = bytes[pos]! ^ m.xor;
      const flipped = decoder.decode(bytes);
      let same = false;
      try {
        same = !flipped.includes('\n') && canonicalize(JSON.parse(flipped)) === canonicalize(JSON.parse(line));
      } catch {
        same = false;
      }
      lines[at] = flipped;
      return { text: join(lines), withKey: same ? 'ok' : at, withoutKey: same ? 'ok' : at };
    }
    case 'drop': {
      const at = m.at % n;
      lines.splice(at, 1);
      // dropping the seal leaves a valid unsealed chain
      return { text: join(lines), withKey: at, withoutKey: at === n - 1 ? 'ok' : at };
    }
    case 'duplicate': {
      const at = m.at % n;
      lines.splice(at + 1, 0, lines[at]!);
      return { text: join(lines), withKey: at + 1, withoutKey: at + 1 };
    }
    case 'swap': {
      const a = m.at % n;
      const b = m.with % n;
      if (a === b) return { text: join(lines), withKey: 'ok', withoutKey: 'ok' };
      [lines[a], lines[b]] = [lines[b]!, lines[a]!];
      return { text: join(lines), withKey: Math.min(a, b), withoutKey: Math.min(a, b) };
    }
    case 'truncate': {
      const k = 1 + (m.k % n);
      return { text: join(lines.slice(0, n - k)), withKey: n - k, withoutKey: n - k === 0 ? 'ok' : 'ok' };
    }
    case 'torn': {
      const at = m.at % n;
      const bytes = encoder.encode(lines[at]!);
      const cut = 1 + (m.cut % (bytes.length - 1)); // keep 1..len-1 bytes, no newline
      return { text: join(lines.slice(0, at)) + decoder.decode(bytes.slice(0, cut)), withKey: at, withoutKey: at };
    }
    case 'schema': {
      const at = m.at % n;
      const edited = records.map((r) => ({ ...r }));
      edited[at] = { ...edited[at]!, body: badBody(records[at]!, m.variant) as never };
      let out: JournalRecord[];
      if (at === n - 1) {
        const r = edited[at]!;
        out = [...edited.slice(0, -1), chainRecord(r.prev, { seq: r.seq, kind: r.kind, epoch: r.epoch, body: r.body as never }) as JournalRecord];
      } else {
        out = rechain(edited, at, key); // a valid chain and a valid seal: only the schema check can catch it
      }
      return { text: toJsonl(out), withKey: at, withoutKey: at };
    }
    case 'reseal': {
      const body = records[n - 1]!.body as BodyOf<'invocation.sealed'>;
      const unsealed = records.slice(0, -1);
      let seal: JournalRecord;
      if (m.variant % 3 === 0) {
        seal = sealRecord(unsealed, other); // another key, honestly named
      } else {
        // claims our key id; signed by another key (1) or by us over another message (2)
        const signature = m.variant % 3 === 1 ? signFingerprint(other, body.fingerprint) : signFingerprint(key, body.keyId);
        seal = chainRecord(body.fingerprint, { seq: n - 1, kind: 'invocation.sealed', epoch: records[n - 1]!.epoch, body: { ...body, signature } }) as JournalRecord;
      }
      return { text: toJsonl([...unsealed, seal]), withKey: n - 1, withoutKey: 'ok' };
    }
  }
}


/** The verdict fields both give, in one comparable shape. */
export function verdictOf(r: JournalReport | JournalVerdict): Record<string, unknown> {
  return {
    ok: r.ok,
    count: 'records' in r ? r.records.length : r.count,
    seq: r.error?.seq,
    message: r.error?.message,
    problem: r.error?.problem,
    fingerprint: r.fingerprint,
    sealed: r.sealed,
    keyId: r.keyId,
    invocation: r.invocation,
    tenant: r.tenant,
    pin: r.pin,
  };
}

