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
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { followRun, journalRefOf, printRefusal } from '../follow.js';
import { openWorkspaceFor } from '../open-invocation.js';
import { refuseGivenOtherKey } from '../given-key.js';
import { command, locationOf, type Location } from '../hints.js';
import { printJsonLine } from '../json-line.js';
import { workspaceDir, type Workspace } from '../workspace.js';
import { storeOptions, storeUsage } from '../store-choice.js';
import { continueFlags, dispatchOptions, dispatchUsage } from '../dispatch-choice.js';
import { signingKeyOptions, signingKeyUsage } from '../signing-key-choice.js';
import { EXIT } from '../exit-codes.js';

export const usage =
  `cancel <id> [--reason TEXT] [--by NAME] [--wait SECONDS] [--dir D] [--domain D] [--tenant T] [--model-url URL [--model NAME]] ${signingKeyUsage} ${storeUsage} ${dispatchUsage} [--json]\n` +
  '                                       stop an invocation from any process: compensate its current epoch, end it cancelled and sealed,\n' +
  '                                       and list the effects that stay done';

export async function run(argv: string[]): Promise<number> {
  let args;
  let flags;
  let waitMs: number | undefined;
  try {
    args = parseCommandArgs(
      argv,
      {
        reason: { type: 'string' },
        by: { type: 'string' },
        wait: { type: 'string' },
        dir: { type: 'string' },
        domain: { type: 'string' },
        tenant: { type: 'string' },
        'model-url': { type: 'string' },
        model: { type: 'string' },
        json: { type: 'boolean' }, ...storeOptions, ...dispatchOptions, ...signingKeyOptions,
      },
      { min: 1, max: 1 },
    );
    if (args.strings.by !== undefined && args.strings.by.length === 0) throw new UsageError('--by NAME must not be empty: a cancel records who asked');
    if (args.strings.wait !== undefined) {
      const seconds = Number(args.strings.wait);
      if (!Number.isFinite(seconds) || seconds < 0) throw new UsageError(`--wait takes a number of seconds, got ${JSON.stringify(args.strings.wait)}`);
      waitMs = Math.round(seconds * 1000);
    }
    flags = continueFlags(workspaceDir(args.strings.dir), args.strings);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('cancel', usage, err);
    throw err;
  }
  const id = args.positionals[0]!;
  const dir = workspaceDir(args.strings.dir);
  const { choice, dispatch } = flags;
  const json = args.flags.json === true;
  const location = locationOf(choice, { queue: args.strings.queue, dispatch: args.strings.dispatch });
  let ws: Workspace | undefined;
  try {
    ws = await openWorkspaceFor({ dir, id, domain: args.strings.domain, model: { url: args.strings['model-url'], name: args.strings.model }, store: choice, dispatch, queue: args.strings.queue, refusalWaitMs: flags.refusalWaitMs, signingKeyFile: args.strings['signing-key'], tenant: args.strings.tenant });
    // A key given must be the journal's, also when a live runtime will seal the cancel: refused before the inbox is written (given-key.ts).
    await refuseGivenOtherKey(ws.store, id, 'cancel', args.strings['signing-key']);
    const handle = await ws.runtime.cancel(id, {
      by: args.strings.by ?? whoAmI(),
      reason: args.strings.reason ?? '',
      ...(args.strings.tenant === undefined ? {} : { tenant: args.strings.tenant }),
      ...(waitMs === undefined ? {} : { waitMs }),
    });
    const result = await followRun(handle, !json);
    return printCancelled(ws, result, json, location);
  } catch (err) {
    return printRefusal('cancel', id, ws?.store ?? (choice.redis ? null : dir), err, json, ws?.domainNote, location);
  }
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
  // Ended otherwise before the cancel could act (the runtime's reason says "nothing was cancelled").
  const alreadyEnded = result.status !== 'cancelled' && result.cancelled === undefined && (result.reason ?? '').endsWith('nothing was cancelled');
  const ok = result.status === 'cancelled' || alreadyEnded;
  if (json) {
    printJsonLine({
      id: result.id,
      status: result.status,
      reason: result.reason ?? null,
      journal: journal ?? journalRefOf(ws.store, result.id),
      fingerprint: result.fingerprint ?? null,
      publicKey: ws.publicKeyFile,
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
