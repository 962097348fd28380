/**
 * `weft cancel <id> [--reason TEXT] [--by NAME] [--wait SECONDS] [--dir D] [--domain D] [--tenant T] [--json]`
 * — stop an invocation from any process. The request goes to its inbox; then, if no live runtime
 * holds the invocation, this process takes it up (with what it pinned, as `weft resume` does) and
 * stops it: `cancel.requested`, the current epoch's effects compensated in reverse order,
 * `invocation.cancelled`, sealed. If a live runtime holds it, that one sees the request before its
 * next step; this command waits for the journal to end (`--wait`, default 60 s) and says so if it
 * does not — the request stays in the inbox for whoever takes the invocation up next.
 *
 * It prints the status and the effects that stay done (world effects of epochs already closed,
 * and steps with no inverse): a person knows what, if anything, to undo by hand. An invocation that
 * had already ended is reported as it ended (nothing is written). `--json` prints one line:
 * `{ id, status, reason, journal, fingerprint, publicKey, by, kept: [{ epoch, step, actuator, key }], alreadyEnded }`.
 */
import { userInfo } from 'node:os';
import { journalFileOf } from '../../journal/store.js';
import { keptEffectText } from '../../machines/kept-effects.js';
import type { InvocationResult } from '../../runtime/handle.js';
import { UsageError } from '../args.js';
import { continueCommand } from '../continue-command.js';
import { outcomeLine } from '../outcome-line.js';
import { refuseGivenOtherKey } from '../given-key.js';
import { command, type Location } from '../hints.js';
import { printJsonLine } from '../json-line.js';
import type { Workspace } from '../workspace.js';
import { storeUsage } from '../store-choice.js';
import { dispatchUsage } from '../dispatch-choice.js';
import { signingKeyUsage } from '../signing-key-choice.js';
import { EXIT } from '../exit-codes.js';

export const usage =
  `cancel <id> [--reason TEXT] [--by NAME] [--wait SECONDS] [--dir D] [--domain D] [--tenant T] [--model-url URL [--model NAME]] ${signingKeyUsage} ${storeUsage} ${dispatchUsage} [--json]\n` +
  '                                       stop an invocation from any process: compensate its current epoch, end it cancelled and sealed,\n' +
  '                                       and list the effects that stay done';

export function run(argv: string[]): Promise<number> {
  let waitMs: number | undefined;
  return continueCommand(argv, {
    name: 'cancel',
    usage,
    options: { reason: { type: 'string' }, by: { type: 'string' }, wait: { type: 'string' } },
    check: (args) => {
      if (args.strings.by !== undefined && args.strings.by.length === 0) throw new UsageError('--by NAME must not be empty: a cancel records who asked');
      if (args.strings.wait !== undefined) {
        const seconds = Number(args.strings.wait);
        if (!Number.isFinite(seconds) || seconds < 0) throw new UsageError(`--wait takes a number of seconds, got ${JSON.stringify(args.strings.wait)}`);
        waitMs = Math.round(seconds * 1000);
      }
    },
    call: async (ws, { args, id, tenant }) => {
      // A key given must be the journal's, also when a live runtime will seal the cancel: refused before the inbox is written (given-key.ts).
      await refuseGivenOtherKey(ws.store, id, 'cancel', args.strings['signing-key']);
      return ws.runtime.cancel(id, { by: args.strings.by ?? whoAmI(), reason: args.strings.reason ?? '', ...tenant, ...(waitMs === undefined ? {} : { waitMs }) });
    },
    print: (ws, result, { json, location }) => printCancelled(ws, result, json, location),
  });
}

/** Who is asking, when --by is not given: the user running the command. */
function whoAmI(): string {
  try {
    return userInfo().username || 'cli';
  } catch {
    return 'cli';
  }
}

function printCancelled(ws: Workspace, result: InvocationResult, json: boolean, location: Location): number {
  const journal = journalFileOf(ws.store, result.id) ?? null;
  const kept = result.cancelled?.kept ?? [];
  // Ended otherwise before the cancel could act (runtime/cancel.ts cancelledHandle says so).
  const alreadyEnded = result.alreadyEnded === true;
  const ok = result.status === 'cancelled' || alreadyEnded;
  if (json) {
    printJsonLine({
      ...outcomeLine(ws, result),
      by: result.cancelled?.by ?? null,
      kept,
      alreadyEnded,
    });
    return ok ? EXIT.done : EXIT.failed;
  }
  const lines = [``, `invocation  ${result.id}`, `status      ${result.status}${result.reason ? ` — ${result.reason}` : ''}`];
  if (result.status === 'cancelled') {
    if (kept.length === 0) lines.push(`stays done  nothing: no world effect of this invocation remains applied`);
    else {
      lines.push(`stays done  ${kept.length} effect(s) the cancel did not undo (of epochs already closed, or with no inverse):`);
      for (const k of kept) lines.push(`            ${keptEffectText(k)}`);
    }
  } else if (!alreadyEnded) {
    // Ended another way meanwhile (sealed: nothing waits), or resting with the request in its inbox.
    lines.push(
      result.fingerprint
        ? `the run ended ${result.status} before the cancel reached it; nothing was cancelled`
        : `the cancel did not end it here; it waits in the invocation's inbox: ${command('resume', result.id, location)} (or weft serve) acts on it`,
    );
  }
  if (result.fingerprint) lines.push(`fingerprint ${result.fingerprint}`);
  lines.push(journal ? `journal     ${journal}` : `journal     in ${ws.store.name}`, `public key  ${ws.publicKeyFile}`);
  process.stdout.write(lines.join('\n') + '\n');
  return ok ? EXIT.done : EXIT.failed;
}
