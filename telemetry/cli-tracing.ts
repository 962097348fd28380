/**
 * `--otel` (or WEFT_OTEL=1) on the commands that run or continue code: the CLI's side of tracing.
 * cli/main.ts takes the flag out of the command's argv (no command parses it) and, when it was
 * given, calls `startCliTracing` before the command and `stopCliTracing` once it returns: spans are
 * flushed within FLUSH_MS, whatever the exporter does, so a dead collector never holds a command up.
 * Without the SDK installed, one line says what to install and the command runs untraced.
 */
import { setProcessSegment } from './segment.js';
import { installTracing, TracingUnavailable, type Tracing } from './setup.js';

/** The commands `--otel` applies to. */
export const TRACED_COMMANDS: ReadonlySet<string> = new Set(['run', 'resume', 'approve', 'cancel', 'fork', 'serve', 'worker', 'inspect', 'mine']);
export const FLUSH_MS = 2_000;

let running: Tracing | undefined;

export async function startCliTracing(command: string): Promise<void> {
  setProcessSegment(command);
  try {
    running = await installTracing();
  } catch (err) {
    const message = err instanceof TracingUnavailable ? err.message : `tracing could not start: ${err instanceof Error ? err.message : String(err)}`;
    process.stderr.write(`weft ${command}: ${message}; running without it\n`);
  }
}

export async function stopCliTracing(): Promise<void> {
  const t = running;
  running = undefined;
  await t?.shutdown(FLUSH_MS);
}
