/**
 * `weft run <domain> ["<intent>"] [--seed N] [--as-of ISO-TIME] [--dir D] [--id ID] [--tenant T] [--hibernate] [--shadow] [--json]`
 * — start an invocation of a domain on the embedded default (file store in D, in-process
 * dispatcher, the domain's model) and follow it to its end or its first resting state. The domain
 * is a built-in name (`travel`), a path to a module (`./my-domain.js`) or an installed package,
 * given as the first positional or as `--domain`; the workspace remembers it, so `resume`,
 * `approve` and `replay` find it again by themselves.
 *
 * `--policy FILE` pins a policy pack (docs/policy-packs.md) instead of the domain's policy: validated
 * before anything is opened (a bad pack writes nothing), filed in the store by its digest, so
 * `resume`, `approve` and `serve` read it back from there with no flag.
 *
 * `--shadow`: a shadow run — decomposed, admitted and recorded, nothing reaching the world (each
 * world-effect step is a `step.shadowed` record; docs/operate-shadow.md). The pin says so.
 *
 * `--model-url URL --model NAME` replaces the domain's model by an OpenAI-compatible chat model
 * (Ollama, vLLM, llama.cpp server, hosted APIs; key from WEFT_MODEL_KEY or OPENAI_API_KEY) — its
 * replies are recorded and judged exactly like the scripted ones, and its id and parameters are pinned.
 *
 * Prints each epoch as it unfolds, then the status, fingerprint, journal and public key; with
 * `--json`, one object `{ id, status, journal, fingerprint, publicKey }` (absolute paths) for
 * scripts and auditors to chain with `weft verify`.
 */
import { readFile } from 'node:fs/promises';
import { parseCommandArgs, positiveInt, UsageError, usageFailure } from '../args.js';
import { followRun, gapPathWhy, printOutcome, printRefusal } from '../follow.js';
import { crashHooks } from '../faults.js';
import { DomainLoadError, loadDomain } from '../domain-loader.js';
import { locationOf } from '../hints.js';
import { resumeOnInterrupt } from '../interrupt.js';
import { modelFromFlags } from '../model-choice.js';
import { libraryChoice } from '../library-choice.js';
import { readPolicyFile } from '../policy-choice.js';
import { printFailureLine } from '../json-line.js';
import { isWeftError } from '../../journal/errors.js';
import { assertInvocationId } from '../../stores/checks.js';
import { EXIT } from '../exit-codes.js';
import { progressLine } from '../progress.js';
import { Runtime } from '../../runtime/runtime.js';
import type { InvocationLimits } from '../../machines/context.js';
import { openWorkspace, workspaceDir } from '../workspace.js';
import { readInvocationMeta, writeInvocationMeta } from '../invocation-meta.js';
import { openStore, storeChoice, storeOptions, storeUsage, type StoreChoice } from '../store-choice.js';
import { chooseDispatch, dispatchFlag, dispatchOptions, dispatchUsage, refusalWaitFlag, type DispatchFlag } from '../dispatch-choice.js';
import { signingKeyOptions, signingKeyUsage } from '../signing-key-choice.js';
import { startStately, statelyChoice, statelyOptions, statelyUsage, type StatelyChoice } from '../stately-choice.js';

export const usage =
  'run <domain> ["<intent>" | --intent-file F|-] [--seed N] [--as-of ISO-TIME] [--dir D] [--id ID] [--tenant T] [--hibernate] [--shadow] [--model-url URL --model NAME]\n' +
  `    [--model-timeout-ms MS] [--model-attempts N] [--library FILE|DIGEST] [--policy FILE] [--deadline ISO-TIME|DURATION] [--step-timeout-ms MS] ${signingKeyUsage} ${storeUsage} ${dispatchUsage} ${statelyUsage} [--json]\n` +
  '                                       run an invocation of a domain (a built-in name such as travel, a path to a module, or a package;\n' +
  '                                       also --domain D) on the embedded default; --intent-file: the intent from a file (- for stdin),\n' +
  '                                       for one too long for a command line; --hibernate: stop at the first epoch boundary;\n' +
  '                                       --shadow: a shadow run — admitted and recorded, no world effect dispatched (step.shadowed),\n' +
  '                                       ending after the first shadowed epoch unless the actuators give shadow results;\n' +
  '                                       --model-url/--model: an OpenAI-compatible model instead of the domain\'s, key from WEFT_MODEL_KEY or OPENAI_API_KEY;\n' +
  '                                       --model-timeout-ms/--model-attempts: how long one model call may take and how many times a\n' +
  '                                       transient failure is tried before the invocation suspends (pinned; default 60000 and 3);\n' +
  '                                       --library: pin this version of the domain\'s library (a file from weft mine, or a digest in the store);\n' +
  '                                       --policy: pin this policy pack (JSON, docs/policy-packs.md) instead of the domain\'s policy; resume,\n' +
  '                                       approve and serve read it back from the store by its digest;\n' +
  '                                       --deadline: when the run must have ended (ISO 8601, or a duration from now: 90s, 15m, 2h, 1d; pinned):\n' +
  '                                       passing it ends the run failed after compensating its current epoch; --step-timeout-ms: how long\n' +
  '                                       one attempt of a step may take before it counts as a transient failure (pinned; default none);\n' +
  '                                       --redis URL (or WEFT_REDIS_URL): journals and snapshots in Redis instead of --dir;\n' +
  '                                       --stately: relay the run to Stately\'s inspector (127.0.0.1:--port, default 7392), waiting up to\n' +
  '                                       --stately-wait S (default 30) for a client first';

/** `--deadline`: an ISO 8601 time, or a duration from `now` (`90s`, `15m`, `2h`, `1d`), as ISO 8601. */
function deadlineOf(text: string, now: number): string {
  const duration = /^(\d{1,9})(s|m|h|d)$/.exec(text.trim());
  if (duration) return new Date(now + Number(duration[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as 's' | 'm' | 'h' | 'd']).toISOString();
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(ms)) throw new UsageError(`--deadline takes an ISO 8601 time (2026-06-01T18:00:00Z) or a duration from now (90s, 15m, 2h, 1d), got ${JSON.stringify(text)}`);
  return new Date(ms).toISOString();
}

/** `--model-timeout-ms` / `--model-attempts`: pinned limits of the model call (positive integers). */
function modelLimits(timeout: string | undefined, attempts: string | undefined): Partial<InvocationLimits> | undefined {
  const limits: Partial<InvocationLimits> = {};
  if (timeout !== undefined) limits.modelTimeoutMs = positiveInt('--model-timeout-ms', timeout);
  if (attempts !== undefined) limits.modelAttempts = positiveInt('--model-attempts', attempts);
  return Object.keys(limits).length ? limits : undefined;
}

/**
 * The intent in a file, or on stdin for `-` (an intent of a megabyte does not fit a command line).
 * One final line break is not part of it (`echo "…" > f`); an unreadable file is a usage error.
 */
async function readIntentFile(file: string): Promise<string> {
  let text: string;
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
      text = Buffer.concat(chunks).toString('utf8');
    } else {
      text = await readFile(file, 'utf8');
    }
  } catch (err) {
    throw new UsageError(`--intent-file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return text.replace(/\r?\n$/, '');
}

/** `--id ID`: a name the store can file (stores/checks.ts), or a UsageError saying the rule. */
function invocationIdFlag(id: string): string {
  try {
    assertInvocationId(id);
  } catch (err) {
    throw new UsageError(`--id: ${(err as Error).message}`);
  }
  return id;
}

export async function run(argv: string[]): Promise<number> {
  let args;
  let model;
  let domainSpec: string;
  let intentArg: string | undefined;
  let limits: Partial<InvocationLimits> | undefined;
  let choice: StoreChoice;
  let dispatch: DispatchFlag;
  let refusalWaitMs: number | undefined;
  let stately: StatelyChoice | undefined;
  let deadline: string | undefined;
  let stepTimeoutMs: number | undefined;
  try {
    args = parseCommandArgs(
      argv,
      {
        domain: { type: 'string' },
        'intent-file': { type: 'string' },
        seed: { type: 'string' },
        'as-of': { type: 'string' },
        dir: { type: 'string' },
        id: { type: 'string' },
        tenant: { type: 'string' },
        json: { type: 'boolean' },
        hibernate: { type: 'boolean' },
        shadow: { type: 'boolean' },
        'model-url': { type: 'string' },
        model: { type: 'string' },
        'model-timeout-ms': { type: 'string' },
        'model-attempts': { type: 'string' },
        library: { type: 'string' },
        policy: { type: 'string' },
        deadline: { type: 'string' },
        'step-timeout-ms': { type: 'string' },
        ...storeOptions,
        ...dispatchOptions,
        ...signingKeyOptions,
        ...statelyOptions,
      },
      { min: 0, max: 2 },
    );
    if (args.strings.domain !== undefined) {
      if (args.positionals.length > 1) throw new UsageError('with --domain, the only positional is the intent');
      domainSpec = args.strings.domain;
      intentArg = args.positionals[0];
    } else {
      if (args.positionals.length === 0) throw new UsageError('missing the domain (a built-in name such as travel, a path to a module, or a package)');
      domainSpec = args.positionals[0]!;
      intentArg = args.positionals[1];
    }
    if (args.strings['intent-file'] !== undefined) {
      if (intentArg !== undefined) throw new UsageError('give the intent once: as the positional or with --intent-file, not both');
      intentArg = await readIntentFile(args.strings['intent-file']);
    }
    // An id the store could never file is a command line to fix (exit 2), said before anything is loaded.
    if (args.strings.id !== undefined) invocationIdFlag(args.strings.id);
    model = modelFromFlags({ url: args.strings['model-url'], name: args.strings.model });
    limits = modelLimits(args.strings['model-timeout-ms'], args.strings['model-attempts']);
    deadline = args.strings.deadline === undefined ? undefined : deadlineOf(args.strings.deadline, Date.now());
    stepTimeoutMs = args.strings['step-timeout-ms'] === undefined ? undefined : positiveInt('--step-timeout-ms', args.strings['step-timeout-ms']);
    choice = storeChoice(workspaceDir(args.strings.dir), args.strings);
    dispatch = dispatchFlag(args.strings);
    refusalWaitMs = refusalWaitFlag(args.strings);
    stately = statelyChoice(args.flags, args.strings);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('run', usage, err);
    throw err;
  }
  const json = args.flags.json === true;
  let loaded;
  try {
    loaded = await loadDomain(domainSpec);
  } catch (err) {
    // Nothing was written: the command line names a domain that is not there (exit 2).
    if (err instanceof DomainLoadError) return printRefusal('run', args.strings.id ?? null, null, err, json);
    throw err;
  }
  const faults = crashHooks();
  const domain = loaded.domain;
  let policy;
  try {
    // A policy pack, validated before anything is opened: a bad one writes nothing (cli/policy-choice.ts).
    policy = args.strings.policy === undefined ? undefined : await readPolicyFile(args.strings.policy, domain.policyPredicates);
  } catch (err) {
    if (!isWeftError(err)) throw err;
    printFailureLine(err.message, err.code, EXIT.usage, { id: args.strings.id ?? null });
    process.stderr.write(`weft run: --policy ${err.message}\n`);
    return EXIT.usage;
  }
  const intent = intentArg ?? domain.intent;
  if (intent === undefined) return usageFailure('run', usage, new UsageError(`domain ${domain.name} has no default intent: pass the intent after the domain`));
  const asOf = args.strings['as-of'] ?? domain.asOf;
  if (asOf === undefined) return usageFailure('run', usage, new UsageError(`domain ${domain.name} has no default asOf: pass --as-of ISO-TIME (the invocation's pinned "now")`));
  if (Number.isNaN(Date.parse(asOf))) return usageFailure('run', usage, new UsageError(`--as-of ${asOf} is not an ISO 8601 time`));
  const start = { tenant: args.strings.tenant ?? 'default', seed: args.strings.seed ?? '1', asOf, ...(args.flags.shadow === true ? { shadow: true } : {}) };
  const id = args.strings.id ?? Runtime.defaultId(intent, start);
  let store;
  try {
    store = await openStore(choice);
  } catch (err) {
    // A store that cannot be used (a Redis that may lose acknowledged appends, or unreachable): nothing was written.
    return printRefusal('run', id, choice.redis ? null : choice.dir, err, json);
  }
  let library;
  try {
    library = args.strings.library === undefined ? undefined : await libraryChoice(args.strings.library, domain, store);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('run', usage, err);
    throw err;
  }
  const location = locationOf(choice, { queue: args.strings.queue, dispatch: args.strings.dispatch });
  const dispatchTo = await chooseDispatch(dispatch, choice, args.strings.queue, loaded);
  let tap;
  try {
    tap = stately ? await startStately(stately, 'run', { waitForClient: true }) : undefined;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('run', usage, err);
    throw err;
  }
  if (tap) store = tap.tapStore(store);
  const ws = await openWorkspace({ ...(tap ? { inspect: tap.inspect } : {}), dir: args.strings.dir, store, redis: choice.redis, dispatch: dispatchTo, queue: args.strings.queue, refusalWaitMs, domain: loaded, library, policy, model, limits, signingKeyFile: args.strings['signing-key'], wrapActuators: (a) => faults.wrapActuators(a, domain.observe) });
  faults.wrapStore(ws.store);
  if (!ws.runtime.options.model) {
    return usageFailure('run', usage, new UsageError(`domain ${ws.domain.name} ships no model: pass --model-url URL --model NAME (an OpenAI-compatible endpoint)`));
  }
  // Before the first record: a crash right after it must still find the domain and endpoint.
  if (!readInvocationMeta(ws.dir, id)) writeInvocationMeta(ws.dir, id, { domain: ws.domainRef, ...(args.strings['model-url'] ? { modelUrl: args.strings['model-url'] } : {}) });
  const rested = resumeOnInterrupt(id, location, async () => (await ws.store.length(id)) > 0);
  try {
    const handle = await ws.runtime.start(intent, { ...start, id, ...(deadline === undefined ? {} : { deadline }), ...(stepTimeoutMs === undefined ? {} : { stepTimeoutMs }) });
    if (args.flags.hibernate) handle.hibernate();
    if (!json) {
      // Only a progress line: a store that fails this read (Redis going away) must not abandon the live run.
      const pinned = (await ws.store.read(handle.id, 0, 1).catch(() => []))[0];
      if (pinned) process.stdout.write(`${progressLine(pinned, false)}\n`);
    }
    const result = await followRun(handle, !json);
    rested();
    return printOutcome(ws, result, json, location, json ? undefined : await gapPathWhy(ws.store, result));
  } catch (err) {
    return printRefusal('run', id, ws.store, err, json, undefined, location);
  } finally {
    rested(); // rested, ended or refused: a signal from now on is Node's again, never a "resume with"
  }
}
