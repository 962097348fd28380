/**
 * `weft mine --from <journal | bundle | workspace folder> … [--dir D | --redis URL] --library <name | digest | file>
 *  [--domain D] [--public-key FILE] [--out FILE [--force]] [--apply] [--min-support N] [--json]` — propose methods from the
 * successful gap-path epochs of recorded runs (mining/): each authored fragment generalised into a
 * method of its goal's task, accepted only if it re-derives its fragments on their recorded states
 * and changes no decomposition recorded anywhere in the store(s), from fragments that completed
 * without compensation.
 *
 * Every journal read is verified first (cli/mining-input.ts): one that does not verify — or, with
 * `--public-key FILE`, is sealed by another key — stops the command (exit 1, nothing written),
 * and so does one invocation id read twice with different histories (a journal and its prefix are
 * one journal: the longer is kept).
 *
 * Writes the new library version as a reviewable JSON file (`--out`, default
 * `<name>-<digest 12>.library.json` here): a library version is the audit object, a person reviews
 * and commits it. An existing file is never overwritten silently: the command refuses (exit 2)
 * unless `--force` says to replace it. `--apply` also files it by digest in the store(s) read, where
 * `weft run --library <digest>`, replay, resume and workers find it. Runs already started keep
 * their pin. When no method is accepted there is no new version: no file is written and nothing is
 * filed ("nothing accepted; no new version"), exit 0.
 *
 * The library: a name, a digest or a JSON file (cli/library-choice.ts). The domain gives the
 * evaluable predicates the planner needs. Prints the report (one line per candidate: accepted, or
 * why not), every line made inert for the terminal (cli/terminal-text.ts: goals and fragments come
 * from a model); progress on stderr for long inputs; `--json`: the report on stderr and one line on
 * stdout `{ library, base, out, applied, accepted, checked, candidates, warnings }` (out null when nothing
 * was written; checked: the recorded decompositions a candidate was checked against). The library
 * mined into (or the base, when nothing was accepted) is checked for method-less tasks whose
 * effectful operators pass args no constraint ties to the goal (htn/library/unbound-effects.ts):
 * each is a `warning:` line of the report, and `warnings` in the JSON line — never a failure.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalBytes } from '../../journal/canonical.js';
import type { JournalRecord } from '../../journal/records.js';
import { unboundEffectWarnings } from '../../htn/library/unbound-effects.js';
import { derivedEpochsOf, gapSourcesOf, mine, renderReport } from '../../mining/index.js';
import { startMineSpan } from '../../telemetry/mine-span.js';
import { parseCommandArgs, positiveInt, UsageError, usageFailure } from '../args.js';
import { DomainLoadError } from '../domain-loader.js';
import { miningLibraryChoice } from '../library-choice.js';
import { printFailureLine, printJsonLine } from '../json-line.js';
import { readMiningInputs, UnreadableJournalError } from '../mining-input.js';
import { openStore, storeChoice, storeOptions, storeUsage } from '../store-choice.js';
import { inert } from '../terminal-text.js';
import { workspaceDir } from '../workspace.js';
import { KeyFileError, loadPublicKey } from '../../runtime/keys.js';
import { EXIT } from '../exit-codes.js';

export const usage =
  `mine --from <journal | bundle | folder> … [--dir D] ${storeUsage} --library <name | digest | file> [--domain D] [--public-key FILE]\n` +
  '     [--out FILE [--force]] [--apply] [--min-support N] [--json]\n' +
  '                                       propose methods from successful gap-path epochs; writes the new library version to --out\n' +
  '                                       (default <name>-<digest>.library.json; an existing file only with --force) for review;\n' +
  '                                       --apply also files it in the store by digest; nothing accepted: nothing written or filed;\n' +
  '                                       every journal read must verify (--public-key FILE: and be sealed by that key);\n' +
  '                                       --dir D / --redis URL: mine every journal of that store (and check candidates against all of them)';

export async function run(argv: string[]): Promise<number> {
  let args;
  let minSupport = 1;
  try {
    args = parseCommandArgs(
      argv,
      { from: { type: 'string', multiple: true }, library: { type: 'string' }, domain: { type: 'string' }, out: { type: 'string' }, apply: { type: 'boolean' }, force: { type: 'boolean' }, 'public-key': { type: 'string' }, 'min-support': { type: 'string' }, dir: { type: 'string' }, json: { type: 'boolean' }, ...storeOptions },
      { min: 0, max: 1000 },
    );
    if (!args.strings.library) throw new UsageError('--library is required: the library version to extend (a name such as travel, a digest, or a file)');
    if (args.strings.out !== undefined && existsSync(args.strings.out) && args.flags.force !== true) throw new UsageError(`--out ${args.strings.out} exists: pass --force to replace it, or another --out`);
    if (args.strings['min-support'] !== undefined) minSupport = positiveInt('--min-support', args.strings['min-support']);
    // A workspace that is not there would be mined as an empty one: nothing accepted, exit 0 — say so instead (exit 2).
    const dir = args.strings.dir;
    if (dir !== undefined && args.strings.redis === undefined && !process.env.WEFT_REDIS_URL && !existsSync(dir)) {
      throw new UsageError(`--dir ${dir}: no such folder (${path.resolve(dir)}); give the workspace folder weft run wrote (default .weft), or journals with --from`);
    }
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('mine', usage, err);
    throw err;
  }
  const json = args.flags.json === true;
  const sources = [...args.lists.from!, ...args.positionals];
  const progress = (line: string) => process.stderr.write(`weft mine: ${line}\n`);
  try {
    const explicitStore = args.strings.dir !== undefined || args.strings.redis !== undefined || (sources.length === 0 && !!process.env.WEFT_REDIS_URL);
    if (sources.length === 0 && !explicitStore) throw new UsageError('nothing to mine: give journals or bundles with --from, or a store with --dir D / --redis URL');
    const store = explicitStore ? await openStore(storeChoice(workspaceDir(args.strings.dir), args.strings)) : undefined;
    const key = args.strings['public-key'] === undefined ? undefined : await loadPublicKey(args.strings['public-key']);
    const inputs = await readMiningInputs(sources, store, progress, key);
    const { library: base, domain } = await miningLibraryChoice(args.strings.library!, args.strings.domain, inputs.stores, inputs.libraries);
    if (base.evaluables.length > 0 && !domain) throw new UsageError(`library ${base.name} uses evaluable predicates (${base.evaluables.map((e) => `${e.name}@${e.version}`).join(', ')}): pass --domain D, the domain that implements them`);
    if (args.flags.apply && inputs.stores.length === 0) throw new UsageError('--apply files the new version in a store: pass --dir D or --redis URL (bundles have none)');
    const byId = (m: Map<string, JournalRecord[]>) => [...m.keys()].sort().map((id) => m.get(id)!);
    const gaps = byId(inputs.mined).flatMap((records) => gapSourcesOf(records));
    const corpus = byId(inputs.corpus).flatMap((records) => derivedEpochsOf(records));
    const long = gaps.length >= 10 || corpus.length >= 200;
    if (long) progress(`${gaps.length} gap-path epoch(s) from ${inputs.mined.size} journal(s); ${corpus.length} recorded decomposition(s) to check`);
    const traced = startMineSpan(); // with --otel (telemetry/mine-span.ts)
    const result = mine({
      library: base,
      gaps,
      corpus,
      minSupport,
      planning: { evaluables: domain?.evaluables },
      ...(long ? { onProgress: (done: number, total: number) => done < total && progress(`judging candidate ${done + 1}/${total}`) } : {}),
    });
    traced.end({ gaps: gaps.length, corpus: corpus.length, report: result.report, library: result.digest });
    // No new version, nothing to write or file: the base stays what it was.
    const out = result.report.accepted > 0 ? path.resolve(args.strings.out ?? `${result.library.name}-${result.digest.slice(0, 12)}.library.json`) : undefined;
    if (out !== undefined && existsSync(out) && args.flags.force !== true) {
      throw new UsageError(`--out ${out} exists: pass --force to replace it, or another --out (the new version is ${result.digest})`);
    }
    if (out !== undefined) writeFileSync(out, `${JSON.stringify(result.library, null, 2)}\n`);
    let applied = false;
    if (out !== undefined && args.flags.apply) {
      for (const s of inputs.stores) await s.putBlob(canonicalBytes(result.library));
      applied = true;
    }
    const warnings = unboundEffectWarnings(result.library);
    const lines = [...renderReport(result.report), ...inputs.notes, ...warnings.map((w) => `warning: ${w.message}`)];
    if (out === undefined) lines.push(`nothing accepted; no new version${args.flags.apply ? ' (nothing filed)' : ''}${args.strings.out !== undefined ? ` (${args.strings.out} not written)` : ''}`);
    else lines.push(`wrote ${out}${applied ? `; filed ${result.digest} in ${inputs.stores.map((s) => s.name).join(', ')}` : ''}`);
    // With --json, stdout holds the one JSON line (cli/json-line.ts): the report goes to stderr. Goals
    // and fragments in it came from a model: every line is made inert for the terminal.
    (json ? process.stderr : process.stdout).write(`${lines.map(inert).join('\n')}\n`);
    if (json) {
      printJsonLine({
        library: result.digest,
        base: result.report.base,
        out: out ?? null,
        applied,
        accepted: result.report.accepted,
        checked: result.report.checkedEpochs,
        candidates: result.report.candidates.map((c) => ({ candidate: c.candidate, task: c.task, verdict: c.verdict, reason: c.reason ?? null, sources: c.sources })),
        warnings: warnings.map((w) => ({ task: w.task, operator: w.operator, actuator: w.actuator, args: w.args, message: w.message })),
      });
    }
    return EXIT.done;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('mine', usage, err);
    if (err instanceof DomainLoadError) return usageFailure('mine', usage, new UsageError(err.message));
    if (err instanceof KeyFileError) return usageFailure('mine', usage, new UsageError(err.message));
    if (err instanceof UnreadableJournalError) {
      printFailureLine(err.message, err.code, EXIT.failed);
      process.stderr.write(`weft mine: ${inert(err.message)}\n`);
      return EXIT.failed;
    }
    throw err;
  }
}
