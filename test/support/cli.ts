/**
 * Spawning the compiled `weft` CLI (dist/, built by `npm test` before vitest runs) for
 * process-level tests: each call is a real child process, so a crash is a real SIGKILL and a
 * resume is a new process that shares nothing with the one before but the files. Every child is
 * tracked (./children.ts): killed, with its process group, when the test that started it ends.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { spawnTracked } from './children.js';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');
export const weftBin = path.join(repoRoot, 'dist', 'cli', 'main.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function assertBuilt(): void {
  if (!existsSync(weftBin)) throw new Error(`${weftBin} is missing: run "npm run build" (npm test does it first)`);
}

export function weft(args: string[], env: Record<string, string> = {}, cwd = repoRoot): Promise<CliResult> {
  return runNode(weftBin, args, env, cwd);
}

/** Run a Node script as a child process and collect its output. */
export function runNode(script: string, args: string[], env: Record<string, string> = {}, cwd = repoRoot): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(process.execPath, [script, ...args], { cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c) => (stdout += c));
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Run `tasks` with at most `limit` in flight. */
export async function pool<T>(limit: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  });
  await Promise.all(workers);
  return results;
}
