/**
 * The checks of one journal record — shape, position, chain link, hash, body schema, seal — the
 * single per-record step shared by the text reader, the streaming verifier and the byte verifier.
 * A record whose line is already canonical takes a fast path (its hashed text is read from the
 * line itself); anything else takes the complete path, with identical verdicts and messages.
 *
 * Pure: no I/O.
 */
import { genesisHash, hashedPrefixMatches, recordHash } from './chain.js';
import { isDigest } from './digest.js';
import { bodySchemas, isRecordKind, recordShapeSchema, type JournalRecord, type Pin, type RecordKind } from './records.js';
import { keyIdOf, verifySeal, type PublicKey } from './seal.js';
import { fastBodyOk, fastShapeOk } from './validate-fast.js';

const OK = { ok: true } as const;

/**
 * Validate a body against its kind's schema; returns the first issue as a readable string.
 * The fast validator (validate-fast.ts) answers the common case; zod, the specification, decides
 * whenever it does not accept, and writes the message.
 */
export function checkBody(kind: RecordKind, body: unknown): { ok: true } | { ok: false; reason: string } {
  if (fastBodyOk(kind, body)) return OK;
  const result = bodySchemas[kind].safeParse(body);
  if (result.success) return OK;
  const issue = result.error.issues[0]!;
  const where = issue.path.length ? `body.${issue.path.join('.')}` : 'body';
  return { ok: false, reason: `${kind} ${where}: ${issue.message}` };
}

/** What the chain walk keeps besides the previous hash: a JournalReport's verdict fields. */
export interface ChainState {
  invocation?: string;
  tenant?: string;
  pin?: Pin;
  sealed: boolean;
  /** The hash of the last record before the seal (sealed), or of the last record (unsealed). */
  fingerprint?: string;
  /** The key id recorded in the seal. */
  keyId?: string;
  /** The key id of the last explicit re-key (`invocation.rekeyed`), when the journal has one. */
  rekeyedTo?: string;
}

type SealBody = JournalRecord<'invocation.sealed'>['body'];

/**
 * Every keyless check of record `i` — the one per-record step of the readers. `line`, when given,
 * is the text `value` was parsed from (the fast path). `expectedPrev` is the previous record's hash
 * ('' at seq 0, where the genesis hash is expected). Updates `state` (pinned fields at seq 0, the
 * seal's). The key-dependent seal checks are `sealKeyProblem`'s. Returns the problem, or undefined
 * when the record is good.
 */
export function checkRecordAt(value: unknown, line: string | undefined, i: number, expectedPrev: string, state: ChainState): string | undefined {
  try {
    const prefixEnd = line === undefined ? -1 : canonicalPrefixEnd(value, line);
    if (prefixEnd < 0) return checkRecord(value, i, expectedPrev, state);
    const record = value as JournalRecord;
    let problem: string | undefined;
    try {
      problem = checkCanonicalRecord(record, line!, prefixEnd, i, expectedPrev, state);
    } catch (err) {
      problem = `record cannot be checked: ${(err as Error).message}`;
    }
    // The admission test took prev and hash on their length: a pass proves them digests (the hash
    // check decoded prev as lowercase hex and matched hash with a hex digest). A problem with one
    // that is not a digest gets the slow path's verdict (its shape check speaks first), from the
    // state the record found.
    if (problem === undefined || (isDigest(record.prev) && isDigest(record.hash))) return problem;
    if (i === 0) {
      delete state.invocation;
      delete state.tenant;
      delete state.pin;
    }
    return checkRecord(value, i, expectedPrev, state);
  } catch (err) {
    // Parsed JSON can hold what no writer produces (a lone surrogate escape that canonical JSON
    // refuses, absurd nesting): report it at its seq instead of throwing.
    return `record cannot be checked: ${(err as Error).message}`;
  }
}
/**
 * The fast path's admission test. Returns the length of the line's prefix that is exactly the
 * start of the record's hashed text — `{"body":B,"epoch":E` with B and E canonical — when the record
 * passes the shape and body schemas; -1 (the complete slow path, with its exact verdict and
 * message) on any doubt. Then nothing the slow path checks can depend on re-canonicalizing the
 * record, and the hash is taken over that prefix of the line followed by `,"kind":"K","seq":S}`.
 *
 * Canonical: for a body the fast validators accept in sorted mode (every object's keys strictly
 * increasing, finite numbers, JSON values only), canonicalize(body) is JSON.stringify(body) —
 * numbers in ECMAScript shortest form (RFC 8785's; -0 prints as 0 in both), strings escaped alike —
 * except for a lone surrogate, which canonical JSON refuses and JSON.stringify writes as a `\ud…`
 * escape: such a body text goes to the slow path. An epoch that passed is a safe integer (its
 * String is canonical). The line must then START with exactly `{"body":` + that text + `,"epoch":`
 * + E + `,` — the rest of the line (hash, kind, meta, prev, seq) is not hashed, and the slow path
 * never reads the line's text, only the parsed values, so its spelling cannot change a verdict.
 * (prev and hash are only checked to be 64-character strings here; checkRecordAt proves them
 * digests by the hash check, or defers to the slow path.)
 */
function canonicalPrefixEnd(value: unknown, line: string): number {
  if (!fastShapeOk(value, true, false)) return -1;
  const record = value as JournalRecord;
  if (!isRecordKind(record.kind) || !fastBodyOk(record.kind, record.body, true, true)) return -1;
  const bodyText = JSON.stringify(record.body);
  if (bodyText.indexOf('\\ud') >= 0 || !line.startsWith('{"body":') || !line.startsWith(bodyText, 8)) return -1;
  const epochAt = 8 + bodyText.length;
  if (!line.startsWith(',"epoch":', epochAt)) return -1;
  const epochText = String(record.epoch);
  if (!line.startsWith(epochText, epochAt + 9)) return -1;
  const end = epochAt + 9 + epochText.length;
  return line.charCodeAt(end) === 44 /* , */ ? end : -1;
}

/**
 * checkRecord for a record that passed canonicalPrefixEnd: the same checks in the same order,
 * minus the schema checks it already passed, with the hash taken over the line's own text.
 */
function checkCanonicalRecord(record: JournalRecord, line: string, prefixEnd: number, i: number, expectedPrev: string, state: ChainState): string | undefined {
  if (state.sealed) return 'record after the seal (invocation.sealed must be the last record)';
  return checkPosition(record, i, expectedPrev, state, line, prefixEnd);
}

function checkRecord(value: unknown, i: number, expectedPrev: string, state: ChainState): string | undefined {
  if (state.sealed) return 'record after the seal (invocation.sealed must be the last record)';
  if (!fastShapeOk(value, false)) {
    const shape = recordShapeSchema.safeParse(value);
    if (!shape.success) {
      const issue = shape.error.issues[0]!;
      return `malformed record: ${issue.path.join('.') || 'record'}: ${issue.message}`;
    }
  }
  const record = value as JournalRecord;
  return checkPosition(record, i, expectedPrev, state, undefined, -1);
}

/**
 * Everything after the shape check. `canonicalLine`: the record's line, given when it passed
 * canonicalPrefixEnd (= `prefixEnd`) — the body schemas are then already satisfied and the hash is
 * taken over the line's first `prefixEnd` characters and the kind and seq.
 */
function checkPosition(
  record: JournalRecord,
  i: number,
  expectedPrev: string,
  state: ChainState,
  canonicalLine: string | undefined,
  prefixEnd: number,
): string | undefined {
  const bodies = canonicalLine === undefined;
  if (record.seq !== i) {
    return `expected seq ${i}, found seq ${record.seq} (a record is missing, duplicated or out of order)`;
  }
  if (!isRecordKind(record.kind)) return `unknown record kind ${JSON.stringify(record.kind)}`;
  if (i === 0) {
    if (record.kind !== 'invocation.pinned') return `the first record must be invocation.pinned, found ${record.kind}`;
    if (bodies) {
      const body = checkBody(record.kind, record.body);
      if (!body.ok) return body.reason;
    }
    const pinned = record.body as JournalRecord<'invocation.pinned'>['body'];
    expectedPrev = genesisHash(pinned.invocation, pinned.pin);
    state.invocation = pinned.invocation;
    state.tenant = pinned.tenant;
    state.pin = pinned.pin;
  } else if (record.kind === 'invocation.pinned') {
    return 'invocation.pinned may only be the first record';
  }
  if (record.prev !== expectedPrev) {
    return i === 0
      ? 'prev is not the genesis hash of this invocation id and pin'
      : `prev does not match the hash of seq ${i - 1} (the chain is broken)`;
  }
  const hashMatches = canonicalLine === undefined ? recordHash(record.prev, record) === record.hash : hashedPrefixMatches(record, canonicalLine, prefixEnd);
  if (!hashMatches) return 'hash mismatch: the record content was altered';
  if (bodies) {
    const body = checkBody(record.kind, record.body);
    if (!body.ok) return body.reason;
  }
  if (record.kind === 'invocation.rekeyed') return checkRekey(record as JournalRecord<'invocation.rekeyed'>, state);
  if (record.kind === 'invocation.sealed') return checkSeal(record as JournalRecord<'invocation.sealed'>, state);
  return undefined;
}

/**
 * A re-key changes the key in force. The key an invocation started with is not in the journal (it is
 * kept in the store's metadata, so the fingerprint does not depend on it): a first re-key's `from`
 * cannot be checked here; each later one must start from the previous one's `to`.
 */
function checkRekey(record: JournalRecord<'invocation.rekeyed'>, state: ChainState): string | undefined {
  const current = state.rekeyedTo;
  if (current !== undefined && record.body.from !== current) return `invocation.rekeyed from key ${record.body.from.slice(0, 16)}…, but the key in force is ${current.slice(0, 16)}… (the previous re-key's)`;
  state.rekeyedTo = record.body.to;
  return undefined;
}

/** The seal's keyless checks; a good seal marks the state sealed. */
function checkSeal(record: JournalRecord<'invocation.sealed'>, state: ChainState): string | undefined {
  const seal = record.body;
  if (seal.fingerprint !== record.prev) return 'seal fingerprint is not the hash of the record before it';
  // A re-keyed journal is sealed by the last re-key's key and no other.
  const expected = state.rekeyedTo;
  if (expected !== undefined && seal.keyId !== expected) {
    return `sealed by key ${seal.keyId.slice(0, 16)}…, but the journal was re-keyed to key ${expected.slice(0, 16)}… (a seal by another key needs an invocation.rekeyed record before it)`;
  }
  state.sealed = true;
  state.fingerprint = seal.fingerprint;
  state.keyId = seal.keyId;
  return undefined;
}

/**
 * The seal's checks against a public key, for a seal that passed `checkRecordAt`. Its problems are
 * about the key, not the chain: when one is a journal's only problem, the readers mark the verdict
 * `sealMismatch` (reader.ts) and `weft verify` reports a seal that does not match the key (exit 3).
 */
export function sealKeyProblem(record: { body: SealBody }, key: PublicKey, rekeyedTo?: string): string | undefined {
  const seal = record.body;
  try {
    if (keyIdOf(key.publicKey) !== key.keyId) return 'the public key file is inconsistent (its keyId is not the digest of its key)';
    if (seal.keyId !== key.keyId) {
      // A re-keyed journal says which key seals it now: the auditor's key may be the one before.
      const rekeyed = rekeyedTo === seal.keyId ? `; the journal was re-keyed to key ${seal.keyId.slice(0, 16)}… (invocation.rekeyed): verify with that key` : '';
      return `sealed by another key (key id ${seal.keyId.slice(0, 16)}…, expected ${key.keyId.slice(0, 16)}…)${rekeyed}`;
    }
    if (!verifySeal(key, seal.fingerprint, seal.signature)) return 'bad signature: the seal was not made by this key over this fingerprint';
    return undefined;
  } catch (err) {
    return `record cannot be checked: ${(err as Error).message}`;
  }
}
