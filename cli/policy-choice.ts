/**
 * `--policy FILE` (weft run): a policy pack read from a file, validated and compiled against the
 * domain's policy predicates — before the store is opened, so a bad pack writes nothing. The
 * run pins `pack:<name>@<version>#<digest>` and files the pack in the store by its digest; resume,
 * approve, serve and replay read it back from there (runtime/pack-blob.ts), so they need no flag.
 */
import { readFile } from 'node:fs/promises';
import { compileRulePack, type PackPolicy } from '../policy/compile.js';
import { RulePackError } from '../policy/errors.js';
import { parseRulePackText } from '../policy/parse.js';
import { predicateRegistry, type PolicyPredicate } from '../policy/predicates.js';

/** The pack in `file`, compiled; RulePackError (naming the file and the issue) or PredicateMissingError otherwise. */
export async function readPolicyFile(file: string, predicates?: readonly PolicyPredicate[]): Promise<PackPolicy> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new RulePackError(file, [`cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`]);
  }
  return compileRulePack(parseRulePackText(text, file), predicateRegistry(predicates));
}
