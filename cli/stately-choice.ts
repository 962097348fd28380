/**
 * `--stately [--port N] [--stately-wait S]` on `weft run`, `resume` and `serve`: start the Stately
 * relay (inspector/stately/relay.ts) for this process, print where to connect, and — for `run` and
 * `resume`, whose runs may be short — wait for the first inspector client before the run starts
 * (at most S seconds, 30 by default; 0: do not wait), so the run is seen from its first state.
 * The relay lives as long as the process and sends what it has queued before the process exits.
 */
import type { StatelyRelay } from '../inspector/stately/relay.js';
import type { StatelyTap } from '../inspector/stately/runtime-tap.js';
import { UsageError } from './args.js';
import { closeAtExit } from './closing.js';

export const statelyOptions = {
  stately: { type: 'boolean' },
  port: { type: 'string' },
  'stately-wait': { type: 'string' },
} as const;

export const statelyUsage = '[--stately [--port N] [--stately-wait S]]';
export const DEFAULT_STATELY_PORT = 7392;

export interface StatelyChoice {
  port: number;
  waitSeconds: number;
}

/** The relay the flags ask for, or undefined without `--stately` (then `--port` / `--stately-wait` are usage errors). */
export function statelyChoice(flags: Record<string, boolean | undefined>, strings: Record<string, string | undefined>): StatelyChoice | undefined {
  if (flags.stately !== true) {
    for (const flag of ['port', 'stately-wait'] as const) if (strings[flag] !== undefined) throw new UsageError(`--${flag} goes with --stately (the Stately inspector relay)`);
    return undefined;
  }
  const portText = strings.port ?? String(DEFAULT_STATELY_PORT);
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65535) throw new UsageError(`--port takes a port number 0–65535 (0: any free one), got ${JSON.stringify(portText)}`);
  const waitText = strings['stately-wait'] ?? '30';
  if (!/^[0-9]{1,4}$/.test(waitText)) throw new UsageError(`--stately-wait takes whole seconds (0: do not wait), got ${JSON.stringify(waitText)}`);
  return { port: Number(portText), waitSeconds: Number(waitText) };
}

/** Start the relay, say where it is (on stderr: stdout is the command's own), and wait for a client when asked. */
export async function startStately(choice: StatelyChoice, command: string, options: { waitForClient: boolean }): Promise<StatelyTap> {
  // Loaded only with --stately: the relay's server (node:http, WebSockets) is no part of a plain run's start.
  const [{ StatelyRelay }, { statelyTap }] = await Promise.all([import('../inspector/stately/relay.js'), import('../inspector/stately/runtime-tap.js')]);
  let relay: StatelyRelay;
  try {
    relay = await StatelyRelay.start({ port: choice.port });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`--stately: cannot listen on 127.0.0.1:${choice.port} (${code ?? (err as Error).message})${code === 'EADDRINUSE' ? ': pass --port N for another port, or --port 0 for any free one' : ''}`);
  }
  closeAtExit(relay);
  process.stderr.write(
    `weft ${command}: Stately inspector relay at ${relay.url} — a client in Node connects there; in a browser open ${relay.pageUrl}\n` +
      `  (that page shows stately.ai/inspect, which needs the internet and receives each run's states and step events — never args, results or the intent; weft inspect is the offline viewer)\n`,
  );
  if (options.waitForClient && choice.waitSeconds > 0) {
    process.stderr.write(`weft ${command}: waiting up to ${choice.waitSeconds} s for an inspector client before starting…\n`);
    if (!(await relay.waitForClient(choice.waitSeconds * 1000))) process.stderr.write(`weft ${command}: no inspector client after ${choice.waitSeconds} s; going on (a client that connects later sees each run where it stands)\n`);
  }
  return statelyTap(relay);
}
