/**
 * Ctrl-C (SIGINT) or SIGTERM while `run`, `resume` or `approve` follows an invocation: the process
 * stops as a crash would stop it — the journal keeps everything it acknowledged, and the next
 * `weft resume` takes over the lease of this dead process at once — but not mutely. It prints one
 * line on stderr, `interrupted — resume with: weft resume <id> <location>` (a command that works as
 * printed; or, when nothing was recorded yet, that there is nothing to resume), with --json its
 * JSON line (status `interrupted`, what `weft ls` then shows), and exits 130 for SIGINT, 143 for
 * SIGTERM. A second signal exits at once.
 */
import { command, type Location } from './hints.js';
import { printFailureLine } from './json-line.js';
import { EXIT, REFUSED } from './exit-codes.js';

const EXIT_CODES = { SIGINT: EXIT.interrupted, SIGTERM: EXIT.terminated } as const;

/** How long the exit waits for the check and the lines to be written before it goes anyway. */
const GRACE_MS = 1_000;

/**
 * From now on, a SIGINT or SIGTERM ends the process with the resume line for `id`. `recorded`
 * says whether the invocation has a journal yet (a `run` interrupted before its first record has
 * nothing to resume). Returns what gives the signals back once the run has rested or ended.
 */
export function resumeOnInterrupt(id: string, location: Location, recorded: () => Promise<boolean> = async () => true): () => void {
  let stopping = false;
  const stop = (signal: keyof typeof EXIT_CODES) => {
    const code = EXIT_CODES[signal];
    if (stopping) process.exit(code);
    stopping = true;
    setTimeout(() => process.exit(code), GRACE_MS).unref();
    const known = Promise.race([recorded().catch(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), GRACE_MS / 2).unref())]);
    void known.then((started) => {
      const line = started
        ? `interrupted (${signal}) — resume with: ${command('resume', id, location)}`
        : `interrupted (${signal}) before ${id} recorded anything — nothing to resume; run it again`;
      printFailureLine(line, REFUSED.interrupted, code, { id, status: started ? 'interrupted' : null });
      process.stderr.write(`${line}\n`);
      let pending = 2;
      const done = () => {
        if (--pending === 0) process.exit(code);
      };
      process.stdout.write('', done);
      process.stderr.write('', done);
    });
  };
  const onInt = () => stop('SIGINT');
  const onTerm = () => stop('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  // Once the run has rested or ended there is nothing to resume: the signals are Node's again.
  return () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  };
}
