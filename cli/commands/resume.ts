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
import { UsageError } from '../args.js';
import { continueCommand } from '../continue-command.js';
import { crashHooks } from '../faults.js';
import { gapPathWhy, printOutcome } from '../follow.js';
import { storeUsage } from '../store-choice.js';
import { dispatchUsage } from '../dispatch-choice.js';
import { rekeyOptions, rekeyUsage, signingKeyUsage } from '../signing-key-choice.js';
import { startStately, statelyChoice, statelyOptions, statelyUsage, type StatelyChoice } from '../stately-choice.js';

export const usage =
  `resume <id> [--dir D] [--domain D] [--tenant T] [--model-url URL [--model NAME]] [--quarantine-torn] ${signingKeyUsage} ${rekeyUsage} ${storeUsage} ${dispatchUsage} ${statelyUsage} [--json]\n` +
  '                                       continue a crashed, hibernated or suspended invocation with what it pinned (--quarantine-torn:\n' +
  '                                       move a torn final record, never acknowledged, aside into journal.jsonl.torn-<seq> first)';

export function run(argv: string[]): Promise<number> {
  let stately: StatelyChoice | undefined;
  return continueCommand(argv, {
    name: 'resume',
    usage,
    options: { ...rekeyOptions, ...statelyOptions, 'quarantine-torn': { type: 'boolean' } },
    check: (args, shared) => {
      const { choice } = shared();
      stately = statelyChoice(args.flags, args.strings);
      // A Redis append is one script, all or nothing: a Redis journal has no torn tail to move aside.
      if (args.flags['quarantine-torn'] && choice.redis) throw new UsageError('--quarantine-torn is for a workspace on disk (--dir D): a journal in Redis is appended all or nothing and is never torn');
    },
    prepare: async ({ args, id, dir }) => {
      if (args.flags['quarantine-torn']) await quarantineTornTail(dir, id);
    },
    interruptible: true,
    open: async ({ args }) => ({
      ...(stately ? { stately: await startStately(stately, 'resume', { waitForClient: true }) } : {}),
      faults: crashHooks(),
      rekey: args.flags.rekey,
    }),
    call: async (ws, { args, id, tenant }) => ws.runtime.resume(id, { rekey: args.flags.rekey === true, ...tenant }),
    print: async (ws, result, { json, location }) => printOutcome(ws, result, json, location, json ? undefined : await gapPathWhy(ws.store, result)),
  });
}

/** Before anything reads the journal: a torn final record (never acknowledged) is moved aside. */
async function quarantineTornTail(dir: string, id: string): Promise<void> {
  const store = new FileStore(dir);
  const lease = await store.acquire(id, { writer: `weft-resume:${process.pid}`, ttlMs: 30_000 });
  try {
    const moved = await store.quarantineTornTail(lease);
    if (moved) process.stderr.write(`quarantined the torn record at seq ${moved.seq} (never acknowledged) into ${moved.keptAt}\n`);
  } finally {
    await store.release(lease);
  }
}
