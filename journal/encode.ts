/**
 * A record's stored line: the canonical JSON of the whole record (RFC 8785), which in canonical key
 * order is
 *
 *   {"body":B,"epoch":E,"hash":"H","kind":"K","meta":M,"prev":"P","seq":S}      (meta omitted when absent)
 *
 * On the writer's path, `chainRecordForAppend` (chain.ts) already canonicalized the body, epoch,
 * kind and seq for the hash; it composes the whole line from those texts, hash, prev and meta, and
 * leaves it here (a WeakMap keyed by the record object) for the duration of the append, so
 * `recordLine` returns it instead of canonicalizing the record a second time. The bytes are
 * exactly `canonicalize(record)` (test/journal-fast-path.test.ts proves it on random records):
 * whenever the record is not the plain object `chainRecordForAppend` returned with the same members
 * (a different body or meta object, changed seq/epoch/kind/prev/hash, an extra key), it falls back
 * to `canonicalize`.
 *
 * The line is the text the hash was computed over, and it is what the store writes: the writer
 * chains the records (at once, or staged for a later append) and forgets the lines when the append
 * that carries them returns. (The append may wait behind earlier writes, and a store may queue it
 * behind another operation on the same journal; a body changed meanwhile is still written as it
 * was hashed.) Records chained by the
 * public `chainRecord` never have a line here — a caller may edit a body after chaining (a test
 * makes an unencodable record that way), and the store must then write, or refuse, the body as it is.
 *
 * Pure: no I/O.
 */
import { canonicalize, canonicalizeMember } from './canonical.js';
import type { JournalRecord, RecordMeta } from './records.js';

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

/** A remembered line and the members it was composed from. */
interface StoredLine {
  text: ContentText;
  prev: string;
  hash: string;
  meta: RecordMeta | undefined;
  line: string;
}

const lines = new WeakMap<object, StoredLine>();

/** The last meta object's canonical text: a writer gives every record of a batch the same one. */
let lastMeta: RecordMeta | undefined;
let lastMetaText = '';

function metaText(meta: RecordMeta): string {
  if (meta !== lastMeta) {
    lastMetaText = canonicalizeMember('meta', meta);
    lastMeta = meta;
  }
  return lastMetaText;
}

/**
 * Called by chain.ts (`chainRecordForAppend`) for each record it returns: `text` are the hashed
 * members' canonical texts, `prevText` prev's. The record's hash is a hex digest chain.ts computed.
 */
export function rememberLine(record: JournalRecord, text: ContentText, prevText: string): void {
  const { hash, meta } = record;
  const line =
    `{"body":${text.bodyText},"epoch":${text.epochText},"hash":"${hash}","kind":${text.kindText}` +
    (meta === undefined ? '' : `,"meta":${metaText(meta)}`) +
    `,"prev":${prevText},"seq":${text.seqText}}`;
  lines.set(record, { text, prev: record.prev, hash, meta, line });
}

/** Drop the lines of these records (after their append, successful or not). */
export function forgetContentText(records: readonly object[]): void {
  for (const record of records) lines.delete(record);
}

const RECORD_KEYS = new Map(['body', 'epoch', 'hash', 'kind', 'prev', 'seq', 'meta'].map((key, i) => [key, 1 << i]));
const REQUIRED = 0b0111111;
const META = 0b1000000;

/** `canonicalize(record)`: the line chain.ts composed when the record is still what it was composed from. */
export function recordLine(record: JournalRecord): string {
  const stored = lines.get(record);
  if (
    stored === undefined ||
    record.body !== stored.text.body ||
    record.epoch !== stored.text.epoch ||
    record.kind !== stored.text.kind ||
    record.seq !== stored.text.seq ||
    record.prev !== stored.prev ||
    record.hash !== stored.hash ||
    record.meta !== stored.meta ||
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
  if ((seen & REQUIRED) !== REQUIRED) return canonicalize(record);
  if (stored.meta !== undefined && (seen & META) === 0) return canonicalize(record);
  return stored.line;
}
