/**
 * The error registry. Every error Weft raises has a stable `code`, a failure `class`
 * (transient: retry; permanent: do not retry, compensate; policy: refused by rule), a message
 * that says what to do next, and a JSON form that can be written into a journal body.
 *
 * One class per code keeps `instanceof` useful for callers, and `toJSON()` keeps journals free of
 * stack traces (which differ between machines and would break byte-identical replay).
 */

export type FailureClass = 'transient' | 'permanent' | 'policy';

export interface WeftErrorJson {
  code: string;
  class: FailureClass;
  message: string;
}

/**
 * The brand every WeftError carries. Errors cross package boundaries — a user's domain may resolve
 * its own copy of `weft` — so they are recognised by this brand (`isWeftError`), never `instanceof`.
 */
export const WEFT_ERROR: unique symbol = Symbol.for('weft.error') as never;

export class WeftError extends Error {
  readonly [WEFT_ERROR] = true;
  constructor(
    readonly code: string,
    readonly failureClass: FailureClass,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON(): WeftErrorJson {
    return { code: this.code, class: this.failureClass, message: this.message };
  }
}

/** True for a WeftError made by any copy of weft: it has the brand, a code and a failure class. */
export function isWeftError(err: unknown): err is WeftError {
  if (typeof err !== 'object' || err === null || (err as Record<symbol, unknown>)[WEFT_ERROR] !== true) return false;
  const e = err as { code?: unknown; failureClass?: unknown };
  return typeof e.code === 'string' && (e.failureClass === 'transient' || e.failureClass === 'permanent' || e.failureClass === 'policy');
}

/** A journal or record failed validation: a bad hash, a broken chain, a body off its schema. */
export class JournalIntegrityError extends WeftError {
  constructor(
    readonly seq: number,
    readonly problem: string,
  ) {
    super('journal.integrity', 'permanent', `seq ${seq}: ${problem}`);
  }
}

/** The final line of a journal file is incomplete: the process died while writing it. */
export class TornTailError extends WeftError {
  constructor(
    readonly invocation: string,
    readonly seq: number,
    readonly bytes: number,
  ) {
    super(
      'journal.torn_tail',
      'permanent',
      `seq ${seq}: torn final record in journal of ${invocation} (${bytes} bytes, no newline: the writer crashed mid-append, ` +
        `so this record was never acknowledged). Nothing was dropped; to resume, quarantine it explicitly — ` +
        `\`weft resume ${invocation} --quarantine-torn\`, or store.quarantineTornTail(lease) — the bytes are kept beside the journal.`,
    );
  }
}

/** Another writer holds the invocation's lease. */
export class LeaseHeldError extends WeftError {
  constructor(
    readonly invocation: string,
    readonly holder: string,
    readonly detail: string,
  ) {
    super(
      'journal.lease_held',
      'transient',
      `invocation ${invocation} is being written by ${holder} (${detail}); only one writer per invocation — ` +
        `wait for it to finish or for its lease to expire, then resume`,
    );
  }
}

/** This writer's lease was taken over (its fencing token is stale); its appends are refused. */
export class FencedError extends WeftError {
  constructor(
    readonly invocation: string,
    readonly token: number,
    readonly current: number,
    /** Why the lease is no longer valid when it was not taken over (released, never acquired). */
    detail?: string,
  ) {
    super(
      'journal.fenced',
      'policy',
      detail === undefined
        ? `invocation ${invocation}: this writer's lease (token ${token}) was taken over by token ${current}; ` +
            `stop writing — the new holder owns the journal now`
        : `invocation ${invocation}: this writer's lease (token ${token}) is no longer valid: ${detail}; nothing was written`,
    );
  }
}

/** An append's expected seq does not match the journal's length. */
export class SeqConflictError extends WeftError {
  constructor(
    readonly invocation: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(
      'journal.seq_conflict',
      'permanent',
      `invocation ${invocation}: append expected the journal to end at seq ${expected - 1} but it has ${actual} records; ` +
        `re-read the journal before appending`,
    );
  }
}

/** A record body failed its kind's schema before it was written (nothing was written). */
export class InvalidRecordError extends WeftError {
  constructor(
    readonly kind: string,
    readonly reason: string,
  ) {
    super('journal.invalid_record', 'permanent', `refusing to write a ${kind} record: ${reason}`);
  }
}

/** A name used as a store key (invocation id, blob digest) is not safe. */
export class InvalidNameError extends WeftError {
  constructor(what: string, value: string, rule: string) {
    super('journal.invalid_name', 'permanent', `invalid ${what} ${JSON.stringify(value)}: ${rule}`);
  }
}

/** A blob's content does not match its digest, or the blob is missing. */
export class BlobError extends WeftError {
  constructor(
    readonly digest: string,
    detail: string,
  ) {
    super('journal.blob', 'permanent', `blob ${digest}: ${detail}`);
  }
}

/**
 * The store's server could not be reached: the connection gave up (its budget ran out) or was
 * closed under the operation. What the operation was sent to do did not happen, or — for an
 * append whose reply was lost — see AppendOutcomeUnknownError.
 */
export class StoreUnreachableError extends WeftError {
  constructor(
    /** The server, e.g. `redis://127.0.0.1:6379/0` (no credentials). */
    readonly store: string,
    /** Why it counts as unreachable, e.g. `no connection for 10000 ms`. */
    readonly detail: string,
    /** What was not done, and what to do next. */
    next = 'start it or check the URL, then run the command again',
  ) {
    super('store.unreachable', 'transient', `Redis at ${store} is unreachable (${detail}): ${next}`);
  }
}

/**
 * The store's server answered, and refused this client: a wrong password or user (`WRONGPASS`), no
 * credentials where they are required (`NOAUTH`), or an ACL user without a permission Weft needs at
 * connect (`NOPERM` on PING, CONFIG GET, INFO). Not an outage: the server is up, and waiting or
 * retrying changes nothing — the credentials or the user's ACL must be fixed.
 */
export class StoreAuthRefusedError extends WeftError {
  constructor(
    /** The server, e.g. `redis://127.0.0.1:6379/0` (no credentials). */
    readonly store: string,
    /** Redis's own first line, e.g. `WRONGPASS invalid username-password pair or user is disabled.` */
    readonly detail: string,
    /** What to do. */
    next: string,
  ) {
    super('store.auth_refused', 'permanent', `Redis at ${store} refused this client (${detail}): ${next}`);
  }
}

/**
 * A store that refused access to keys, as opposed to a journal that is damaged: Redis answers
 * `NOPERM` to a user whose ACL does not cover a key or command — a tenant's user pointed at another
 * tenant's prefix. A refusal is not damage and says nothing about the invocation.
 */
export class StoreAccessRefusedError extends WeftError {
  constructor(store: string, cause: Error) {
    super('store.access_refused', 'permanent', `${store} refused access (${cause.message.split('\n')[0]}): this store user may not read or write there — use the Redis user and --redis-prefix of the tenant that owns it`);
  }
}

/**
 * An append was handed to the connection and its reply never came: the connection died with it in
 * flight (a server killed, a network cut). The store's scripts are safe to resend, but once the
 * connection has given up nobody resends it — so the records are in the journal or they are not.
 * Nothing may be reported as written; a resume reads the journal and goes on from what it holds.
 */
export class AppendOutcomeUnknownError extends WeftError {
  constructor(
    readonly invocation: string,
    /** The seqs the lost append carried (first, last). */
    readonly seqs: { first: number; last: number },
    readonly store: string,
    readonly detail: string,
  ) {
    const range = seqs.first === seqs.last ? `seq ${seqs.first}` : `seq ${seqs.first}–${seqs.last}`;
    super(
      'journal.outcome_unknown',
      'transient',
      `Redis at ${store} became unreachable with an append to ${invocation} in flight (${range}; ${detail}): the last append's outcome is unknown — ` +
        `it is in the journal or it is not; once Redis is back, a resume reads which and goes on from there`,
    );
  }
}
