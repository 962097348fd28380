/**
 * `weft approve <id> --by NAME [--reject] [--note TEXT] [--dir D] [--domain D] [--model-url URL [--model NAME]] [--json]`
 * — write a person's decision on an epoch that awaits approval to the invocation's inbox in the
 * store, then continue the run with what the invocation pinned (as `weft resume` does), which
 * records it (`approval.decided`): approved epochs execute; rejected ones close as denied and the
 * model is asked for another goal. `--leave-to-serve` only writes the inbox: a `weft serve`
 * process (or a later `weft resume`) records it and goes on — and the command says so: the
 * decision waits there, the invocation is still awaiting approval until serve acts on it.
 */
import { UsageError } from '../args.js';
import { continueCommand } from '../continue-command.js';
import { printOutcome } from '../follow.js';
import { refuseGivenOtherKey } from '../given-key.js';
import { command, type Location } from '../hints.js';
import { printJsonLine } from '../json-line.js';
import { EXIT } from '../exit-codes.js';
import { storeUsage } from '../store-choice.js';
import { dispatchUsage } from '../dispatch-choice.js';
import { rekeyOptions, rekeyUsage, signingKeyUsage } from '../signing-key-choice.js';

export const usage =
  `approve <id> --by NAME [--reject] [--note TEXT] [--dir D] [--domain D] [--tenant T] [--model-url URL [--model NAME]] [--leave-to-serve] ${signingKeyUsage} ${rekeyUsage} ${storeUsage} ${dispatchUsage} [--json]\n` +
  '                                       decide on an epoch awaiting approval, and continue with what the invocation pinned';

export function run(argv: string[]): Promise<number> {
  return continueCommand(argv, {
    name: 'approve',
    usage,
    options: { by: { type: 'string' }, reject: { type: 'boolean' }, 'leave-to-serve': { type: 'boolean' }, note: { type: 'string' }, ...rekeyOptions },
    check: (args) => {
      if (!args.strings.by) throw new UsageError('--by NAME is required: an approval records who decided');
    },
    interruptible: true,
    open: async ({ args }) => ({ rekey: args.flags.rekey }),
    call: async (ws, { args, id, tenant }) => {
      const leave = args.flags['leave-to-serve'] === true;
      // Left to serve, this process seals nothing: a key it was given must still be the journal's (given-key.ts).
      if (leave) await refuseGivenOtherKey(ws.store, id, 'approve', args.strings['signing-key'], args.flags.rekey === true);
      const decision = { decision: args.flags.reject ? 'rejected' : 'approved', by: args.strings.by!, ...(args.strings.note ? { note: args.strings.note } : {}) } as const;
      return ws.runtime.approve(id, decision, { run: !leave, rekey: args.flags.rekey === true, ...tenant });
    },
    print: (ws, result, { args, json, location }) => {
      if (args.flags['leave-to-serve'] === true) return printLeftToServe(result.id, args.flags.reject ? 'rejected' : 'approved', args.strings.by!, json, location);
      return printOutcome(ws, result, json, location);
    },
  });
}

/** `--leave-to-serve`: the decision is in the inbox, not yet in the journal; say who acts on it, and how to do it now. */
function printLeftToServe(id: string, decision: 'approved' | 'rejected', by: string, json: boolean, location: Location): number {
  const reason = `${decision} by ${by}, waiting in its inbox: weft serve records it and goes on (or ${command('resume', id, location)} does it now)`;
  if (json) printJsonLine({ id, status: 'awaiting_approval', reason, journal: null, fingerprint: null, publicKey: null, decided: { decision, by }, leftToServe: true });
  else process.stdout.write([``, `invocation  ${id}`, `status      awaiting_approval — ${decision} by ${by}, not yet recorded`, `the decision waits in the invocation's inbox for weft serve to act on it; to act on it now:`, `  ${command('resume', id, location)}`].join('\n') + '\n');
  return EXIT.done;
}
