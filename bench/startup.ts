/**
 * `npm run bench -- startup [--reps R]` — what a `weft` command costs to start, as a user (and the
 * test suite, which spawns the CLI hundreds of times) pays it. Each command is a fresh process of
 * the compiled CLI; beside it, as the baseline, the same `node` running an empty ES module. Both
 * sides are measured R times (default 15), interleaved (baseline, each command, baseline, …) so
 * machine noise hits them alike; reported are the medians of wall time (spawn to exit) and of the
 * child's own CPU time (user + system, reported by bench/cpu-at-exit.ts on fd 3), each with its
 * ratio to the baseline's and what it adds to it.
 *
 *   weft --version                 the cheapest path: nothing but the package's version
 *   weft --help                    every command's usage
 *   weft ls --dir <empty>          a store opened and listed
 *   weft run travel --dir <fresh>  the demo intent run end to end (a key made, 4 epochs, sealed)
 *
 * Then, from one more run of each under test/support/module-trace.mjs, how many modules it loaded
 * and which of the heavy packages among them (zod, the curves, xstate, the Redis clients, …).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
const CPU_AT_EXIT = new URL('./cpu-at-exit.js', import.meta.url).href;
/** Outside the published package (as dist/bench is): the bench runs from a clone. */
const MODULE_TRACE = new URL('../../test/support/module-trace.mjs', import.meta.url).href;
const HEAVY = ['zod', '@noble/curves', '@noble/hashes', 'xstate', 'ioredis', 'bullmq', '@dagrejs/dagre', '@statelyai/inspect'];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number) => n.toFixed(0).padStart(5);

interface Subject {
  label: string;
  /** The child's argv after `node`, made afresh for each repetition (a fresh directory for run). */
  argv: (scratch: string) => string[];
}

interface Sample {
  wallMs: number;
  cpuMs: number;
}

/** One child: wall time from spawn to exit, and its own CPU time. Throws if it fails. */
function sample(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Sample {
  const start = performance.now();
  const child = spawnSync(process.execPath, ['--import', CPU_AT_EXIT, ...argv], { cwd, env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'], maxBuffer: 64 * 2 ** 20 });
  const wallMs = performance.now() - start;
  if (child.status !== 0) throw new Error(`node ${argv.join(' ')} exited ${child.status ?? child.signal}: ${String(child.stderr).trim().slice(0, 500)}`);
  const line = String(child.output[3] ?? '').trim();
  if (!line) throw new Error(`node ${argv.join(' ')} reported no CPU time`);
  const { user, system } = JSON.parse(line) as { user: number; system: number };
  return { wallMs, cpuMs: (user + system) / 1000 };
}

/** The modules one run of `argv` loads, and the heavy packages among them. */
function traced(argv: string[], cwd: string, env: NodeJS.ProcessEnv, scratch: string): { modules: number; heavy: string[] } {
  const file = path.join(scratch, 'module-trace.txt');
  writeFileSync(file, '');
  const child = spawnSync(process.execPath, ['--import', MODULE_TRACE, ...argv], { cwd, env: { ...env, WEFT_MODULE_TRACE: file }, stdio: 'ignore' });
  if (child.status !== 0) throw new Error(`traced node ${argv.join(' ')} exited ${child.status ?? child.signal}`);
  const urls = readFileSync(file, 'utf8').split('\n').filter((u) => u !== '' && !u.startsWith('node:'));
  const heavy = HEAVY.filter((pkg) => urls.some((u) => u.includes(`/node_modules/${pkg}/`)));
  return { modules: urls.length, heavy };
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { reps: { type: 'string' } } });
  const reps = Number(values.reps ?? 15);
  const root = mkdtempSync(path.join(os.tmpdir(), 'weft-bench-startup-'));
  // The embedded default whatever the shell says: no Redis, no key from the environment.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('WEFT_')));
  try {
    const empty = path.join(root, 'empty.mjs');
    writeFileSync(empty, '');
    const emptyDir = mkdtempSync(path.join(root, 'empty-'));
    let fresh = 0;
    const baseline: Subject = { label: 'node <empty ES module>', argv: () => [empty] };
    const subjects: Subject[] = [
      { label: 'weft --version', argv: () => [CLI, '--version'] },
      { label: 'weft --help', argv: () => [CLI, '--help'] },
      { label: 'weft ls --dir <empty>', argv: () => [CLI, 'ls', '--dir', emptyDir] },
      { label: 'weft run travel --dir <fresh>', argv: (scratch) => [CLI, 'run', 'travel', '--dir', mkdtempSync(path.join(scratch, `run-${fresh++}-`))] },
    ];
    const all = [baseline, ...subjects];
    // One warm-up of each (the file system's caches), not counted.
    for (const s of all) sample(s.argv(root), root, env);
    const samples = new Map<Subject, Sample[]>(all.map((s) => [s, []]));
    for (let i = 0; i < reps; i++) {
      for (const s of all) {
        samples.get(s)!.push(sample(s.argv(root), root, env));
        if (s !== baseline) samples.get(baseline)!.push(sample(baseline.argv(root), root, env));
      }
    }
    const base = { wall: median(samples.get(baseline)!.map((x) => x.wallMs)), cpu: median(samples.get(baseline)!.map((x) => x.cpuMs)) };
    process.stdout.write(`startup: medians of ${reps} runs of each command, each beside a run of the baseline; load now ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
    process.stdout.write(`${'command'.padEnd(31)}  wall ms  ×base   +ms |  cpu ms  ×base   +ms | modules  heavy packages loaded\n`);
    for (const s of all) {
      const wall = median(samples.get(s)!.map((x) => x.wallMs));
      const cpu = median(samples.get(s)!.map((x) => x.cpuMs));
      const trace = s === baseline ? { modules: 1, heavy: [] } : traced(s.argv(root), root, env, root);
      const ratios = `${fmt(wall)}  ${(wall / base.wall).toFixed(2).padStart(5)}  ${fmt(wall - base.wall)} |   ${fmt(cpu)}  ${(cpu / base.cpu).toFixed(2).padStart(5)}  ${fmt(cpu - base.cpu)}`;
      process.stdout.write(`${s.label.padEnd(31)}  ${ratios} | ${String(trace.modules).padStart(7)}  ${trace.heavy.join(', ') || '—'}\n`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
