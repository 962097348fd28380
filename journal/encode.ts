/**
 * A record's stored line: the canonical JSON of the whole record (RFC 8785), which in canonical key
 * order is
 *
 *   {"body":B,"epoch":E,"hash":"H","kind":"K","meta":M,"prev":"P","seq":S}      (meta omitted when absent)
 *
 * On the writer's path, `chainRecordForAppend` (chain.ts) already canonicalized the body, epoch,
 * kind and seq for the hash; it leaves those texts here (a WeakMap keyed by the record object) for
 * the duration of the append, and `recordLine` composes the line from them plus hash, prev and
 * meta instead of canonicalizing the body a second time. The bytes are exactly
 * `canonicalize(record)` (test/journal-fast-path.test.ts proves it on random records): whenever
 * the record is not the plain object `chainRecord` returned with the same members (different body
 * object, changed seq/epoch/kind, an extra key), it falls back to `canonicalize`.
 *
 * The texts are only valid while the body cannot have changed: the writer chains and appends in
 * one synchronous step and forgets the texts when the append returns. Records chained by the public
 * `chainRecord` never have texts here — a caller may edit a body after chaining (a test makes an
 * unencodable record that way), and the store must then write, or refuse, the body as it is.
 *
 * Pure: no I/O.
 */
import { canonicalize, canonicalizeMember } from './canonical.js';
import type { JournalRecord } from './records.js';

/** The canonical texts of a record's hashed members, as chain.ts computed them. */
export interface ContentText {
  body: unknown;
  bodyText: string;
  epoch: unknown;
  epochText: string;
  kind: unknown;
  kindText: string;
  seq: unknown;
  seqText: string;
}

const texts = new WeakMap<object, ContentText>();

/** Called by chain.ts (`chainRecordForAppend`) for each record it returns. */
export function rememberContentText(record: object, text: ContentText): void {
  texts.set(record, text);
}

/** Drop the texts of these records (after their append, successful or not). */
export function forgetContentText(records: readonly object[]): void {
  for (const record of records) texts.delete(record);
}

const RECORD_KEYS = new Map(['body', 'epoch', 'hash', 'kind', 'prev', 'seq', 'meta'].map((key, i) => [key, 1 << i]));
const REQUIRED = 0b0111111;
const META = 0b1000000;

/** `canonicalize(record)`, composed from the texts chain.ts computed when it can be. */
export function recordLine(record: JournalRecord): string {
  const text = texts.get(record);
  if (
    text === undefined ||
    record.body !== text.body ||
    record.epoch !== text.epoch ||
    record.kind !== text.kind ||
    record.seq !== text.seq ||
    Object.getPrototypeOf(record) !== Object.prototype
  ) {
    return canonicalize(record);
  }
  // Exactly the members canonicalize would write: these keys, each own and enumerable.
  let seen = 0;
  for (const key of Object.keys(record)) {
    const bit = RECORD_KEYS.get(key);
    if (bit === undefined) return canonicalize(record);
    seen |= bit;
  }
  const { hash, prev, meta } = record;
  if ((seen & REQUIRED) !== REQUIRED || hash === undefined || prev === undefined) return canonicalize(record);
  if (meta !== undefined && (seen & META) === 0) return canonicalize(record);
  return (
    `{"body":${text.bodyText},"epoch":${text.epochText},"hash":${canonicalizeMember('hash', hash)},"kind":${text.kindText}` +
    (meta === undefined ? '' : `,"meta":${canonicalizeMember('meta', meta)}`) +
    `,"prev":${canonicalizeMember('prev', prev)},"seq":${text.seqText}}`
  );
}
