/**
 * A setup file of every test file (vitest.config.ts): each test runs inside a ChildScope of its
 * own (test/support/children.ts), so the processes it starts — concurrent tests included — are
 * killed when it ends, passed, failed or timed out. Processes started outside a test (beforeAll,
 * top level) are killed after the file's own afterAll hooks, which run first and stop them politely.
 *
 * It also measures the CPU the file cost, its worker's and its children's (Linux: /proc/self/stat's
 * utime, stime and the reaped children's cutime, cstime), and how many processes it started through
 * spawnTracked, into the file's meta (`cpuMs`, `children`), which the per-file time report prints (test/support/file-times-reporter.ts): on a two-core machine the CPU a
 * file burns, not the time it waits, is what the suite's wall time is made of.
 */
import { readFileSync } from 'node:fs';
import { afterAll, aroundEach, beforeAll } from 'vitest';
import { ChildScope, childrenStarted, currentScope, fileScope } from './children.js';

aroundEach(async (runTest, context) => {
  const scope = new ChildScope(context.task.name);
  try {
    await currentScope.run(scope, runTest);
  } finally {
    await scope.killAll();
  }
});

/** This process's CPU and its reaped children's, in ms (undefined off Linux). */
function cpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime are fields 14–17 of the line, [11]–[14] after the name; 100 ticks a second.
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * 10;
  } catch {
    return undefined;
  }
}

let cpuAtStart: number | undefined;
let childrenAtStart = 0;
beforeAll(() => {
  cpuAtStart = cpuMs();
  childrenAtStart = childrenStarted;
});

// eslint-disable-next-line no-empty-pattern -- vitest 4 passes the file as the second argument, after a fixtures object
afterAll(async ({}, suite) => {
  await fileScope.killAll();
  const now = cpuMs();
  const meta = suite.meta as { cpuMs?: number; children?: number };
  if (now !== undefined && cpuAtStart !== undefined) meta.cpuMs = now - cpuAtStart;
  meta.children = childrenStarted - childrenAtStart;
});
