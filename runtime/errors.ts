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
