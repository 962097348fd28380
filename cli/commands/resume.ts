/**
 * `weft resume <id> [--dir D] [--quarantine-torn] [--json]` — continue an invocation after a crash
 * or a hibernation: from its latest snapshot, reading back (not re-doing) everything the journal
 * holds after it, then live. A run hibernated at a boundary is woken; one awaiting approval needs
 * `weft approve`. A torn final record (a crash mid-write, never acknowledged) stops resume with
 * TornTailError; `--quarantine-torn` moves it aside — kept in journal.jsonl.torn-<seq> — first.
 */
import path from 'node:path';
import { FileStore } from '../../journal/stores/file.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { crashHooks } from '../faults.js';
import { followRun, printOutcome } from '../follow.js';
import { DEFAULT_DIR, openWorkspaceFor } from '../workspace.js';

export const usage = 'resume <id> [--dir D] [--quarantine-torn] [--json]\n                                       continue a crashed or hibernated invocation (--quarantine-torn: move a torn\n                                       final record, never acknowledged, aside into journal.jsonl.torn-<seq> first)';

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(argv, { dir: { type: 'string' }, json: { type: 'boolean' }, 'quarantine-torn': { type: 'boolean' } }, { min: 1, max: 1 });
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('resume', usage, err);
    throw err;
  }
  const id = args.positionals[0]!;
  const dir = path.resolve(args.strings.dir ?? DEFAULT_DIR);
  if (args.flags['quarantine-torn']) {
    // Before anything reads the journal: a torn final record (never acknowledged) is moved aside.
    const store = new FileStore(dir);
    const lease = await store.acquire(id, { writer: `weft-resume:${process.pid}`, ttlMs: 30_000 });
    try {
      const moved = await store.quarantineTornTail(lease);
      if (moved) process.stderr.write(`quarantined the torn record at seq ${moved.seq} (never acknowledged) into ${moved.keptAt}\n`);
    } finally {
      await store.release(lease);
    }
  }
  const faults = crashHooks();
  const ws = await openWorkspaceFor(dir, id, faults.hooks);
  faults.wrapStore(ws.store);
  const handle = await ws.runtime.resume(id);
  if (handle.state?.value === 'hibernated') handle.send({ type: 'resume' });
  const result = await followRun(handle, args.flags.json !== true);
  return printOutcome(ws, result, args.flags.json === true);
}
