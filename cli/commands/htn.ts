/**
 * `weft htn <solve|verify> ...` — the HTN engine's command-line face. Dispatches to
 * htn-solve.ts (the planner) and htn-verify.ts (the independent plan checker).
 */
import { EXIT } from '../exit-codes.js';

export const usage = 'htn solve <domain.hddl> <problem.hddl> [--timeout S] | htn verify <domain.hddl> <problem.hddl> <plan>';

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'solve') return (await import('./htn-solve.js')).run(rest);
  if (sub === 'verify') return (await import('./htn-verify.js')).run(rest);
  process.stderr.write(`usage: weft ${usage}\n`);
  return EXIT.usage;
}
