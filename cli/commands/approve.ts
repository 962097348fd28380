/**
 * `weft approve <id> --by NAME [--reject] [--note TEXT] [--dir D] [--domain D] [--model-url URL [--model NAME]] [--json]`
 * — write a person's decision on an epoch that awaits approval to the invocation's inbox in the
 * store, then continue the run with what the invocation pinned (as `weft resume` does), which
 * records it (`approval.decided`): approved epochs execute; rejected ones close as denied and the
 * model is asked for another goal. `--leave-to-serve` only writes the inbox: a `weft serve`
 * process (or a later `weft resume`) records it and goes on — and the command says so: the
 * decision waits there, the invocation is still awaiting approval until serve acts on it.
 */
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { followRun, printOutcome, printRefusal } from '../follow.js';
import { openWorkspaceFor } from '../open-invocation.js';
import { refuseGivenOtherKey } from '../given-key.js';
import { command, locationOf, type Location } from '../hints.js';
import { printJsonLine } from '../json-line.js';
import { EXIT } from '../exit-codes.js';
import { resumeOnInterrupt } from '../interrupt.js';
import { workspaceDir, type Workspace } from '../workspace.js';
import { storeOptions, storeUsage } from '../store-choice.js';
import { continueFlags, dispatchOptions, dispatchUsage } from '../dispatch-choice.js';
import { rekeyOptions, rekeyUsage, signingKeyOptions, signingKeyUsage } from '../signing-key-choice.js';

export const usage =
  `approve <id> --by NAME [--reject] [--note TEXT] [--dir D] [--domain D] [--tenant T] [--model-url URL [--model NAME]] [--leave-to-serve] ${signingKeyUsage} ${rekeyUsage} ${storeUsage} ${dispatchUsage} [--json]\n` +
  '                                       decide on an epoch awaiting approval, and continue with what the invocation pinned';

export async function run(argv: string[]): Promise<number> {
  let args;
  let flags;
  try {
    args = parseCommandArgs(
      argv,
      {
        by: { type: 'string' },
        reject: { type: 'boolean' },
        'leave-to-serve': { type: 'boolean' },
        note: { type: 'string' },
        dir: { type: 'string' },
        domain: { type: 'string' },
        tenant: { type: 'string' },
        'model-url': { type: 'string' },
        model: { type: 'string' },
        json: { type: 'boolean' }, ...storeOptions, ...dispatchOptions, ...signingKeyOptions, ...rekeyOptions,
      },
      { min: 1, max: 1 },
    );
    if (!args.strings.by) throw new UsageError('--by NAME is required: an approval records who decided');
    flags = continueFlags(workspaceDir(args.strings.dir), args.strings);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('approve', usage, err);
    throw err;
  }
  const id = args.positionals[0]!;
  const dir = workspaceDir(args.strings.dir);
  const { choice, dispatch } = flags;
  const json = args.flags.json === true;
  const location = locationOf(choice, { queue: args.strings.queue, dispatch: args.strings.dispatch });
  const rested = resumeOnInterrupt(id, location);
  let ws: Workspace | undefined;
  try {
    ws = await openWorkspaceFor({ dir, id, domain: args.strings.domain, model: { url: args.strings['model-url'], name: args.strings.model }, store: choice, dispatch, queue: args.strings.queue, refusalWaitMs: flags.refusalWaitMs, signingKeyFile: args.strings['signing-key'], rekey: args.flags.rekey, tenant: args.strings.tenant });
    // Left to serve, this process seals nothing: a key it was given must still be the journal's (given-key.ts).
    if (args.flags['leave-to-serve'] === true) await refuseGivenOtherKey(ws.store, id, 'approve', args.strings['signing-key'], args.flags.rekey === true);
    const handle = await ws.runtime.approve(id, {
      decision: args.flags.reject ? 'rejected' : 'approved',
      by: args.strings.by!,
      ...(args.strings.note ? { note: args.strings.note } : {}),
    }, { run: args.flags['leave-to-serve'] !== true, rekey: args.flags.rekey === true, ...(args.strings.tenant === undefined ? {} : { tenant: args.strings.tenant }) });
    const result = await followRun(handle, !json);
    rested();
    if (args.flags['leave-to-serve'] === true) return printLeftToServe(result.id, args.flags.reject ? 'rejected' : 'approved', args.strings.by!, json, location);
    return printOutcome(ws, result, json, location);
  } catch (err) {
    return printRefusal('approve', id, ws?.store ?? (choice.redis ? null : dir), err, json, ws?.domainNote, location);
  } finally {
    rested(); // rested, ended or refused: a signal from now on is Node's again, never a "resume with"
  }
}

/** `--leave-to-serve`: the decision is in the inbox, not yet in the journal; say who acts on it, and how to do it now. */
function printLeftToServe(id: string, decision: 'approved' | 'rejected', by: string, json: boolean, location: Location): number {
  const reason = `${decision} by ${by}, waiting in its inbox: weft serve records it and goes on (or ${command('resume', id, location)} does it now)`;
  if (json) printJsonLine({ id, status: 'awaiting_approval', reason, journal: null, fingerprint: null, publicKey: null, decided: { decision, by }, leftToServe: true });
  else process.stdout.write([``, `invocation  ${id}`, `status      awaiting_approval — ${decision} by ${by}, not yet recorded`, `the decision waits in the invocation's inbox for weft serve to act on it; to act on it now:`, `  ${command('resume', id, location)}`].join('\n') + '\n');
  return EXIT.done;
}
