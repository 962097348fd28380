/**
 * The byte verifier — what `weft verify` runs: the verdict of `verifyJournalText` (reader.ts),
 * read straight from a journal's bytes in one streaming pass, at close to the cost of hashing them.
 *
 * Each line takes the fast path when it is exactly what a writer writes: canonical JSON in the
 * stored key order (canonical-scan.ts), a body that passes its kind's shape (scan-shapes.ts), a
 * prev that is the previous record's hash, and a hash that matches. The line is checked where it
 * lies — no JSON.parse, no string made — and its hashed bytes (prev ‖ `{"body":B,"epoch":E` ‖
 * `,"kind":"K"` ‖ `,"seq":S}`) are gathered from it into a scratch area at the front of the same
 * buffer by copyWithin and hashed as they are, through a view kept per length.
 *
 * Any other line — the first record and the seal, whose fields the verdict reports, and every line
 * the fast path doubts — is decoded and handed to the text reader's own per-line step (reader.ts
 * `checkLine`), which decides and writes the message. So the verdicts are the text reader's by
 * construction; the fast path's one obligation is never to accept a line that step would refuse
 * (test/journal-verify-bytes.test.ts checks both on random valid and mutated journals).
 *
 * What only bytes show: a line that is not valid UTF-8 is refused ("not valid UTF-8"). A text
 * reader fed `fs.readFile(file, 'utf8')` sees U+FFFD where such bytes were, and hashes that.
 *
 * Memory is bounded by the longest line plus a chunk: bytes are pushed in pieces of any size (a file
 * read as it comes) and only an unfinished last line is carried over.
 *
 * Pure: no I/O. SHA-256 comes from digest.ts (node:crypto once sha256-node.ts is imported).
 */
import { countValue, firstInvalidUtf8, sameBytes, scanCount, scanObject, scanValue, tapeMembers } from './canonical-scan.js';
import { digestInto } from './chain.js';
import { LOWER_HEX, sha256Binary } from './digest.js';
import { checkLine, settleVerdict, type ChainState, type JournalReport, type JournalVerdict, type ReadOptions, type SealInfo, type WalkProblem } from './reader.js';
import { recordKinds, type JournalRecord } from './records.js';
import { bodyTapeChecks, metaSpanCheck, type TapeCheck } from './scan-shapes.js';

/**
 * The scratch area at the front of the buffer: [0, 32) the previous hash's bytes (the hashed
 * input's start), then the rest of the hashed input, and at SAVED the previous hash's hex text.
 * Hashed inputs longer than SAVED take the slow path.
 */
const SCRATCH = 64 * 1024;
const SAVED = SCRATCH - 64;
/** Pushed bytes are taken in pieces of at most this much. */
const CHUNK = 1 << 20;
/** Room after the data for the terminator and the fixed-length reads that may pass it. */
const SLACK = 256;

const QUOTE = 0x22;
const NEWLINE = 0x0a;

const ascii = (text: string) => Uint8Array.from(text, (ch) => ch.charCodeAt(0));

/**
 * A literal of 5 to 12 bytes, matched as three little-endian 32-bit words (at its start, at 4, and
 * ending at its end; they overlap for shorter ones) — the envelope's fixed texts.
 */
class Literal {
  private readonly mid: number;
  private readonly last: number;
  private readonly w0: number;
  private readonly w1: number;
  private readonly w2: number;
  constructor(text: string) {
    const view = new DataView(ascii(text).buffer);
    this.mid = Math.min(4, text.length - 4);
    this.last = text.length - 4;
    this.w0 = view.getUint32(0, true);
    this.w1 = view.getUint32(this.mid, true);
    this.w2 = view.getUint32(this.last, true);
  }
  at(dv: DataView, p: number): boolean {
    return dv.getUint32(p, true) === this.w0 && dv.getUint32(p + this.mid, true) === this.w1 && dv.getUint32(p + this.last, true) === this.w2;
  }
}
const OPEN = new Literal('{"body":{');
const EPOCH = new Literal(',"epoch":');
const HASH = new Literal(',"hash":"');
const KIND = new Literal(',"kind":"');
const META = new Literal(',"meta":{');
const PREV = new Literal(',"prev":"');
const SEQ = new Literal(',"seq":');

// ---- record kinds by their bytes -----------------------------------------------------------------

const KIND_CHAR = new Uint8Array(256);
for (const ch of 'abcdefghijklmnopqrstuvwxyz._') KIND_CHAR[ch.charCodeAt(0)] = 1;
const kindBytes = recordKinds.map(ascii);
const kindsByLength: number[][] = [];
kindBytes.forEach((bytes, k) => (kindsByLength[bytes.length] ??= []).push(k));
/** Kinds the fast path leaves to checkLine: their bodies fill the verdict (pin, re-key, seal). */
const slowKinds = new Set(['invocation.pinned', 'invocation.rekeyed', 'invocation.sealed'].map((kind) => recordKinds.indexOf(kind as never)));
const tapeChecks: TapeCheck[] = recordKinds.map((kind, k) => (slowKinds.has(k) ? () => false : bodyTapeChecks[kind]));

function kindAt(b: Uint8Array, k0: number, k1: number): number {
  const candidates = kindsByLength[k1 - k0];
  if (candidates === undefined) return -1;
  for (const k of candidates) if (sameBytes(b, k0, k1, kindBytes[k]!)) return k;
  return -1;
}

// ---- the fast path -------------------------------------------------------------------------------

/**
 * The line at `p0` when it needs no second look: returns the offset after its newline, or -1 — a
 * doubt: the caller finds the line's end and asks checkLine. The scratch area holds the previous
 * record's hash (its bytes at 0, its hex text at SAVED) and is left holding this one's. The hashed
 * bytes are gathered after the first 32 and hashed through `views[length]`. `limit` is the end of
 * the data (a 0 byte lies there).
 */
function fastLine(b: Uint8Array, dv: DataView, p0: number, limit: number, seq: number, views: (Uint8Array | undefined)[]): number {
  if (!OPEN.at(dv, p0)) return -1;
  let p = scanObject(b, p0 + 8, 0, true);
  if (p < 0) return -1;
  const members = tapeMembers;
  if (!EPOCH.at(dv, p)) return -1;
  p = scanCount(b, p + 9);
  if (p < 0) return -1;
  const prefixEnd = p;
  if (!HASH.at(dv, p)) return -1;
  const hashAt = p + 9;
  p = hashAt + 64;
  if (p >= limit || b[p] !== QUOTE) return -1;
  const kindField = p + 1;
  if (!KIND.at(dv, kindField)) return -1;
  const k0 = kindField + 9;
  p = k0;
  while (KIND_CHAR[b[p]!] === 1) p++;
  if (b[p] !== QUOTE) return -1;
  const kind = kindAt(b, k0, p);
  if (kind < 0) return -1;
  const kindFieldEnd = ++p;
  if (META.at(dv, p)) {
    const m0 = p + 8;
    p = scanValue(b, m0);
    if (p < 0 || !metaSpanCheck(b, m0, p)) return -1;
  }
  if (!PREV.at(dv, p)) return -1;
  const prevAt = p + 9;
  p = prevAt + 64;
  if (p >= limit || b[p] !== QUOTE) return -1;
  const seqField = p + 1;
  if (!SEQ.at(dv, seqField)) return -1;
  const s0 = seqField + 7;
  p = scanCount(b, s0);
  if (p < 0 || b[p] !== 0x7d || b[p + 1] !== NEWLINE || p + 1 >= limit) return -1;
  const newline = p + 1;
  if (countValue(b, s0, p) !== seq || !tapeChecks[kind]!(b, members)) return -1;
  const prefixLength = prefixEnd - p0;
  const kindLength = kindFieldEnd - kindField;
  const length = 32 + prefixLength + kindLength + (newline - seqField);
  if (length > SAVED) return -1;
  // prev: the previous hash's text, word by word (its bytes are already at 0)
  for (let i = 0; i < 64; i += 4) if (dv.getUint32(prevAt + i, true) !== dv.getUint32(SAVED + i, true)) return -1;
  b.copyWithin(32, p0, prefixEnd);
  b.copyWithin(32 + prefixLength, kindField, kindFieldEnd);
  b.copyWithin(32 + prefixLength + kindLength, seqField, newline);
  let view = views[length];
  if (view === undefined) views[length] = view = new Uint8Array(b.buffer, b.byteOffset, length);
  const digest = sha256Binary(view);
  // hash: the lowercase hex of the digest
  for (let i = 0; i < 32; i++) {
    const hi = LOWER_HEX[b[hashAt + 2 * i]!]!;
    const lo = LOWER_HEX[b[hashAt + 2 * i + 1]!]!;
    if ((hi | lo) < 0 || ((hi << 4) | lo) !== digest.charCodeAt(i)) return -1;
  }
  // accepted: its hash becomes the next record's prev (the scratch is written only now)
  for (let i = 0; i < 32; i++) b[i] = digest.charCodeAt(i);
  b.copyWithin(SAVED, hashAt, hashAt + 64);
  return newline + 1;
}

// ---- the streaming verifier ----------------------------------------------------------------------

const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * A journal's bytes in, pieces of any size (`push`), the verdict out (`end`): ok, the first bad
 * record by seq and what is wrong with it, fingerprint, sealed, key id, invocation, tenant, pin —
 * field for field what verifyJournalText gives for the same text.
 */
export class JournalByteVerifier {
  private buf = new Uint8Array(SCRATCH + CHUNK + SLACK);
  private dv = new DataView(this.buf.buffer);
  private views: (Uint8Array | undefined)[] = [];
  /** The first byte not yet consumed, and the end of the bytes pushed so far. */
  private start = SCRATCH;
  private limit = SCRATCH;
  /** The next line's seq: the number of records that passed. */
  private seq = 0;
  private readonly state: ChainState = { sealed: false };
  /** The last passed record's hash as hex, once wanted (the scratch area holds it). */
  private prevHex: string | undefined;
  private problem?: WalkProblem;
  private seal?: SealInfo;
  /**
   * After a problem, the rest is ignored — unless a seal's key check may still decide the verdict
   * (reader.ts settleVerdict), which needs to know whether every later line parses, and the tail.
   */
  private checkRest = false;
  private restParses = true;
  private ended = false;
  private fast = 0;

  constructor(private readonly options: ReadOptions = {}) {}

  /** How many records took the fast path so far (the rest were decoded and parsed): a diagnostic. */
  get fastRecords(): number {
    return this.fast;
  }

  /** Verify the next bytes of the journal. */
  push(bytes: Uint8Array): void {
    if (this.ended) throw new Error('JournalByteVerifier: push after end');
    for (let off = 0; off < bytes.length && (this.problem === undefined || this.checkRest); off += CHUNK) {
      this.append(bytes.subarray(off, Math.min(off + CHUNK, bytes.length)));
      this.drain();
    }
  }

  /** The verdict, once every byte is pushed. */
  end(): JournalVerdict {
    if (this.ended) throw new Error('JournalByteVerifier: end called twice');
    this.ended = true;
    const tail = this.limit - this.start;
    return settleVerdict(
      {
        passed: this.seq,
        problem: this.problem,
        lastHash: this.seq > 0 ? this.previousHex() : undefined,
        seal: this.seal,
        tornBytes: tail > 0 ? tail : undefined,
        restParses: () => this.restParses,
      },
      this.state,
      this.options,
    );
  }

  private append(piece: Uint8Array): void {
    if (this.limit + piece.length + SLACK > this.buf.length) {
      const carry = this.limit - this.start;
      if (SCRATCH + carry + piece.length + SLACK > this.buf.length) {
        const grown = new Uint8Array(SCRATCH + 2 * (carry + piece.length) + SLACK);
        grown.set(this.buf.subarray(0, SCRATCH), 0); // the previous hash
        grown.set(this.buf.subarray(this.start, this.limit), SCRATCH);
        this.buf = grown;
        this.dv = new DataView(grown.buffer);
        this.views = [];
      } else {
        this.buf.copyWithin(SCRATCH, this.start, this.limit);
      }
      this.start = SCRATCH;
      this.limit = SCRATCH + carry;
    }
    this.buf.set(piece, this.limit);
    this.limit += piece.length;
    this.buf[this.limit] = 0; // the terminator every scan stops at
  }

  /** Check every complete line pushed so far. */
  private drain(): void {
    const b = this.buf;
    while (this.start < this.limit) {
      if (this.problem === undefined && this.seq > 0 && !this.state.sealed) {
        const next = fastLine(b, this.dv, this.start, this.limit, this.seq, this.views);
        if (next >= 0) {
          this.start = next;
          this.seq++;
          this.fast++;
          this.prevHex = undefined;
          continue;
        }
      }
      const newline = b.subarray(this.start, this.limit).indexOf(NEWLINE);
      if (newline < 0) return; // an unfinished line: wait for more
      const end = this.start + newline;
      if (this.problem === undefined) this.slowLine(this.start, end);
      else this.restLine(this.start, end);
      this.start = end + 1;
      if (this.problem !== undefined && !this.checkRest) {
        this.start = this.limit;
        return;
      }
    }
  }

  /** A line the fast path did not take: checkLine decides. */
  private slowLine(start: number, end: number): void {
    const bad = firstInvalidUtf8(this.buf, start, end);
    if (bad >= 0) return this.fail({ seq: this.seq, problem: `not valid UTF-8 (byte ${bad - start} of the line)`, parse: true });
    const line = decoder.decode(this.buf.subarray(start, end));
    const checked = checkLine(line, this.seq, this.seq === 0 ? '' : this.previousHex(), this.state);
    if ('problem' in checked) return this.fail(checked.problem);
    if (checked.seal !== undefined) this.seal = checked.seal;
    this.remember(checked.record.hash);
    this.seq++;
  }

  /** A line after the problem, when it matters whether it parses. */
  private restLine(start: number, end: number): void {
    if (!this.restParses) return;
    if (firstInvalidUtf8(this.buf, start, end) >= 0) {
      this.restParses = false;
      return;
    }
    try {
      JSON.parse(decoder.decode(this.buf.subarray(start, end)));
    } catch {
      this.restParses = false;
    }
  }

  private fail(problem: WalkProblem): void {
    this.problem = problem;
    this.checkRest = this.seal !== undefined && this.options.publicKey !== undefined && !problem.parse;
  }

  /** Put a passed record's hash (a lowercase hex digest) in the scratch area: bytes at 0, text at SAVED. */
  private remember(hash: string): void {
    digestInto(hash, this.buf);
    for (let i = 0; i < 64; i++) this.buf[SAVED + i] = hash.charCodeAt(i);
    this.prevHex = hash;
  }

  private previousHex(): string {
    return (this.prevHex ??= String.fromCharCode(...this.buf.subarray(SAVED, SAVED + 64)));
  }
}

/** The verdict of a whole journal held in memory as bytes (a file's contents). */
export function verifyJournalBytes(bytes: Uint8Array, options: ReadOptions = {}): JournalVerdict {
  const verifier = new JournalByteVerifier(options);
  verifier.push(bytes);
  return verifier.end();
}

/**
 * readJournalText's report — the verdict and the records that passed — from a journal file's bytes:
 * the byte verifier's verdict (so a line that is not valid UTF-8 is refused, as `weft verify` does),
 * and the records parsed from the lines before the first problem. What `weft log`, `weft replay` and
 * `runtime.verify` read a journal file with.
 */
export function readJournalBytes(bytes: Uint8Array, options: ReadOptions = {}): JournalReport {
  const { count, ...verdict } = verifyJournalBytes(bytes, options);
  const records: JournalRecord[] = [];
  let pos = 0;
  while (records.length < count) {
    const newline = bytes.indexOf(NEWLINE, pos);
    records.push(JSON.parse(decoder.decode(bytes.subarray(pos, newline))) as JournalRecord);
    pos = newline + 1;
  }
  return { ...verdict, records };
}
