#!/usr/bin/env node
/**
 * The `weft` command. Each subcommand lives in its own module under cli/commands/ and is loaded
 * only when called, so `weft verify` does not pay for the HTN engine and vice versa.
 *
 * A command module exports `run(argv: string[]): Promise<number>` (the exit code) and
 * `usage: string`. `weft <command> --help` prints that usage and exits 0, for every command.
 * Errors a user can fix are printed as one line saying what to do; exit codes and `--json` refusal
 * codes come from one table (cli/exit-codes.ts; docs/cli-exit-codes.md): 2 means the command line
 * itself was wrong. `weft --version` prints the package's version.
 *
 * Start-up is paid by every command (and by the test suite, which spawns hundreds), so this module
 * imports nothing heavy: `weft --version` loads no schema, curve or store; the node:crypto fast paths
 * for SHA-256 and ed25519 are installed just before a command's module is loaded
 * (`npm run bench -- startup` measures it).
 */
import { readFileSync } from 'node:fs';
import { closeStores } from './closing.js';
import { EXIT, exitCodeOf, REFUSED, refusalCode } from './exit-codes.js';
import { expectJsonLine, failureLine, printFailureLine, printJsonLine, wantsJson } from './json-line.js';
import { guardStream } from './terminal-guard.js';

interface CommandModule {
  run(argv: string[]): Promise<number>;
  usage: string;
}

const commands: Record<string, () => Promise<CommandModule>> = {
  keygen: () => import('./commands/keygen.js'),
  verify: () => import('./commands/verify.js'),
  log: () => import('./commands/log.js'),
  run: () => import('./commands/run.js'),
  resume: () => import('./commands/resume.js'),
  fork: () => import('./commands/fork.js'),
  approve: () => import('./commands/approve.js'),
  cancel: () => import('./commands/cancel.js'),
  replay: () => import('./commands/replay.js'),
  ls: () => import('./commands/ls.js'),
  show: () => import('./commands/show.js'),
  export: () => import('./commands/export.js'),
  worker: () => import('./commands/worker.js'),
  serve: () => import('./commands/serve.js'),
  htn: () => import('./commands/htn.js'),
  inspect: () => import('./commands/inspect.js'),
  mine: () => import('./commands/mine.js'),
  policy: () => import('./commands/policy.js'),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`weft ${version()}\n`);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const lines = ['usage: weft <command> [options]       weft --version', '', 'commands:'];
    await installNodeCrypto();
    for (const key of Object.keys(commands)) {
      const mod = await commands[key]!();
      lines.push(`  ${mod.usage}`);
    }
    process.stdout.write(lines.join('\n') + '\n');
    return name ? EXIT.done : EXIT.usage;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    const message = `unknown command "${name}" (run "weft --help" for the list)`;
    if (wantsJson(rest)) printJsonLine(failureLine(message, REFUSED.usage, EXIT.usage));
    process.stderr.write(`weft: ${message}\n`);
    return EXIT.usage;
  }
  await installNodeCrypto();
  const mod = await load();
  // `weft <command> --help` (or -h) anywhere among its options: the usage, exit 0 — for every command.
  if (rest.some((a) => a === '--help' || a === '-h') && !rest.includes('--')) {
    process.stdout.write(`usage: weft ${mod.usage}\n`);
    return EXIT.done;
  }
  expectJsonLine(name, rest);
  // `--otel` / WEFT_OTEL=1 (telemetry/cli-tracing.ts): taken out of argv here; loaded only when asked.
  const otelAt = rest.indexOf('--otel');
  const dashes = rest.indexOf('--');
  const otel = (otelAt >= 0 && (dashes < 0 || otelAt < dashes)) || process.env.WEFT_OTEL === '1';
  if (otel) {
    const tracing = await import('../telemetry/cli-tracing.js');
    if (!tracing.TRACED_COMMANDS.has(name)) {
      if (otelAt < 0) return mod.run(rest);
      const message = `--otel applies to ${[...tracing.TRACED_COMMANDS].join(', ')}, not to ${name}`;
      printFailureLine(message, REFUSED.usage, EXIT.usage);
      process.stderr.write(`weft ${name}: ${message}\n`);
      return EXIT.usage;
    }
    if (otelAt >= 0 && (dashes < 0 || otelAt < dashes)) rest.splice(otelAt, 1);
    await tracing.startCliTracing(name);
    try {
      return await mod.run(rest);
    } finally {
      await tracing.stopCliTracing();
    }
  }
  return mod.run(rest);
}

/**
 * The node:crypto SHA-256 and ed25519 (journal/sha256-node.ts, ed25519-node.ts), installed before
 * any command module is loaded, so that nothing a command computes, at import or later, uses the
 * slower reference implementations. Not at the top: `weft --version` needs neither.
 */
async function installNodeCrypto(): Promise<void> {
  await import('../journal/sha256-node.js');
  await import('../journal/ed25519-node.js');
}

/** The installed package's version (package.json sits two folders above dist/cli/main.js). */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

quietWhenOutputCloses();
// Text from intents, models and actuators reaches many lines: none of it may act on a terminal.
guardStream(process.stdout);
guardStream(process.stderr);

main(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = code;
      // A command that promised a JSON line always ends with one (json-line.ts).
      printFailureLine(`weft ${process.argv[2]} ended with exit code ${code} without an outcome (see stderr)`, REFUSED.error, code);
    },
    (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      // A domain (or an invocation) that is not there: the command line names something to fix (exit-codes.ts).
      const code = exitCodeOf(err);
      printFailureLine(message, refusalCode(err), code);
      process.stderr.write(`weft: ${message}\n`);
      if (code === EXIT.failed && process.env.WEFT_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
      process.exitCode = code;
    },
  )
  // Redis connections the command opened would keep the process alive.
  .finally(() => closeStores())
  .then(exitOnceWritten);

/**
 * A reader that stops reading (`weft ls | head -1`, a closed terminal): the next write fails with
 * EPIPE, which Node reports as an 'error' event on the stream — unhandled, a stack trace and exit
 * code 1 in the middle of the command. Here the output is given up quietly instead and the
 * command finishes its work (a run is not cut short because nobody reads its progress); its exit
 * code stands. Any other error on the stream is still thrown.
 */
function quietWhenOutputCloses(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    });
  }
}

/**
 * The command has done its work (a long-lived one, serve or worker, returns only when stopped):
 * exit once what it printed is written. Nothing else may hold the process open — a domain's own
 * client still reconnecting to a Redis that is gone, a timer an actuator left behind.
 */
function exitOnceWritten(): void {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit();
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}
