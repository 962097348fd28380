// Vitest configuration: tests live in test/. Two projects, run one after the other:
//
// - `unit`: the pure and in-process tests, as many files at once as the machine has cores
//   (`npm run test:unit` runs them alone, with no build and no Redis).
// - `process`: the tests that start processes — the compiled CLI in dist/ (which `npm test` builds
//   first), `weft worker` and `serve`, private redis-servers. They compete for the CPU with what they
//   start, so at most three files run at once (they wait on their children much of the time) and at
//   most two tests at once inside a file, with time-outs sized for a loaded two-core machine (a CLI
//   start costs ~0.4 s of CPU quiet, several seconds beside four busy loops).
//
// Neither project isolates files (`isolate: false`: a worker imports the code under test once, not
// once per file — a third of the suite's CPU went to that); every file cleans up what it changes, and
// the setup file below runs again for each file.
//
// A test file is process-level when it imports what starts processes (node:child_process, the
// support modules that spawn, ioredis or bullmq, which need a server); the list is derived, never
// kept by hand. Every file runs with test/support/child-scope.ts (each child killed when its test
// ends), and the global teardown (test/support/global-setup.ts) fails the run naming any process the
// suite started that is still alive.
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const testDir = path.join(import.meta.dirname, 'test');
const STARTS_PROCESSES = /from '(node:child_process|ioredis|bullmq|\.\/support\/(cli|weft-processes|redis-server|file-redis|children)\.js)'/;

/** Whether a test file (or a helper in test/ that it imports) imports something that starts processes. */
function startsProcesses(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  if (STARTS_PROCESSES.test(text)) return true;
  for (const [, helper] of text.matchAll(/from '\.\/([\w.-]+)\.js'/g)) {
    const source = path.join(testDir, `${helper}.ts`);
    if (readdirSync(testDir).includes(`${helper}.ts`) && startsProcesses(source, seen)) return true;
  }
  return false;
}

const processLevel = readdirSync(testDir)
  .filter((name) => name.endsWith('.test.ts'))
  .filter((name) => startsProcesses(path.join(testDir, name)))
  .map((name) => `test/${name}`);

export default defineConfig({
  test: {
    // The default reporter, then where the time went: the slowest files and each project's total
    // (test/support/file-times-reporter.ts; WEFT_TEST_TIMES=<n> shows n files, 0 none).
    reporters: ['default', './test/support/file-times-reporter.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/child-scope.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          isolate: false,
          include: ['test/**/*.test.ts'],
          exclude: processLevel,
          maxWorkers: Math.max(2, availableParallelism()),
          testTimeout: 60_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'process',
          isolate: false,
          include: processLevel,
          maxWorkers: 3,
          maxConcurrency: 2,
          testTimeout: 180_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
