/**
 * `weft resume <id> [--dir D] [--json]` — continue an invocation after a crash or a hibernation:
 * from its latest snapshot, reading back (not re-doing) everything the journal holds after it,
 * then live. A run hibernated at a boundary is woken; one awaiting approval needs `weft approve`.
 */
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { crashHooks } from '../faults.js';
import { followRun, printOutcome } from '../follow.js';
import { openWorkspaceFor } from '../workspace.js';

export const usage = 'resume <id> [--dir D] [--json]        continue a crashed or hibernated invocation';

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(argv, { dir: { type: 'string' }, json: { type: 'boolean' } }, { min: 1, max: 1 });
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('resume', usage, err);
    throw err;
  }
  const faults = crashHooks();
  const ws = await openWorkspaceFor(args.strings.dir, args.positionals[0]!, faults.hooks);
  faults.wrapStore(ws.store);
  const handle = await ws.runtime.resume(args.positionals[0]!);
  if (handle.state?.value === 'hibernated') handle.send({ type: 'resume' });
  const result = await followRun(handle, args.flags.json !== true);
  return printOutcome(ws, result, args.flags.json === true);
}
