/**
 * Every process a test starts goes through `spawnTracked`, so none outlives the suite:
 *
 * - **A process group per child.** It is spawned `detached` (its own group), and killed as a group
 *   (SIGKILL to `-pid`), so whatever it started itself dies with it.
 * - **Killed in its teardown, after a time-out too.** A child started inside a test belongs to that
 *   test (found through `currentScope`, which test/support/child-scope.ts sets around every test,
 *   concurrent ones included) and is killed when the test ends, however it ends. A child started in
 *   `beforeAll` or at a file's top level belongs to the file and is killed after the file's own
 *   `afterAll` hooks. The test's own clean-up (`stop()`, SIGTERM) runs first; this is the backstop.
 * - **A registry on disk** (`WEFT_TEST_REGISTRY`, made by test/support/global-setup.ts): one file
 *   per live child naming it and the test that started it. The global teardown drains it, and
 *   fails the run naming any child still alive then — a child whose worker was killed before its
 *   teardown could run.
 *
 * Children carry the suite's marker (`WEFT_TEST_SUITE`) in their environment, as every process
 * started under the suite does; the global teardown also finds by that marker the processes started
 * some other way.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Who owns the children started in the current async context: a test, or (outside tests) its file. */
export class ChildScope {
  readonly children = new Set<ChildProcess>();
  constructor(readonly name: string) {}

  /** SIGKILL every child's process group that has not exited, and wait for the exits (bounded). */
  async killAll(): Promise<void> {
    await Promise.all([...this.children].map((child) => killGroup(child)));
    this.children.clear();
  }
}

/** The scope of the test running in this async context (set by child-scope.ts's aroundEach). */
export const currentScope = new AsyncLocalStorage<ChildScope>();
/** Children started outside any test (beforeAll, top level): killed after the file's afterAll hooks. */
export const fileScope = new ChildScope('(file)');

const live = new Set<ChildProcess>();
/** How many children this worker has started (the per-file time report prints each file's share). */
export let childrenStarted = 0;
process.once('exit', () => {
  for (const child of live) signalGroup(child, 'SIGKILL');
});

export interface TrackedOptions extends SpawnOptions {
  /** A short name for the registry and the leak report (default: the command and first arguments). */
  label?: string;
}

/**
 * spawn(), tracked: its own process group, registered on disk, and killed at the end of the test
 * (or file) that started it. `detached` is forced; stdio defaults to ignore/pipe/pipe.
 */
export function spawnTracked(command: string, args: readonly string[], options: TrackedOptions = {}): ChildProcess {
  const { label, ...spawnOptions } = options;
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...spawnOptions, detached: true });
  if (child.pid === undefined) return child; // spawn failed: 'error' follows, nothing runs
  childrenStarted += 1;
  const scope = currentScope.getStore() ?? fileScope;
  scope.children.add(child);
  live.add(child);
  const entry = registryEntry(child.pid);
  if (entry) {
    const name = label ?? [path.basename(command), ...args.slice(0, 3).map((a) => (a.length > 60 ? `${a.slice(0, 57)}…` : a))].join(' ');
    writeFileSync(entry, JSON.stringify({ pid: child.pid, name, test: scope.name, file: testFile(), startTicks: startTicksOf(child.pid) }));
  }
  child.once('exit', () => {
    live.delete(child);
    scope.children.delete(child);
    if (entry) rmSync(entry, { force: true });
  });
  return child;
}

/** Whether the child has not exited yet (as far as this process has heard). */
export function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!running(child) || child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/** SIGKILL the child's group and wait for its exit event (at most 5 s: a zombie we cannot reap is not worth a hang). */
function killGroup(child: ChildProcess): Promise<void> {
  if (!running(child)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 5_000);
    child.once('exit', () => (clearTimeout(timer), resolve()));
    signalGroup(child, 'SIGKILL');
  });
}

function registryEntry(pid: number): string | undefined {
  const dir = process.env.WEFT_TEST_REGISTRY;
  return dir ? path.join(dir, `${pid}.json`) : undefined;
}

function testFile(): string {
  return (globalThis as { __vitest_worker__?: { filepath?: string } }).__vitest_worker__?.filepath ?? '';
}

/** Fields 3… of /proc/<pid>/stat (state, ppid, …, starttime at [19]), or undefined where there is none. */
export function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The process's start time in clock ticks since boot (Linux), so a recycled pid is not taken for it. */
export function startTicksOf(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/**
 * Whether `pid` runs. A zombie does not: a killed orphan stays one where pid 1 does not reap (as in
 * some containers), and signal 0 still reaches it.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return procStat(pid)?.[0] !== 'Z';
}
