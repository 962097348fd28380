/**
 * `weft resume <id> [--dir D] [--domain D] [--model-url URL [--model NAME]] [--quarantine-torn] [--json]`
 * — continue an invocation after a crash or a hibernation: from its latest snapshot, reading back
 * (not re-doing) everything the journal holds after it, then live. A run hibernated at a boundary
 * is woken; one awaiting approval needs `weft approve`.
 *
 * It runs with what the invocation pinned: its domain is found by itself (the module recorded at
 * start, or the built-in whose library it pinned; `--domain` overrides), its model is the pinned
 * one (an OpenAI-compatible model at `--model-url` or the endpoint it started with). Anything that
 * differs from the pin — another model, library, policy or evaluable version — is refused, naming
 * each field, before anything is written.
 *
 * A torn final record (a crash mid-write, never acknowledged) stops resume with TornTailError;
 * `--quarantine-torn` moves it aside — kept in journal.jsonl.torn-<seq> — first.
 */
import { FileStore } from '../../stores/file.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { crashHooks } from '../faults.js';
import { followRun, gapPathWhy, printOutcome, printRefusal } from '../follow.js';
import { openWorkspaceFor } from '../open-invocation.js';
import { locationOf } from '../hints.js';
import { resumeOnInterrupt } from '../interrupt.js';
import { workspaceDir, type Workspace } from '../workspace.js';
import { storeOptions, storeUsage } from '../store-choice.js';
import { continueFlags, dispatchOptions, dispatchUsage } from '../dispatch-choice.js';
import { rekeyOptions, rekeyUsage, signingKeyOptions, signingKeyUsage } from '../signing-key-choice.js';
import { startStately, statelyChoice, statelyOptions, statelyUsage, type StatelyChoice } from '../stately-choice.js';

export const usage =
  `resume <id> [--dir D] [--domain D] [--tenant T] [--model-url URL [--model NAME]] [--quarantine-torn] ${signingKeyUsage} ${rekeyUsage} ${storeUsage} ${dispatchUsage} ${statelyUsage} [--json]\n` +
  '                                       continue a crashed, hibernated or suspended invocation with what it pinned (--quarantine-torn:\n' +
  '                                       move a torn final record, never acknowledged, aside into journal.jsonl.torn-<seq> first)';

export async function run(argv: string[]): Promise<number> {
  let args;
  let flags;
  let stately: StatelyChoice | undefined;
  try {
    args = parseCommandArgs(
      argv,
      { dir: { type: 'string' }, domain: { type: 'string' }, tenant: { type: 'string' }, 'model-url': { type: 'string' }, model: { type: 'string' }, json: { type: 'boolean' }, ...storeOptions, ...dispatchOptions, ...signingKeyOptions, ...rekeyOptions, ...statelyOptions, 'quarantine-torn': { type: 'boolean' } },
      { min: 1, max: 1 },
    );
    flags = continueFlags(workspaceDir(args.strings.dir), args.strings);
    stately = statelyChoice(args.flags, args.strings);
    // A Redis append is one script, all or nothing: a Redis journal has no torn tail to move aside.
    if (args.flags['quarantine-torn'] && flags.choice.redis) throw new UsageError('--quarantine-torn is for a workspace on disk (--dir D): a journal in Redis is appended all or nothing and is never torn');
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('resume', usage, err);
    throw err;
  }
  const id = args.positionals[0]!;
  const dir = workspaceDir(args.strings.dir);
  const { choice, dispatch } = flags;
  const json = args.flags.json === true;
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
  const location = locationOf(choice, { queue: args.strings.queue, dispatch: args.strings.dispatch });
  const rested = resumeOnInterrupt(id, location);
  let ws: Workspace | undefined;
  try {
    const tap = stately ? await startStately(stately, 'resume', { waitForClient: true }) : undefined;
    ws = await openWorkspaceFor({ stately: tap, dir, id, domain: args.strings.domain, model: { url: args.strings['model-url'], name: args.strings.model }, store: choice, dispatch, queue: args.strings.queue, refusalWaitMs: flags.refusalWaitMs, faults: crashHooks(), signingKeyFile: args.strings['signing-key'], rekey: args.flags.rekey, tenant: args.strings.tenant });
    const handle = await ws.runtime.resume(id, { rekey: args.flags.rekey === true, ...(args.strings.tenant === undefined ? {} : { tenant: args.strings.tenant }) });
    const result = await followRun(handle, !json);
    rested();
    return printOutcome(ws, result, json, location, json ? undefined : await gapPathWhy(ws.store, result));
  } catch (err) {
    return printRefusal('resume', id, ws?.store ?? (choice.redis ? null : dir), err, json, ws?.domainNote, location);
  } finally {
    rested(); // rested, ended or refused: a signal from now on is Node's again, never a "resume with"
  }
}
