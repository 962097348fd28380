/**
 * `weft htn solve <domain.hddl> <problem.hddl> [--timeout S]` — parse, compile and plan an HDDL
 * problem; print the plan in the IPC format on stdout (exit 0). No plan, a limit or the timeout:
 * a one-line reason on stderr, exit 1. Bad command line: exit 2.
 *
 * The wall-clock timeout lives here, on the effect side: it is injected into the pure planner as
 * a `shouldStop` callback, so a run that finishes is unaffected by machine speed. Search budgets
 * are unlimited by default here (the runtime, not the CLI, pins node and depth budgets).
 */
import { readFile } from 'node:fs/promises';
import { parseDomain, parseProblem } from '../../htn/hddl/index.js';
import { compileHddl } from '../../htn/hddl/compile.js';
import { compileModel } from '../../htn/planner/model.js';
import { search } from '../../htn/planner/search.js';
import { toIpcPlan } from '../../htn/planner/ipc-output.js';
import { formatIpcPlan } from '../../htn/ipc-plan.js';
import { canonicalize } from '../../journal/canonical.js';
import { EXIT } from '../exit-codes.js';

export const usage = 'htn solve <domain.hddl> <problem.hddl> [--timeout S] [--max-nodes N] [--max-depth N] [--no-cycle-check] [--json] [--quiet]';

interface Args {
  domain: string;
  problem: string;
  timeout: number | undefined;
  maxNodes: number;
  maxDepth: number;
  cycleCheck: boolean;
  json: boolean;
  quiet: boolean;
}

function parseArgs(argv: string[]): Args | string {
  const files: string[] = [];
  const out: Omit<Args, 'domain' | 'problem'> = { timeout: undefined, maxNodes: Infinity, maxDepth: Infinity, cycleCheck: true, json: false, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const num = (): number | undefined => {
      const v = Number(argv[++i]);
      return Number.isFinite(v) && v > 0 ? v : undefined;
    };
    if (a === '--timeout') {
      const v = num();
      if (v === undefined) return '--timeout needs a positive number of seconds';
      out.timeout = v;
    } else if (a === '--max-nodes') {
      const v = num();
      if (v === undefined) return '--max-nodes needs a positive number';
      out.maxNodes = v;
    } else if (a === '--max-depth') {
      const v = num();
      if (v === undefined) return '--max-depth needs a positive number';
      out.maxDepth = v;
    } else if (a === '--no-cycle-check') out.cycleCheck = false;
    else if (a === '--json') out.json = true;
    else if (a === '--quiet') out.quiet = true;
    else if (a.startsWith('--')) return `unknown option ${a}`;
    else files.push(a);
  }
  if (files.length !== 2) return 'expected a domain file and a problem file';
  return { domain: files[0]!, problem: files[1]!, ...out };
}

export async function run(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    process.stderr.write(`weft htn solve: ${args}\nusage: weft ${usage}\n`);
    return EXIT.usage;
  }
  const started = performance.now();
  const deadline = args.timeout === undefined ? Infinity : started + args.timeout * 1000;
  let domainText: string;
  let problemText: string;
  try {
    [domainText, problemText] = await Promise.all([readFile(args.domain, 'utf8'), readFile(args.problem, 'utf8')]);
  } catch (err) {
    process.stderr.write(`weft htn solve: cannot read input: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failed;
  }
  const domain = parseDomain(domainText, args.domain);
  const problem = parseProblem(problemText, args.problem);
  const compiled = compileHddl(domain, problem);
  const model = compileModel(compiled.library, compiled.state, compiled.goal, undefined);
  const compiledAt = performance.now();
  const result = search(model, {
    maxNodes: args.maxNodes,
    maxDepth: args.maxDepth,
    cycleCheck: args.cycleCheck,
    shouldStop: () => performance.now() > deadline,
  });
  const ms = (x: number): string => `${x.toFixed(1)} ms`;
  const timing = `compile ${ms(compiledAt - started)}, search ${ms(performance.now() - compiledAt)}, ${result.stats.nodes} nodes`;
  if (args.json) process.stdout.write(canonicalize(result) + '\n');
  if (result.kind === 'plan') {
    if (!args.json) process.stdout.write(formatIpcPlan(toIpcPlan(result)));
    if (!args.quiet) process.stderr.write(`solved: ${result.steps.length} actions (${timing})\n`);
    return EXIT.done;
  }
  if (result.kind === 'limit') {
    const what = result.limit === 'interrupted' ? `timeout after ${args.timeout} s` : `${result.limit} limit ${result.budget} reached`;
    const d = result.deepest;
    const furthest = d ? `; furthest failure after ${d.stepsBefore} steps at (${[d.task, ...d.args].join(' ')})` : '';
    process.stderr.write(`no plan: ${what} while expanding (${[result.task, ...result.args].join(' ')})${furthest} (${timing})\n`);
    return EXIT.failed;
  }
  const deepest = result.explanation.deepest;
  const where = deepest ? `; furthest failure after ${deepest.stepsBefore} steps at (${[deepest.task, ...deepest.args].join(' ')})` : '';
  process.stderr.write(`no plan: no decomposition of the initial task network${where} (${timing})\n`);
  return EXIT.failed;
}
