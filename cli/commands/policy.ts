/**
 * `weft policy <check|explain> ...` — policy packs from the command line. Dispatches to
 * policy-check.ts (validate a pack, print its digest) and policy-explain.ts (which rule decided
 * each admission of an invocation).
 */
import { EXIT } from '../exit-codes.js';

export const usage =
  'policy check FILE [--domain D] [--json] | policy explain <id> [--dir D] [--tenant T] [--redis URL …] [--json]\n' +
  '                                       check: validate a policy pack and print its digest and the policy id a run pins;\n' +
  '                                       explain: each admission of an invocation (authoring, epoch, step) and the rule that decided it';

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'check') return (await import('./policy-check.js')).run(rest);
  if (sub === 'explain') return (await import('./policy-explain.js')).run(rest);
  process.stderr.write(`weft policy: ${sub === undefined ? 'missing the subcommand' : `unknown subcommand ${JSON.stringify(sub)}`} (check or explain)\nusage: weft ${usage}\n`);
  return EXIT.usage;
}
