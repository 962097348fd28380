/**
 * `weft mine --from <journal | bundle | workspace folder> … [--dir D | --redis URL] --library <name | digest | file>
 *  [--domain D] [--out FILE] [--apply] [--min-support N] [--json]` — propose methods from the
 * successful gap-path epochs of recorded runs (mining/): each authored fragment generalised into a
 * method of its goal's task, accepted only if it re-derives its fragments on their recorded states
 * and changes no decomposition recorded anywhere in the store(s), from fragments that completed
 * without compensation.
 *
 * Writes the new library version as a reviewable JSON file (`--out`, default
 * `<name>-<digest 12>.library.json` here): a library version is the audit object, a person reviews
 * and commits it. `--apply` also files it by digest in the store(s) read, where `weft run --library
 * <digest>`, replay, resume and workers find it. Runs already started keep their pin.
 *
 * The library: a name (a library of `--domain`, or of the built-in domain that has it), a digest
 * (a domain's, a bundle's, or a store's blob), or a JSON file. The domain gives the evaluable
 * predicates the planner needs. Prints the report (one line per candidate: accepted, or why not);
 * progress on stderr for long inputs; `--json`: the report on stderr and one line on stdout `{ library, base, out, applied,
 * accepted, checked, candidates }` (checked: the recorded decompositions a candidate was checked against).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalBytes } from '../../journal/canonical.js';
import type { JournalRecord } from '../../journal/records.js';
import type { JournalStore } from '../../journal/store.js';
import { libraryDigest } from '../../htn/library/digest.js';
import type { Library } from '../../htn/library/schema.js';
import { validateLibrary } from '../../htn/library/validate.js';
import { derivedEpochsOf, gapSourcesOf, mine, renderReport } from '../../mining/index.js';
import { readLibraryBlob } from '../../runtime/library-blob.js';
import type { Domain } from '../../runtime/domain.js';
import { builtinDomainForLibrary } from '../../examples/registry.js';
import { parseCommandArgs, positiveInt, UsageError, usageFailure } from '../args.js';
import { DomainLoadError, loadDomain } from '../domain-loader.js';
import { printFailureLine, printJsonLine } from '../json-line.js';
import { readMiningInputs, UnreadableJournalError } from '../mining-input.js';
import { openStore, storeChoice, storeOptions, storeUsage } from '../store-choice.js';
import { workspaceDir } from '../workspace.js';

export const usage =
  `mine --from <journal | bundle | folder> … [--dir D] ${storeUsage} --library <name | digest | file> [--domain D] [--out FILE] [--apply] [--min-support N] [--json]\n` +
  '                                       propose methods from successful gap-path epochs; writes the new library version to --out\n' +
  '                                       (default <name>-<digest>.library.json) for review; --apply also files it in the store by digest;\n' +
  '                                       --dir D / --redis URL: mine every journal of that store (and check candidates against all of them)';

const DIGEST = /^[0-9a-f]{64}$/;

interface Resolved {
  library: Library;
  domain: Domain | undefined;
}

async function resolveLibrary(spec: string, domainSpec: string | undefined, stores: readonly JournalStore[], bundled: ReadonlyMap<string, Library>): Promise<Resolved> {
  const domain = domainSpec ? (await loadDomain(domainSpec)).domain : undefined;
  let library: Library | undefined;
  if (DIGEST.test(spec)) {
    library = domain?.libraries.find((l) => libraryDigest(l) === spec) ?? bundled.get(spec);
    for (const store of stores) library ??= await readLibraryBlob(store, spec);
    if (!library) throw new UsageError(`--library ${spec}: no library with that digest in ${domain ? `domain ${domain.name}, ` : ''}the bundles or the stores read (pass a file, or --dir/--redis of the store that has it)`);
  } else if (existsSync(spec) || /\.json$/.test(spec)) {
    if (!existsSync(spec)) throw new UsageError(`--library ${spec}: no such file`);
    try {
      library = validateLibrary(JSON.parse(readFileSync(spec, 'utf8')));
    } catch (err) {
      throw new UsageError(`--library ${spec}: not a method library (${(err as Error).message.split('\n')[0]})`);
    }
  } else {
    const owner = domain ?? (await builtinDomainForLibrary(spec));
    library = owner?.libraries.find((l) => l.name === spec);
    if (!library) throw new UsageError(`--library ${spec}: no library of that name ${domain ? `in domain ${domain.name}` : 'in a built-in domain'} (pass --domain D, a digest or a file)`);
    return { library, domain: owner };
  }
  return { library, domain: domain ?? (await builtinDomainForLibrary(library.name)) };
}

export async function run(argv: string[]): Promise<number> {
  let args;
  let minSupport = 1;
  try {
    args = parseCommandArgs(
      argv,
      { from: { type: 'string', multiple: true }, library: { type: 'string' }, domain: { type: 'string' }, out: { type: 'string' }, apply: { type: 'boolean' }, 'min-support': { type: 'string' }, dir: { type: 'string' }, json: { type: 'boolean' }, ...storeOptions },
      { min: 0, max: 1000 },
    );
    if (!args.strings.library) throw new UsageError('--library is required: the library version to extend (a name such as travel, a digest, or a file)');
    if (args.strings['min-support'] !== undefined) minSupport = positiveInt('--min-support', args.strings['min-support']);
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
    const inputs = await readMiningInputs(sources, store, progress);
    const { library: base, domain } = await resolveLibrary(args.strings.library!, args.strings.domain, inputs.stores, inputs.libraries);
    if (base.evaluables.length > 0 && !domain) throw new UsageError(`library ${base.name} uses evaluable predicates (${base.evaluables.map((e) => `${e.name}@${e.version}`).join(', ')}): pass --domain D, the domain that implements them`);
    if (args.flags.apply && inputs.stores.length === 0) throw new UsageError('--apply files the new version in a store: pass --dir D or --redis URL (bundles have none)');
    const byId = (m: Map<string, JournalRecord[]>) => [...m.keys()].sort().map((id) => m.get(id)!);
    const gaps = byId(inputs.mined).flatMap((records) => gapSourcesOf(records));
    const corpus = byId(inputs.corpus).flatMap((records) => derivedEpochsOf(records));
    const long = gaps.length >= 10 || corpus.length >= 200;
    if (long) progress(`${gaps.length} gap-path epoch(s) from ${inputs.mined.size} journal(s); ${corpus.length} recorded decomposition(s) to check`);
    const result = mine({
      library: base,
      gaps,
      corpus,
      minSupport,
      planning: { evaluables: domain?.evaluables },
      ...(long ? { onProgress: (done: number, total: number) => done < total && progress(`judging candidate ${done + 1}/${total}`) } : {}),
    });
    const out = path.resolve(args.strings.out ?? `${result.library.name}-${result.digest.slice(0, 12)}.library.json`);
    writeFileSync(out, `${JSON.stringify(result.library, null, 2)}\n`);
    let applied = false;
    if (args.flags.apply) {
      for (const s of inputs.stores) await s.putBlob(canonicalBytes(result.library));
      applied = true;
    }
    const lines = renderReport(result.report);
    lines.push(`wrote ${out}${applied ? `; filed ${result.digest} in ${inputs.stores.map((s) => s.name).join(', ')}` : ''}`);
    // With --json, stdout holds the one JSON line (cli/json-line.ts): the report goes to stderr.
    (json ? process.stderr : process.stdout).write(`${lines.join('\n')}\n`);
    if (json) {
      printJsonLine({
        library: result.digest,
        base: result.report.base,
        out,
        applied,
        accepted: result.report.accepted,
        checked: result.report.checkedEpochs,
        candidates: result.report.candidates.map((c) => ({ candidate: c.candidate, task: c.task, verdict: c.verdict, reason: c.reason ?? null, sources: c.sources })),
      });
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('mine', usage, err);
    if (err instanceof DomainLoadError) return usageFailure('mine', usage, new UsageError(err.message));
    if (err instanceof UnreadableJournalError) {
      printFailureLine(err.message, 'journal.unreadable', 1);
      process.stderr.write(`weft mine: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
