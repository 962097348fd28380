/**
 * A `weft` command run in the test's own process: the command's own module (dist/cli/commands/<name>.js,
 * the code the `weft` process runs, imported by Node: ./dist.ts) called as cli/main.ts calls it — the
 * node:crypto fast paths installed, `<command> --help` answered with the usage, the JSON contract set
 * for the command line (cli/json-line.ts `expectJsonLine`), a thrown error turned into `weft: <message>`
 * and exit 1 (2 for a domain that cannot be loaded), the stores and runtimes it opened closed
 * afterwards (cli/closing.ts) — with what it writes to stdout and stderr collected, each string
 * passed through the terminal guard main.ts puts on both streams (cli/terminal-guard.ts), and its
 * exit code returned: the same `{ code, stdout, stderr }` as ./cli.ts `weft()`, without the process.
 *
 * For the tests whose subject is what a command prints and returns for many inputs (a verifier's
 * verdict on each kind of damage, a fixture run whose printed hints are then run as real commands,
 * a sample of exports to verify):
 * a CLI start costs 0.3–0.5 s of CPU, several seconds on a loaded machine. Each command keeps real
 * `weft` processes for its end-to-end tests (its start-up, its exit code as a process, --json).
 *
 * Text mode only: `--json` is refused here, since cli/json-line.ts prints at most one JSON line per
 * process (a latch that a second command in the same process would trip), and the JSON line is
 * tested on real processes. `env` and `cwd` are set for the call and restored afterwards; the tests
 * that use this run one test at a time in their file (or call it one command after another).
 *
 * The command's modules come from ./commands-here.ts (loaded once).
 */
import type { CliResult } from './cli.js';
import { commandModule, commandModules } from './commands-here.js';

type Write = typeof process.stdout.write;

/** `weft <args>` in this process (see the header); `env` as `weft()` takes it ('' for a variable unset). */
export async function weftHere(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<CliResult> {
  const { expectJsonLine, wantsJson, closeStores, guardText, exitCodeOf } = await commandModules();
  const [name, ...rest] = args;
  if (name === undefined || !/^[a-z]+$/.test(name)) throw new Error(`weftHere: not a command: ${JSON.stringify(name)}`);
  if (wantsJson(rest)) throw new Error('weftHere: --json is tested on a real process (cli/json-line.ts prints one JSON line per process)');
  const mod = await commandModule(name);

  let stdout = '';
  let stderr = '';
  const capture = (add: (text: string) => void): Write =>
    ((chunk: unknown, ...more: unknown[]) => {
      add(typeof chunk === 'string' ? guardText(chunk) : Buffer.from(chunk as Uint8Array).toString('utf8'));
      const done = more.find((m) => typeof m === 'function') as (() => void) | undefined;
      if (done) queueMicrotask(done);
      return true;
    }) as Write;
  const saved = { out: process.stdout.write, err: process.stderr.write, tty: process.stdout.isTTY, cwd: process.cwd(), env: {} as Record<string, string | undefined> };
  for (const key of Object.keys(env)) saved.env[key] = process.env[key];
  Object.assign(process.env, env);
  if (cwd !== undefined) process.chdir(cwd);
  process.stdout.write = capture((t) => (stdout += t));
  process.stderr.write = capture((t) => (stderr += t));
  // A `weft` child writes to a pipe: no terminal styles (cli/commands/log.ts).
  (process.stdout as { isTTY?: boolean }).isTTY = false;
  let code: number;
  try {
    if (rest.some((a) => a === '--help' || a === '-h') && !rest.includes('--')) {
      process.stdout.write(`usage: weft ${mod.usage}\n`);
      code = 0;
    } else {
      expectJsonLine(name, rest);
      try {
        code = await mod.run(rest);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        code = exitCodeOf(err); // as cli/main.ts answers a thrown error (cli/exit-codes.ts)
        process.stderr.write(`weft: ${message}\n`);
      }
    }
  } finally {
    await closeStores();
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    (process.stdout as { isTTY?: boolean }).isTTY = saved.tty;
    if (cwd !== undefined) process.chdir(saved.cwd);
    for (const [key, value] of Object.entries(saved.env)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
  return { code, signal: null, stdout, stderr };
}
