/**
 * `weft policy check FILE [--domain D] [--json]` — validate a policy pack (policy/schema.ts) and print
 * its digest, the policy id a run with it pins (`pack:<name>@<version>#<digest>`) and each rule in
 * words. With `--domain`, the predicates it references are resolved against that domain's policy
 * predicates too; without, they are listed as unchecked. With `--domain`, the domain's method
 * library (the one a new run pins) is checked too: a method-less task (the gap path) whose effectful
 * operators pass args no constraint ties to the goal is warned about (htn/library/unbound-effects.ts),
 * on stderr — a warning, not a failure. Exit codes: 0 valid, 1 not a valid pack
 * (the file and the issue, with its path in the pack), 2 usage. `--json`: one line,
 * `{ ok, file, name, version, digest, policy, rules: [{ id, rule, says }], predicates, predicatesChecked, libraryWarnings? }`,
 * or `{ ok: false, file, reason, refused }`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isWeftError } from '../../journal/errors.js';
import { unboundEffectWarnings, type UnboundEffectWarning } from '../../htn/library/unbound-effects.js';
import { compileRulePack, referencedPredicates } from '../../policy/compile.js';
import { describeRule } from '../../policy/describe.js';
import { packDigest, packPolicyId } from '../../policy/digest.js';
import { RulePackError } from '../../policy/errors.js';
import { parseRulePackText } from '../../policy/parse.js';
import { predicateRegistry } from '../../policy/predicates.js';
import type { RulePack } from '../../policy/schema.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { DomainLoadError, loadDomain } from '../domain-loader.js';
import { printJsonLine } from '../json-line.js';
import { inert } from '../terminal-text.js';
import { EXIT } from '../exit-codes.js';

export const usage = 'policy check FILE [--domain D] [--json]\n                                       validate a policy pack and print its digest';

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(argv, { domain: { type: 'string' }, json: { type: 'boolean' } }, { min: 1, max: 1 });
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('policy check', usage, err);
    throw err;
  }
  const file = args.positionals[0]!;
  const json = args.flags.json === true;
  let pack: RulePack;
  let predicatesChecked = false;
  let warnings: UnboundEffectWarning[] | undefined;
  try {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new RulePackError(file, [`cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`]);
    }
    pack = parseRulePackText(text, file);
    if (args.strings.domain !== undefined) {
      const { domain } = await loadDomain(args.strings.domain);
      compileRulePack(pack, predicateRegistry(domain.policyPredicates));
      predicatesChecked = true;
      warnings = unboundEffectWarnings(domain.libraries[0]!);
    }
  } catch (err) {
    if (!isWeftError(err) && !(err instanceof DomainLoadError)) throw err;
    const reason = inert((err as Error).message);
    const refused = isWeftError(err) ? err.code : (err as DomainLoadError).code;
    if (json) printJsonLine({ ok: false, file: path.resolve(file), reason, refused });
    process.stderr.write(`weft policy check: ${reason}\n`);
    return err instanceof DomainLoadError ? EXIT.usage : EXIT.failed;
  }
  const digest = packDigest(pack);
  const policy = packPolicyId(pack, digest);
  const predicates = referencedPredicates(pack);
  const rules = pack.rules.map((r) => ({ id: r.id, rule: r.rule, says: describeRule(r) }));
  for (const w of warnings ?? []) process.stderr.write(`weft policy check: warning: ${inert(w.message)}\n`);
  if (json) {
    const libraryWarnings = warnings?.map((w) => ({ task: w.task, operator: w.operator, actuator: w.actuator, args: w.args, message: w.message }));
    printJsonLine({ ok: true, file: path.resolve(file), name: pack.name, version: pack.version, digest, policy, rules, predicates, predicatesChecked, ...(libraryWarnings ? { libraryWarnings } : {}) });
    return EXIT.done;
  }
  const width = Math.max(...rules.map((r) => r.id.length), 2);
  const kind = Math.max(...rules.map((r) => r.rule.length), 2);
  const out = [
    `valid policy pack ${inert(pack.name)}@${inert(pack.version)} (${rules.length} rule${rules.length === 1 ? '' : 's'})`,
    `digest      ${digest}`,
    `policy      ${inert(policy)}   (what a run with --policy ${inert(file)} pins)`,
    ...(pack.description ? [`about       ${inert(pack.description)}`] : []),
    'rules',
    ...rules.map((r) => `  ${inert(r.id).padEnd(width)}  ${r.rule.padEnd(kind)}  ${inert(r.says)}`),
    `predicates  ${predicates.length === 0 ? 'none' : `${predicates.join(', ')} (${predicatesChecked ? 'registered by the domain' : 'not checked: pass --domain D to resolve them'})`}`,
  ];
  process.stdout.write(out.join('\n') + '\n');
  return EXIT.done;
}
