/**
 * `weft approve <id> --by NAME [--reject] [--note TEXT] [--dir D] [--json]` — record a person's
 * decision on an epoch that awaits approval (`approval.decided`), then continue the run: approved
 * epochs execute; rejected ones close as denied and the model is asked for another goal.
 */
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { followRun, printOutcome } from '../follow.js';
import { openWorkspaceFor } from '../workspace.js';

export const usage = 'approve <id> --by NAME [--reject] [--note TEXT] [--dir D] [--json]\n                                       decide on an epoch awaiting approval, and continue';

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(
      argv,
      { by: { type: 'string' }, reject: { type: 'boolean' }, note: { type: 'string' }, dir: { type: 'string' }, json: { type: 'boolean' } },
      { min: 1, max: 1 },
    );
    if (!args.strings.by) throw new UsageError('--by NAME is required: an approval records who decided');
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('approve', usage, err);
    throw err;
  }
  const ws = await openWorkspaceFor(args.strings.dir, args.positionals[0]!);
  const handle = await ws.runtime.approve(args.positionals[0]!, {
    decision: args.flags.reject ? 'rejected' : 'approved',
    by: args.strings.by!,
    ...(args.strings.note ? { note: args.strings.note } : {}),
  });
  const result = await followRun(handle, args.flags.json !== true);
  return printOutcome(ws, result, args.flags.json === true);
}
