/**
 * `weft fork <id> --at-epoch N [--library FILE|NAME|DIGEST] [--model-url URL --model NAME] [--policy FILE|ID]
 *  [--id ID] [--reason TEXT] [--wait S] [--dir D] [--domain D] [--tenant T] [--json]` — the lawful upgrade in
 * flight (runtime/fork.ts): a new invocation goes on from the parent's epoch boundary N under a new
 * pin, its journal proving where it came from; the parent, if it had not ended, ends superseded and
 * sealed, naming the fork (one that had ended stays as it was, and the first line says so). A parent
 * already superseded is refused, naming the fork to go on from instead. The fork then runs live, followed like `weft run` (to its end or its
 * first rest).
 *
 * The parent's domain and model are found as `resume` finds them; `--library`, `--model-url/--model`
 * and `--policy` change what the fork pins (nothing given: the fork keeps the parent's pin). With
 * `--json`, one line `{ id, status, reason, journal, fingerprint, publicKey, parent, atEpoch, repinned }`.
 * A refusal (an epoch not closed, uncompensated effects after it, a parent held by another process
 * or not at rest, another tenant's parent) writes nothing and says why.
 */
import type { Library } from '../../htn/library/schema.js';
import type { JournalRecord } from '../../journal/records.js';
import { endingOf, type JournalStore } from '../../journal/store.js';
import type { Domain } from '../../runtime/domain.js';
import type { AdmissionPolicy } from '../../machines/policy.js';
import { existsSync } from 'node:fs';
import { positiveInt, UsageError, usageFailure } from '../args.js';
import { continueCommand } from '../continue-command.js';
import { crashHooks } from '../faults.js';
import { exitCodeOfResult, printOutcome } from '../follow.js';
import { outcomeLine } from '../outcome-line.js';
import { libraryChoice } from '../library-choice.js';
import { printJsonLine } from '../json-line.js';
import { readInvocationMeta, writeInvocationMeta } from '../invocation-meta.js';
import { storeUsage } from '../store-choice.js';
import { dispatchUsage } from '../dispatch-choice.js';
import { signingKeyUsage } from '../signing-key-choice.js';
import { readPolicyFile } from '../policy-choice.js';

export const usage =
  `fork <id> --at-epoch N [--library FILE|NAME|DIGEST] [--model-url URL --model NAME] [--policy FILE|ID] [--id ID] [--reason TEXT] [--wait S] [--dir D] [--domain D] [--tenant T] ${signingKeyUsage} ${storeUsage} ${dispatchUsage} [--json]\n` +
  '                                       go on from the end of epoch N of an invocation under a new pin (library version, model, policy):\n' +
  '                                       a new invocation whose journal names its parent and the state at that boundary; the parent,\n' +
  '                                       if it rests, ends superseded and sealed. Refused if the parent applied world effects after N';

/**
 * `--policy <file | id>`: a policy pack file (as `weft run --policy FILE` takes it: validated and
 * compiled before anything is written; the fork pins its digest and files it in the store), or the
 * id of a policy the domain knows.
 */
export async function policyChoice(spec: string, domain: Domain): Promise<string | AdmissionPolicy> {
  if (existsSync(spec)) return readPolicyFile(spec, domain.policyPredicates);
  const known = [domain.policy, ...(domain.policies ?? [])].filter((p) => p !== undefined).map((p) => p!.id);
  if (!known.includes(spec)) throw new UsageError(`--policy ${spec}: no such policy pack file, and domain ${domain.name} has no policy with that id (it has ${known.join(', ') || 'none'})`);
  return spec;
}

/**
 * `--library <file | name | digest>`: a file or digest as `weft run --library` takes it, or one of
 * the domain's libraries by name — the domain's current version of it (the first it lists, what a
 * new run pins), even when it keeps older ones for their journals; a digest picks an older one.
 */
async function forkLibraryChoice(spec: string, domain: Domain, store: JournalStore): Promise<Library> {
  const current = domain.libraries.find((l) => l.name === spec);
  return current ?? libraryChoice(spec, domain, store);
}

/**
 * What became of the parent, as its journal's ending says: superseded by this fork, or — a parent
 * that had already ended (completed, cancelled, failed, handed off) is not superseded — that ending,
 * left as it was.
 */
async function parentAfter(store: JournalStore, parent: string, fork: string): Promise<string> {
  const length = await store.length(parent);
  const tail = await store.read(parent, Math.max(0, length - 2));
  const superseded = tail.find((r) => r.kind === 'invocation.superseded') as JournalRecord<'invocation.superseded'> | undefined;
  if (superseded?.body.by === fork) return `${parent} is superseded`;
  const ending = endingOf(tail.map((r) => r.kind));
  return ending ? `${parent} had already ended ${ending}; it stays as it is` : `${parent} is left as it was`;
}

export function run(argv: string[]): Promise<number> {
  let atEpoch: number;
  let forked: JournalRecord<'invocation.forked'> | undefined;
  return continueCommand(argv, {
    name: 'fork',
    usage,
    options: { 'at-epoch': { type: 'string' }, library: { type: 'string' }, policy: { type: 'string' }, id: { type: 'string' }, reason: { type: 'string' }, wait: { type: 'string' } },
    check: (args) => {
      if (args.strings['at-epoch'] === undefined) throw new UsageError('missing --at-epoch N: the epoch of the parent whose end the fork goes on from');
      atEpoch = positiveInt('--at-epoch', args.strings['at-epoch']);
      if (args.strings.wait !== undefined && !/^\d{1,6}$/.test(args.strings.wait)) throw new UsageError(`--wait ${args.strings.wait}: a whole number of seconds (0: refuse at once when another process holds the parent)`);
      if ((args.strings['model-url'] === undefined) !== (args.strings.model === undefined)) throw new UsageError('--model-url and --model go together (an OpenAI-compatible endpoint and a model name)');
    },
    // The parent's domain and (unless a new one is given) its pinned model, as resume finds them.
    open: async () => ({ faults: crashHooks() }),
    call: async (ws, { args, id: parent, json, tenant }) => {
      let library: Library | undefined;
      let policy: string | AdmissionPolicy | undefined;
      try {
        library = args.strings.library === undefined ? undefined : await forkLibraryChoice(args.strings.library, ws.domain, ws.store);
        policy = args.strings.policy === undefined ? undefined : await policyChoice(args.strings.policy, ws.domain);
      } catch (err) {
        if (err instanceof UsageError) return usageFailure('fork', usage, err);
        throw err;
      }
      const modelUrl = args.strings['model-url'];
      const handle = await ws.runtime.fork(parent, {
        atEpoch,
        ...(library ? { library } : {}),
        ...(policy ? { policy } : {}),
        ...(modelUrl !== undefined && ws.runtime.options.model ? { model: ws.runtime.options.model } : {}),
        ...(args.strings.id === undefined ? {} : { id: args.strings.id }),
        ...tenant,
        ...(args.strings.reason === undefined ? {} : { reason: args.strings.reason }),
        ...(args.strings.wait === undefined ? {} : { waitMs: Number(args.strings.wait) * 1000 }),
      });
      // The workspace remembers how the fork runs (its domain, a model endpoint), as it does for a run it starts.
      if (!readInvocationMeta(ws.dir, handle.id)) writeInvocationMeta(ws.dir, handle.id, { domain: ws.domainRef, ...(modelUrl ? { modelUrl } : {}) });
      forked = (await ws.store.read(handle.id, 1, 2))[0] as JournalRecord<'invocation.forked'> | undefined;
      if (!json && forked) process.stdout.write(`forked ${handle.id} from ${parent} at the end of epoch ${atEpoch}; re-pinned: ${forked.body.repinned.join(', ') || 'nothing'}; ${await parentAfter(ws.store, parent, handle.id)}\n`);
      return handle;
    },
    print: (ws, result, { id: parent, json, location }) => {
      if (!json) return printOutcome(ws, result, json, location);
      printJsonLine({
        ...outcomeLine(ws, result),
        parent,
        atEpoch,
        repinned: forked?.body.repinned ?? null,
      });
      return exitCodeOfResult(result);
    },
  });
}
