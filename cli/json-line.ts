/**
 * The `--json` contract: a command that promises one JSON line (run, resume, approve, replay,
 * verify, ls, show, mine, log, cancel, fork) prints exactly one line on stdout whatever the outcome — its result, a refusal, a
 * usage error (an unknown flag, a bad value), a domain that cannot be found or loaded, an error
 * nobody expected. A failure's line is `{ id, status, reason, journal, fingerprint, publicKey,
 * refused }`: `status` what the store shows (null when nothing can be said), `reason` the
 * message, `refused` a code from the one table (cli/exit-codes.ts: `usage`, `invocation.not_found`,
 * `file.not_found`, `domain.*`, a WeftError's code, `interrupted`, `error`);
 * verify adds `ok: false` and its `exitCode`, replay `identical: false`.
 *
 * main.ts turns the contract on for the command (`expectJsonLine`); the command prints its line
 * through `printJsonLine`, and main prints a failure line for it if it ended without one.
 */

/** The commands that promise one JSON line with --json, and what their failure line adds. */
const PROMISES: Record<string, (exitCode: number) => Record<string, unknown>> = {
  run: () => ({}),
  resume: () => ({}),
  approve: () => ({}),
  ls: () => ({}),
  show: () => ({}),
  replay: () => ({ identical: false }),
  verify: (exitCode) => ({ ok: false, exitCode }),
  mine: () => ({}),
  policy: () => ({}),
  log: () => ({}),
  cancel: () => ({}),
  fork: () => ({}),
};

let command: string | undefined;
let printed = false;

/** `--json` among a command's arguments (before a `--` that ends the options). */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** Turn the contract on for `name` when it promises a JSON line and `argv` asks for one; returns whether it is on. */
export function expectJsonLine(name: string, argv: readonly string[]): boolean {
  command = Object.hasOwn(PROMISES, name) && wantsJson(argv) ? name : undefined;
  return command !== undefined;
}

/** Whether the running command owes a JSON line (set by main before the command runs). */
export function jsonLineExpected(): boolean {
  return command !== undefined;
}

/** Print the command's one JSON line (at most once: a second is dropped). */
export function printJsonLine(value: unknown): void {
  if (printed) return;
  printed = true;
  process.stdout.write(JSON.stringify(value) + '\n');
}

/** What a failure's line says (see the header); `fields` may carry what is known (id, status, journal…). */
export function failureLine(reason: string, refused: string, exitCode: number, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const extra = command === undefined ? {} : PROMISES[command]!(exitCode);
  return { id: null, status: null, reason, journal: null, fingerprint: null, publicKey: null, ...fields, refused, ...extra };
}

/** Print a failure's line when the contract is on and no line was printed yet. */
export function printFailureLine(reason: string, refused: string, exitCode: number, fields: Record<string, unknown> = {}): void {
  if (command === undefined || printed) return;
  printJsonLine(failureLine(reason, refused, exitCode, fields));
}
