/**
 * The one table of what a `weft` command ends with: its exit code, and — with `--json` — the
 * `refused` code of its failure line (cli/json-line.ts). Every command takes its codes from here;
 * docs/cli-exit-codes.md is the same table for people.
 *
 * Exit codes:
 *   0    done: the command did what was asked (a run that rests — awaiting approval, hibernated,
 *        sleeping — is done too: it waits, by design)
 *   1    the command ran, and what it ran failed as a result: a run ended failed or suspended, a
 *        journal is not intact, a replay diverged, a refusal of the runtime (a pin mismatch, a
 *        journal filed under another id, an export that would mislead), a store that cannot be read
 *   2    the command line is wrong, and fixing it is the way on: a usage error (an unknown flag,
 *        a bad value), or something the user named that is not there — a file or folder, a
 *        domain, an invocation id no store holds
 *   3    `weft verify`: the seal does not match the key (the chain itself is intact)
 *   4    `weft verify`: the chain is intact but its seal's signature was not checked (no key given)
 *   130  interrupted by SIGINT (Ctrl-C) while following a run; 143 by SIGTERM (cli/interrupt.ts)
 *
 * Refusal codes (`refused` in a `--json` failure line): `usage` for a command line to fix;
 * `invocation.not_found` for an invocation no store holds (or another tenant's: it is answered as a
 * missing one) — the same code, exit 2, from every command that takes an id; `file.not_found` for a
 * file or folder the user named that is not there; `domain.*` for a domain that cannot be found or
 * loaded; a WeftError's own code for a refusal of the runtime (`pin.mismatch`, `journal.foreign`…);
 * `interrupted`; `error` for an error nobody expected.
 */

/**
 * Whether `err` is a WeftError: its mark (journal/errors.ts, `Symbol.for('weft.error')`), read here
 * without importing it — main.ts loads this table, and `weft --version` loads nothing of journal/.
 */
function isWeftError(err: unknown): err is { code: string } {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[Symbol.for('weft.error')] === true && typeof (err as { code?: unknown }).code === 'string';
}

export const EXIT = {
  done: 0,
  failed: 1,
  usage: 2,
  sealMismatch: 3,
  sealUnchecked: 4,
  interrupted: 130,
  terminated: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The refusal codes the CLI itself gives (a WeftError brings its own). */
export const REFUSED = {
  usage: 'usage',
  notFound: 'invocation.not_found',
  fileNotFound: 'file.not_found',
  interrupted: 'interrupted',
  error: 'error',
} as const;

/**
 * Codes that say "the invocation you named is not there": one code, `invocation.not_found`, whichever
 * layer noticed (the runtime and the client: runtime/errors.ts InvocationNotFoundError; the CLI's pin
 * lookup) — exit 2. verify/log's journal source says so by its error's name (JournalNotFoundError).
 */
const NOT_FOUND_CODES: ReadonlySet<string> = new Set(['invocation.not_found']);

/** Refusal codes of a command line to fix (exit 2) besides the not-found ones and `domain.*`. */
const USAGE_CODES: ReadonlySet<string> = new Set(['usage', 'file.not_found', 'runtime.bad_invocation_id', 'journal.invalid_name']);

/** An error's `code` when it carries one (a WeftError, a DomainLoadError, a UsageError has none). */
function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The `refused` code an error is answered with (see the header). */
export function refusalCode(err: unknown): string {
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'UsageError') return REFUSED.usage;
  if (name === 'JournalNotFoundError') return REFUSED.notFound;
  if (name === 'MissingPathError') return REFUSED.fileNotFound;
  const code = codeOf(err);
  if (code !== undefined && NOT_FOUND_CODES.has(code)) return REFUSED.notFound;
  if (name === 'DomainLoadError') return code ?? 'domain.not_found';
  if (isWeftError(err)) return err.code;
  return REFUSED.error;
}

/** The exit code a refusal code ends the command with: 2 for a command line to fix, else 1. */
export function exitCodeForRefusal(refused: string): ExitCode {
  return refused === REFUSED.notFound || refused.startsWith('domain.') || USAGE_CODES.has(refused) ? EXIT.usage : EXIT.failed;
}

/** The exit code an error ends the command with (see the header). */
export function exitCodeOf(err: unknown): ExitCode {
  return exitCodeForRefusal(refusalCode(err));
}

/** Whether an error says the invocation named is not there (answered alike by every command). */
export function isNotFound(err: unknown): boolean {
  return refusalCode(err) === REFUSED.notFound;
}

/** A file or folder the user named that is not there: exit 2, refused `file.not_found`. */
export class MissingPathError extends Error {
  override readonly name = 'MissingPathError';
}
