/**
 * The suite's global set-up and teardown: nothing the suite starts may outlive it.
 *
 * Set-up marks the run: `WEFT_TEST_SUITE` (a fresh id, in the environment of every test worker and
 * so of every process a test starts, and of theirs) and `WEFT_TEST_REGISTRY` (the folder where
 * test/support/children.ts registers each child it spawns); `WEFT_HOME` points the user's own
 * signing key (the Redis mode's default) at a folder of this run's, never the real home's.
 *
 * Teardown, after every test file's own clean-up has run, looks for survivors two ways: the
 * registry's entries whose process is still alive, and any process carrying this run's marker in its
 * environment (Linux /proc) — which also finds one started some other way, or the grandchild of a
 * killed child. Each survivor is SIGKILLed (its process group too), and the run fails naming it:
 * a process that outlives its test is a bug in that test, even when this backstop cleans it up.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { alive, procStat, startTicksOf } from './children.js';

interface Survivor {
  pid: number;
  name: string;
  startedBy: string;
}

export default function setup(): () => Promise<void> {
  const suite = randomUUID();
  const registry = mkdtempSync(path.join(tmpdir(), 'weft-test-registry-'));
  process.env.WEFT_TEST_SUITE = suite;
  process.env.WEFT_TEST_REGISTRY = registry;
  // The user's own signing key (Redis mode, cli/key-files.ts userKeysDir) is this run's, never the real one's.
  const home = mkdtempSync(path.join(tmpdir(), 'weft-test-home-'));
  process.env.WEFT_HOME = home;
  return async () => {
    rmSync(home, { recursive: true, force: true });
    const survivors = findSurvivors(suite, registry);
    for (const s of survivors) kill(s.pid);
    rmSync(registry, { recursive: true, force: true });
    if (survivors.length === 0) return;
    const lines = survivors.map((s) => `  pid ${s.pid}: ${s.name}${s.startedBy ? ` (started by ${s.startedBy})` : ''}`);
    const message = `${survivors.length} process(es) started by the suite outlived it (now killed); each one is a test that did not clean up:\n${lines.join('\n')}`;
    process.stderr.write(`\n${'!'.repeat(78)}\n${message}\n${'!'.repeat(78)}\n`);
    process.exitCode = 1;
    throw new Error(message);
  };
}

/** Processes of this run still alive: registered children, and anything else carrying the run's marker. */
function findSurvivors(suite: string, registry: string): Survivor[] {
  const found = new Map<number, Survivor>();
  let entries: string[] = [];
  try {
    entries = readdirSync(registry);
  } catch {
    /* no registry: nothing was registered */
  }
  for (const file of entries) {
    try {
      const entry = JSON.parse(readFileSync(path.join(registry, file), 'utf8')) as { pid: number; name: string; test: string; file: string; startTicks?: string };
      if (entry.startTicks !== undefined && startTicksOf(entry.pid) !== entry.startTicks) continue; // exited (the pid may be reused)
      if (!alive(entry.pid)) continue;
      found.set(entry.pid, { pid: entry.pid, name: entry.name, startedBy: [path.basename(entry.file), entry.test].filter(Boolean).join(' › ') });
    } catch {
      /* an entry being removed as we read */
    }
  }
  for (const pid of markedProcesses(suite)) {
    if (!found.has(pid)) found.set(pid, { pid, name: commandLineOf(pid), startedBy: '' });
  }
  return [...found.values()].sort((a, b) => a.pid - b.pid);
}

/**
 * Pids whose environment holds `WEFT_TEST_SUITE=<suite>`, except this process, its ancestors and
 * Vitest's own workers (children of this process running Vitest's code): the run's own machinery.
 */
function markedProcesses(suite: string): number[] {
  const needle = Buffer.from(`WEFT_TEST_SUITE=${suite}\0`);
  const own = new Set<number>([process.pid]);
  for (let pid = process.ppid; pid > 1 && !own.has(pid); pid = parentOf(pid)) own.add(pid);
  let pids: number[] = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return []; // not Linux: the registry alone
  }
  const out: number[] = [];
  for (const pid of pids) {
    if (own.has(pid)) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${pid}/environ`);
    } catch {
      continue;
    }
    if (environ.indexOf(needle) === -1) continue;
    if (parentOf(pid) === process.pid && /node_modules[\\/](vitest|tinypool)[\\/]/.test(commandLineOf(pid))) continue;
    if (!alive(pid)) continue; // exited (a zombie not yet reaped)
    out.push(pid);
  }
  return out;
}

function parentOf(pid: number): number {
  return Number(procStat(pid)?.[1] ?? 0);
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 200);
  } catch {
    return '(unknown)';
  }
}

function kill(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      /* not a group leader, or gone */
    }
  }
}
