/**
 * Runtime errors: replay divergence, a replay that ran out of journal, and misuse of the runtime
 * API. Each says which record or which call, and what to do.
 */
import { canonicalize } from '../journal/canonical.js';
import { WeftError } from '../journal/errors.js';

function brief(value: unknown): string {
  let text: string;
  try {
    text = canonicalize(value);
  } catch {
    text = String(value);
  }
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

/**
 * Replay re-derived something different from what the journal records: a changed model reply, a
 * changed library, a reordered completion, changed runtime code. Names the record.
 */
export class ReplayDivergenceError extends WeftError {
  constructor(
    readonly seq: number,
    readonly kind: string,
    readonly expected: unknown,
    readonly actual: unknown,
  ) {
    super(
      'replay.divergence',
      'permanent',
      `replay diverged at seq ${seq} (${kind}): the journal records ${brief(expected)} but re-deriving gives ${brief(actual)}. ` +
        `The journal was produced by different inputs or code than this replay (model reply, library, actuator schemas, policy or runtime version); ` +
        `replay it with the runtime and library it was pinned to`,
    );
  }
}

/** Replay needed a completion the journal does not have: the invocation was still running. */
export class ReplayEndedError extends WeftError {
  constructor(readonly seq: number) {
    super('replay.ended', 'permanent', `replay reached the end of the journal at seq ${seq}: the invocation was not finished (resume it to continue)`);
  }
}

export class RuntimeUsageError extends WeftError {
  constructor(code: string, message: string) {
    super(code, 'permanent', message);
  }
}

/**
 * An invocation the store does not hold — or another tenant's, answered with the very same words,
 * so one tenant learns nothing of another's. One code and one wording wherever an id (or a journal
 * file named for one) is not found: the runtime's verbs, the client, opening a pin, `weft show`,
 * the viewer — `invocation.not_found`, which the CLI answers with exit 2 (cli/exit-codes.ts).
 */
export class InvocationNotFoundError extends RuntimeUsageError {
  constructor(id: string, storeName: string, tenant?: string) {
    super('invocation.not_found', `no invocation ${id}${tenant === undefined ? '' : ` of tenant ${JSON.stringify(tenant)}`} in ${storeName}; weft ls lists them`);
    this.name = 'InvocationNotFoundError';
  }
}

/** What a runtime offers differs from what an invocation pinned; nothing was written. */
export class PinMismatchError extends WeftError {
  constructor(
    readonly invocation: string,
    readonly command: 'resume' | 'approve' | 'cancel' | 'replay' | 'fork',
    readonly mismatches: ReadonlyArray<{ field: string; pinned: string; offered: string; fix: string }>,
  ) {
    super(
      'pin.mismatch',
      'permanent',
      `refusing to ${command} ${invocation}: it differs from the pin in ${mismatches.length} field(s) — ` +
        mismatches.map((m) => `${m.field}: pinned ${m.pinned}, offered ${m.offered} (${m.fix})`).join('; ') +
        `. Nothing was written; the invocation is unchanged and resumable with the pinned parts`,
    );
  }
}

/** The journal filed under one invocation id belongs to another (copied or moved). */
export class ForeignJournalError extends WeftError {
  constructor(
    readonly filedAs: string,
    readonly belongsTo: string,
  ) {
    super(
      'journal.foreign',
      'permanent',
      `the journal filed as invocation ${filedAs} belongs to invocation ${belongsTo} (its genesis derives from ${belongsTo}'s id and pin): ` +
        `it was copied or moved there. Restore ${filedAs}'s own journal, or quarantine this one; nothing was written`,
    );
  }
}

/**
 * The key this runtime would seal with is not the one the invocation's journal is sealed by (the key
 * in force, seal-key.ts: recorded at start, or re-keyed explicitly). Nothing was written. Names both key ids (short) and how
 * to pass the right key, or to re-key on purpose.
 */
export class SealKeyMismatchError extends WeftError {
  constructor(
    readonly invocation: string,
    readonly command: 'resume' | 'approve' | 'cancel' | 'start',
    /** The key id in force (recorded at start, or re-keyed to). */
    readonly expected: string,
    /** This runtime's key id, or undefined when it has no signing key. */
    readonly offered: string | undefined,
    readonly rekeyed = false,
  ) {
    const short = (id: string) => id.slice(0, 16);
    super(
      'pin.seal_key',
      'permanent',
      `refusing to ${command} ${invocation}: its journal is sealed by signing key ${short(expected)} (${rekeyed ? 're-keyed to it' : 'recorded at start'}), ` +
        (offered === undefined ? 'and this runtime has no signing key' : `but this runtime's signing key is ${short(offered)}`) +
        `. Pass that key (CLI: --signing-key FILE or WEFT_SIGNING_KEY=FILE; code: createRuntime({ signingKey })), ` +
        `or change the key on purpose with --rekey on resume or approve (the journal records it). Nothing was written`,
    );
  }
}

/** Throw `runtime.bad_invocation_id` unless `id` is an invocation id (journal/store.ts isValidInvocationId) — one wording for every caller. */
export function assertInvocationId(id: string, isValid: (id: string) => boolean): void {
  if (typeof id !== 'string' || !isValid(id)) {
    throw new RuntimeUsageError('runtime.bad_invocation_id', `${JSON.stringify(String(id).slice(0, 80))} is not an invocation id (letters, digits, '.', '_' and '-', at most 200); weft ls lists them`);
  }
}
