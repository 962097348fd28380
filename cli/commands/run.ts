/**
 * `weft run <example> ["<intent>"] [--seed N] [--as-of ISO-TIME] [--dir D] [--id ID] [--tenant T] [--hibernate] [--json]`
 * — start an invocation of an example on the embedded default (file store in D, in-process
 * dispatcher, scripted model) and follow it to its end or its first resting state.
 *
 * `--model-url URL --model NAME` replaces the example's scripted model by an OpenAI-compatible
 * chat model (Ollama, vLLM, llama.cpp server, hosted APIs; key from WEFT_MODEL_KEY or
 * OPENAI_API_KEY) — its replies are recorded and judged exactly like the scripted ones.
 *
 * Prints each epoch as it unfolds, then the status, fingerprint, journal and public key; with
 * `--json`, one object `{ id, status, journal, fingerprint, publicKey }` (absolute paths) for
 * scripts and auditors to chain with `weft verify`.
 */
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { followRun, printOutcome } from '../follow.js';
import { crashHooks } from '../faults.js';
import { progressLine } from '../progress.js';
import { openWorkspace } from '../workspace.js';

export const usage = 'run <example> ["<intent>"] [--seed N] [--as-of ISO-TIME] [--dir D] [--id ID] [--tenant T] [--hibernate] [--model-url URL --model NAME] [--json]\n                                       run an example invocation on the embedded default (--hibernate: stop at the first epoch boundary;\n                                       --model-url/--model: a real OpenAI-compatible model instead of the scripted one, key from WEFT_MODEL_KEY or OPENAI_API_KEY)';

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(
      argv,
      { seed: { type: 'string' }, 'as-of': { type: 'string' }, dir: { type: 'string' }, id: { type: 'string' }, tenant: { type: 'string' }, json: { type: 'boolean' }, hibernate: { type: 'boolean' }, 'model-url': { type: 'string' }, model: { type: 'string' } },
      { min: 1, max: 2 },
    );
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('run', usage, err);
    throw err;
  }
  const modelUrl = args.strings['model-url'];
  const modelName = args.strings.model;
  if ((modelUrl === undefined) !== (modelName === undefined)) {
    return usageFailure('run', usage, new UsageError('--model-url and --model go together (an OpenAI-compatible endpoint and a model name)'));
  }
  const faults = crashHooks();
  const ws = await openWorkspace(args.strings.dir, args.positionals[0]!, faults.hooks, modelUrl && modelName ? { baseUrl: modelUrl, model: modelName } : undefined);
  faults.wrapStore(ws.store);
  const intent = args.positionals[1] ?? ws.example.intent;
  const asOf = args.strings['as-of'] ?? ws.example.asOf;
  if (Number.isNaN(Date.parse(asOf))) return usageFailure('run', usage, new UsageError(`--as-of ${asOf} is not an ISO 8601 time`));
  const handle = await ws.runtime.start(intent, {
    tenant: args.strings.tenant ?? 'default',
    seed: args.strings.seed ?? '1',
    asOf,
    ...(args.strings.id ? { id: args.strings.id } : {}),
  });
  const json = args.flags.json === true;
  if (args.flags.hibernate) handle.hibernate();
  if (!json) {
    const pinned = (await ws.store.read(handle.id, 0, 1))[0];
    if (pinned) process.stdout.write(`${progressLine(pinned, false)}\n`);
  }
  const result = await followRun(handle, !json);
  return printOutcome(ws, result, json);
}
