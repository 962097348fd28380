/**
 * `weft htn verify <domain.hddl> <problem.hddl> <plan-file|->` — checks an IPC-format HTN plan
 * with the independent verifier (htn/verify). Exit 0: valid; 1: invalid plan or unreadable /
 * unparsable input (the first problem is printed); 2: bad command line.
 */
import { readFile } from 'node:fs/promises';
import { parseDomain, parseProblem, HddlParseError } from '../../htn/hddl/index.js';
import { parseIpcPlan, IpcPlanParseError } from '../../htn/ipc-plan.js';
import { verifyPlan } from '../../htn/verify/index.js';
import { EXIT } from '../exit-codes.js';

export const usage = 'htn verify <domain.hddl> <problem.hddl> <plan-file|->';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export async function run(argv: string[]): Promise<number> {
  if (argv.length !== 3 || argv.some((a) => a === '--help' || a === '-h')) {
    process.stderr.write(`usage: weft ${usage}\n`);
    return EXIT.usage;
  }
  const [domainFile, problemFile, planFile] = argv as [string, string, string];
  let texts: [string, string, string];
  try {
    texts = await Promise.all([
      readFile(domainFile, 'utf8'),
      readFile(problemFile, 'utf8'),
      planFile === '-' ? readStdin() : readFile(planFile, 'utf8'),
    ]);
  } catch (e) {
    process.stderr.write(`weft htn verify: ${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT.failed;
  }
  try {
    const domain = parseDomain(texts[0], domainFile);
    const problem = parseProblem(texts[1], problemFile);
    const plan = parseIpcPlan(texts[2]);
    const result = verifyPlan(domain, problem, plan);
    if (result.ok) {
      process.stdout.write(`plan valid (${result.actions} actions, ${result.methods} methods)\n`);
      return EXIT.done;
    }
    const at = result.line !== undefined ? `${planFile === '-' ? '<stdin>' : planFile}:${result.line}: ` : '';
    process.stdout.write(`plan invalid: ${at}${result.error}\n`);
    return EXIT.failed;
  } catch (e) {
    if (e instanceof HddlParseError) {
      process.stderr.write(`${e.message}\n`);
      return EXIT.failed;
    }
    if (e instanceof IpcPlanParseError) {
      process.stderr.write(`${planFile === '-' ? '<stdin>' : planFile}: ${e.message}\n`);
      return EXIT.failed;
    }
    throw e;
  }
}
