/**
 * Long-lived child processes for the distributed-mode tests: `weft worker` processes (started,
 * waited for until they say they are ready, killed or stopped), a `weft` command the test can
 * signal while it runs (SIGSTOP, SIGKILL), and a Node script that must exit by itself within a
 * deadline. Every child is tracked (./children.ts): killed, with its process group, when the test
 * that started it ends — however it ends.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnTracked } from './children.js';
import { repoRoot, weftBin, type CliResult } from './cli.js';

export interface Spawned {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited (never rejects). */
  done: Promise<CliResult>;
  /** Send a signal (no-op once it has exited). */
  signal(signal: NodeJS.Signals): void;
}

export function spawnNode(script: string, args: string[], env: Record<string, string> = {}, cwd = repoRoot): Spawned {
  const child = spawnTracked(process.execPath, [script, ...args], { cwd, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const done = new Promise<CliResult>((resolve) => {
    child.once('error', (err) => {
      stderr += String(err);
      resolve({ code: null, signal: null, stdout, stderr });
    });
    child.once('close', (code, signal) => {
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    pid: child.pid!,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    signal(sig) {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    },
  };
}

/** A `weft` command as a child the test can signal while it runs. */
export function spawnWeft(args: string[], env: Record<string, string> = {}): Spawned {
  return spawnNode(weftBin, args, env);
}

export interface WorkerProcess extends Spawned {
  /** SIGTERM and wait for the exit. */
  stop(): Promise<CliResult>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<CliResult>;
}

/**
 * `weft worker <args>`, resolved once it printed `— ready` (its BullMQ worker is connected and
 * consuming), or rejected with its output if it exits or takes longer than `readyWithinMs`.
 */
export async function startWeftWorker(args: string[], env: Record<string, string> = {}, readyWithinMs = 60_000): Promise<WorkerProcess> {
  const spawned = spawnWeft(['worker', ...args], env);
  const deadline = Date.now() + readyWithinMs;
  let exited: CliResult | undefined;
  void spawned.done.then((r) => (exited = r));
  while (!/— ready/.test(spawned.stderr())) {
    if (exited) throw new Error(`weft worker ${args.join(' ')} exited (code ${exited.code}, signal ${exited.signal}) before it was ready:\n${exited.stderr}`);
    if (Date.now() > deadline) {
      spawned.signal('SIGKILL');
      throw new Error(`weft worker ${args.join(' ')} was not ready within ${readyWithinMs} ms:\n${spawned.stderr()}`);
    }
    await sleep(25);
  }
  return {
    ...spawned,
    stop: () => (spawned.signal('SIGTERM'), spawned.done),
    kill: () => (spawned.signal('SIGKILL'), spawned.done),
  };
}

/** Run a Node script that must exit by itself within `ms`; on time-out it is SIGKILLed and `timedOut` is set. */
export async function runNodeWithin(ms: number, script: string, args: string[], env: Record<string, string> = {}, cwd = repoRoot): Promise<CliResult & { timedOut: boolean; elapsedMs: number }> {
  const started = Date.now();
  const spawned = spawnNode(script, args, env, cwd);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    spawned.signal('SIGKILL');
  }, ms);
  const result = await spawned.done;
  clearTimeout(timer);
  return { ...result, timedOut, elapsedMs: Date.now() - started };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Poll `check` every `everyMs` until it returns a value other than undefined/false, or throw `what`
 * after `withinMs` — by default a minute: what takes a second on a quiet machine can take many
 * beside busy loops, and a wait that ends early only ever turns a slow pass into a failure.
 */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, withinMs = 60_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
