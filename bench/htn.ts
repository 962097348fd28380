/**
 * `npm run bench -- htn [--timeout S] [--domain D] [--all] [--jobs N] [--root DIR]` — the HTN
 * engine over the IPC 2020 total-order problems.
 *
 * Each problem runs in its own child process (`node dist/cli/main.js htn solve`, killed at the
 * time limit plus a grace second), two at a time by default (the machines have two cores). A
 * domain's remaining problems are skipped after five consecutive failures in problem order (as
 * the anchor run did) unless `--all`. Every plan is checked by the independent verifier
 * (htn/verify, in this process); only solved AND verified problems count. The table shows, per
 * domain, coverage, the median wall time of the solved problems (child process, including Node
 * start-up and parsing), and the anchor's figure from ANCHOR.md.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseDomain, parseProblem } from '../htn/hddl/index.js';
import { parseIpcPlan } from '../htn/ipc-plan.js';
import { verifyPlan } from '../htn/verify/index.js';
import { defaultSuiteRoot, listDomains, readAnchor, type SuiteProblem } from './htn-suite.js';

interface Options {
  timeout: number;
  domains: string[];
  all: boolean;
  jobs: number;
  root: string;
}

type Outcome = 'verified' | 'invalid' | 'timeout' | 'failed';

interface ProblemResult {
  readonly outcome: Outcome;
  readonly seconds: number;
  readonly detail: string;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { timeout: 30, domains: [], all: false, jobs: 2, root: defaultSuiteRoot() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--timeout') o.timeout = Number(argv[++i]);
    else if (a === '--domain') o.domains.push(argv[++i]!);
    else if (a === '--all') o.all = true;
    else if (a === '--jobs') o.jobs = Number(argv[++i]);
    else if (a === '--root') o.root = argv[++i]!;
    else throw new Error(`unknown option ${a} (use --timeout S, --domain D, --all, --jobs N, --root DIR)`);
  }
  if (!(o.timeout > 0) || !(o.jobs >= 1)) throw new Error('--timeout and --jobs must be positive');
  return o;
}

const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));

function solveInChild(p: SuiteProblem, timeout: number): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number; killed: boolean }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, 'htn', 'solve', p.domainFile, p.problemFile, '--timeout', String(timeout)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, (timeout + 1) * 1000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), seconds: (performance.now() - started) / 1000, killed });
    });
  });
}

async function runProblem(p: SuiteProblem, timeout: number): Promise<ProblemResult> {
  const r = await solveInChild(p, timeout);
  const lastLine = r.stderr.trim().split('\n').pop() ?? '';
  if (r.killed || /timeout after/.test(r.stderr)) return { outcome: 'timeout', seconds: r.seconds, detail: 'timeout' };
  if (r.code !== 0) return { outcome: 'failed', seconds: r.seconds, detail: lastLine };
  try {
    const domain = parseDomain(readFileSync(p.domainFile, 'utf8'), p.domainFile);
    const problem = parseProblem(readFileSync(p.problemFile, 'utf8'), p.problemFile);
    const v = verifyPlan(domain, problem, parseIpcPlan(r.stdout));
    if (v.ok) return { outcome: 'verified', seconds: r.seconds, detail: `${v.actions} actions` };
    return { outcome: 'invalid', seconds: r.seconds, detail: v.error };
  } catch (e) {
    return { outcome: 'invalid', seconds: r.seconds, detail: e instanceof Error ? e.message : String(e) };
  }
}

function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Whether five consecutive problems (in order, all finished) failed. */
function fiveInARow(results: (ProblemResult | undefined)[]): boolean {
  let run = 0;
  for (const r of results) {
    if (r === undefined) run = 0;
    else if (r.outcome === 'verified') run = 0;
    else if (++run >= 5) return true;
  }
  return false;
}

export async function run(argv: string[]): Promise<void> {
  const o = parseOptions(argv);
  const all = listDomains(o.root);
  if (all.length === 0) {
    process.stdout.write(`htn bench: ${o.root} is absent; nothing to run (the IPC 2020 suite lives outside the repo)\n`);
    return;
  }
  const wanted = o.domains.map((d) => d.toLowerCase());
  const domains = wanted.length ? all.filter((d) => wanted.some((w) => d.name.toLowerCase().includes(w))) : all;
  const anchor = readAnchor(o.root);
  const cpus = os.cpus();
  process.stdout.write(
    `htn bench: ${domains.length} domains, timeout ${o.timeout} s, ${o.jobs} jobs, ${o.all ? 'all problems' : 'skip after 5 consecutive failures'}; ` +
      `${cpus[0]?.model ?? 'cpu'} × ${cpus.length}, node ${process.version}\n`,
  );
  const results = new Map<string, (ProblemResult | undefined)[]>(domains.map((d) => [d.name, d.problems.map(() => undefined)]));
  const queue = domains.flatMap((d) => d.problems.map((p, i) => ({ p, i })));
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < queue.length) {
      const { p, i } = queue[next++]!;
      const rs = results.get(p.domain)!;
      if (!o.all && fiveInARow(rs)) continue;
      const r = await runProblem(p, o.timeout);
      rs[i] = r;
      const mark = r.outcome === 'verified' ? 'ok' : r.outcome.toUpperCase();
      process.stderr.write(`  ${p.domain}/${p.name}: ${mark} ${r.seconds.toFixed(2)} s ${r.outcome === 'verified' ? r.detail : r.detail.slice(0, 160)}\n`);
    }
  };
  await Promise.all(Array.from({ length: o.jobs }, worker));

  const rows: string[][] = [['domain', 'solved+verified / total', 'median s', 'anchor (HyperTensioN ≤ 30 s)', 'notes']];
  let solvedTotal = 0;
  let problemTotal = 0;
  let anchorTotal = 0;
  const allTimes: number[] = [];
  for (const d of domains) {
    const rs = results.get(d.name)!;
    const ok = rs.filter((r) => r?.outcome === 'verified') as ProblemResult[];
    const invalid = rs.filter((r) => r?.outcome === 'invalid').length;
    const timeouts = rs.filter((r) => r?.outcome === 'timeout').length;
    const failed = rs.filter((r) => r?.outcome === 'failed').length;
    const skipped = rs.filter((r) => r === undefined).length;
    const times = ok.map((r) => r.seconds);
    allTimes.push(...times);
    const med = median(times);
    const a = anchor.get(d.name);
    solvedTotal += ok.length;
    problemTotal += d.problems.length;
    anchorTotal += a?.solved ?? 0;
    const notes = [invalid && `${invalid} INVALID`, timeouts && `${timeouts} timeout`, failed && `${failed} no plan`, skipped && `${skipped} skipped`].filter(Boolean).join(', ');
    rows.push([d.name, `${ok.length} / ${d.problems.length}`, med === undefined ? '-' : med.toFixed(2), a ? `${a.solved} / ${a.problems}` : '?', notes]);
  }
  const med = median(allTimes);
  rows.push(['**total**', `${solvedTotal} / ${problemTotal}`, med === undefined ? '-' : med.toFixed(2), `${anchorTotal}`, `wall ${((performance.now() - started) / 1000).toFixed(0)} s`]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]): string => `| ${r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  const out = [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)];
  process.stdout.write(out.join('\n') + '\n');
}
