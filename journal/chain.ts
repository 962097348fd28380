/**
 * The hash chain. Each record commits to everything before it:
 *
 *   genesis = SHA-256(canonical({ genesis: "weft.journal.v1", invocation, pin }))
 *   hash    = SHA-256(prev ‖ canonical({ seq, kind, epoch, body }))      (prev as its 32 raw bytes)
 *
 * so the first record's `prev` binds the journal to one invocation id and pin, and the last hash
 * (the fingerprint) binds the whole history. The envelope (`meta`) is deliberately outside.
 *
 * The hashed text is composed from its members' canonical texts — `{"body":B,"epoch":E,"kind":K,
 * "seq":S}`, exactly what `canonicalize` writes for that object — so the body is canonicalized
 * ONCE per record on the writer's path: `chainRecordForAppend` hands the texts to encode.ts, which
 * builds the stored line from them.
 *
 * Pure: computes, never stores.
 */
import { canonicalize, canonicalizeMember } from './canonical.js';
import { digestOf, hexToBytes, LOWER_HEX, sha256Hex, sha256PrefixedHex } from './digest.js';
import { rememberLine, type ContentText } from './encode.js';
import { isRecordKind, type BodyOf, type JournalRecord, type Pin, type RecordContent, type RecordKind, type RecordMeta } from './records.js';

export const JOURNAL_FORMAT = 'weft.journal.v1';

/** The `prev` of seq 0 for an invocation with this id and pin. */
export function genesisHash(invocation: string, pin: Pin): string {
  return digestOf({ genesis: JOURNAL_FORMAT, invocation, pin });
}

const encoder = new TextEncoder();

/** The canonical text of a count (what a record's seq and epoch are): its digits. */
function countText(key: string, n: unknown): string {
  return Number.isSafeInteger(n) && (n as number) >= 0 ? String(n) : canonicalizeMember(key, n);
}

/** The canonical texts of a record's hashed members, or undefined when one is missing (rare path). */
function contentText(content: RecordContent): ContentText | undefined {
  const { body, epoch, kind, seq } = content;
  if (body === undefined || epoch === undefined || kind === undefined || seq === undefined) return undefined;
  return {
    body,
    bodyText: canonicalizeMember('body', body),
    epoch,
    epochText: countText('epoch', epoch),
    kind,
    // a kind's name is plain ASCII: its canonical text is the name in quotes
    kindText: isRecordKind(kind) ? `"${kind}"` : canonicalizeMember('kind', kind),
    seq,
    seqText: countText('seq', seq),
  };
}

/** `canonicalize({ body, epoch, kind, seq })`, composed from the members' texts. */
function hashedText(text: ContentText): string {
  return `{"body":${text.bodyText},"epoch":${text.epochText},"kind":${text.kindText},"seq":${text.seqText}}`;
}

/**
 * Writes the 32 bytes of a 64-lowercase-hex digest into `out` at 0; false (nothing promised about
 * `out`) when `hex` is not one.
 */
export function digestInto(hex: string, out: Uint8Array): boolean {
  if (hex.length !== 64) return false;
  for (let i = 0; i < 32; i++) {
    const hi = hex.charCodeAt(2 * i);
    const lo = hex.charCodeAt(2 * i + 1);
    const h = hi < 256 ? LOWER_HEX[hi]! : -1;
    const l = lo < 256 ? LOWER_HEX[lo]! : -1;
    if (h < 0 || l < 0) return false;
    out[i] = (h << 4) | l;
  }
  return true;
}

/** prev's 32 raw bytes, decoded into a reused buffer (the hash consumes it before returning). */
const prevBytes = new Uint8Array(32);

/**
 * SHA-256 of prev's 32 raw bytes followed by the UTF-8 of `text` (then of `tail`), as hex — by the
 * active two-part primitive (digest.ts; node:crypto encodes the strings into its own buffer).
 */
function hashOf(prev: string, text: string, tail = ''): string {
  return hashDecoded(digestInto(prev, prevBytes), prev, text, tail);
}

/** hashOf once prev's decoding is known: `decoded` says prevBytes holds it (a lowercase hex digest). */
function hashDecoded(decoded: boolean, prev: string, text: string, tail = ''): string {
  return decoded ? sha256PrefixedHex(prevBytes, text, tail) : sha256Hex(exactInput(prev, text + tail));
}

/** prev's 32 raw bytes followed by the UTF-8 of `text`, exactly as this module always built them. */
function exactInput(prev: string, text: string): Uint8Array {
  const bytes = encoder.encode(text);
  const exact = new Uint8Array(32 + bytes.length);
  exact.set(hexToBytes(prev), 0); // noble decodes (any case) or throws, as before
  exact.set(bytes, 32);
  return exact;
}

/**
 * For the reader's fast path: true when `record.hash` is the hash of `record` given that
 * `line.slice(0, end)` is exactly `{"body":B,"epoch":E` with B and E the canonical texts of its body
 * and epoch (the caller must have proved it: reader.ts `canonicalPrefixEnd`) — the start of
 * `canonicalize({ body, epoch, kind, seq })`; kind and seq complete it. The two parts go to the hash
 * as they are (no concatenation, no TextEncoder), and the hex digest is compared with the stored
 * one (a 64-lowercase-hex digest, or no match). A prev that is not a digest: no match.
 */
export function hashedPrefixMatches(record: JournalRecord, line: string, end: number): boolean {
  if (!digestInto(record.prev, prevBytes)) return false;
  return sha256PrefixedHex(prevBytes, line.slice(0, end), `,"kind":"${record.kind}","seq":${record.seq}}`) === record.hash;
}

/**
 * `hashedPrefixMatches` for a line that is exactly `canonicalize(record)` (prev and hash digests):
 * its hashed prefix ends where the LAST `,"hash":"` starts, which can only be the envelope's (after
 * the body come only digests, the kind and meta, whose strings hold `"` only as `\"`).
 */
export function canonicalLineHashMatches(record: JournalRecord, line: string): boolean {
  return hashedPrefixMatches(record, line, line.lastIndexOf(',"hash":"'));
}

/** The bytes a record's hash covers: prev's raw bytes followed by its canonical content. */
export function hashedBytes(prev: string, content: RecordContent): Uint8Array {
  const text = contentText(content);
  // Built in canonical key order so the canonicalizer's fast path applies (same bytes either way).
  return exactInput(prev, text ? hashedText(text) : canonicalize({ body: content.body, epoch: content.epoch, kind: content.kind, seq: content.seq }));
}

/** The hash of a record with this content after `prev`. */
export function recordHash(prev: string, content: RecordContent): string {
  const text = contentText(content);
  if (!text) return sha256Hex(hashedBytes(prev, content));
  return hashOf(prev, hashedText(text));
}

/** Link a record's content to the chain: fills `prev` and `hash`. */
export function chainRecord<K extends RecordKind>(
  prev: string,
  content: { seq: number; kind: K; epoch: number; body: BodyOf<K> },
): JournalRecord<K> {
  return link(prev, content, undefined, false);
}

/**
 * `chainRecord` for a record that goes to a store at once (the writer), with its envelope: also
 * leaves the record's stored line, composed from the canonical texts the hash needed, to encode.ts,
 * so the store writes it instead of canonicalizing the record again. The caller must not let the
 * record, its body or its meta change before the append — nor keep the line after it
 * (`forgetContentText`): a body edited in place after chaining must be written as it now is (the
 * store conformance suite edits one to make it unencodable).
 */
export function chainRecordForAppend<K extends RecordKind>(
  prev: string,
  content: { seq: number; kind: K; epoch: number; body: BodyOf<K> },
  meta?: RecordMeta,
): JournalRecord<K> {
  return link(prev, content, meta, true);
}

function link<K extends RecordKind>(
  prev: string,
  content: { seq: number; kind: K; epoch: number; body: BodyOf<K> },
  meta: RecordMeta | undefined,
  remember: boolean,
): JournalRecord<K> {
  const text = contentText(content);
  const decoded = text !== undefined && digestInto(prev, prevBytes);
  const hash = text ? hashDecoded(decoded, prev, hashedText(text)) : recordHash(prev, content);
  const record: JournalRecord<K> = { seq: content.seq, kind: content.kind, epoch: content.epoch, body: content.body, prev, hash };
  if (meta !== undefined) record.meta = meta;
  // A prev decoded as lowercase hex is its own canonical text in quotes.
  if (remember && text) rememberLine(record, text, decoded ? `"${prev}"` : canonicalizeMember('prev', prev));
  return record;
}
