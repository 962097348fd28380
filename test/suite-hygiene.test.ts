/**
 * Nothing the suite starts outlives it, proved on the suite's own machinery: a child Vitest runs
 * test/fixtures/hygiene/ with this suite's global setup and per-test child scope, on two
 * deliberately bad files —
 *
 * - a test that times out while its child runs: the child is killed by that test's teardown (a
 *   concurrent test, still running, sees it dead while its own child lives on);
 * - a test that leaks a process the registry never saw: the global teardown finds it by the run's
 *   marker, kills it, and fails the run naming it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { alive } from './support/children.js';
import { repoRoot } from './support/cli.js';
import { runNodeWithin } from './support/weft-processes.js';

const out = mkdtempSync(path.join(tmpdir(), 'weft-hygiene-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const pidIn = (name: string) => Number(readFileSync(path.join(out, name), 'utf8'));

test('a timed-out test’s child dies in its teardown; a leaked process fails the run, named, and is killed', async () => {
  const vitest = path.join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
  const config = path.join(repoRoot, 'test', 'fixtures', 'hygiene', 'vitest.config.ts');
  // A child Vitest: a few seconds of start-up quiet, much more beside busy loops — hence the minute.
  const run = await runNodeWithin(120_000, vitest, ['run', '--config', config], { HYGIENE_OUT: out, CI: 'true', NO_COLOR: '1' });
  const output = `${run.stdout}\n${run.stderr}`;
  expect(run.timedOut, output).toBe(false);
  expect(run.code, output).toBe(1);

  // The time-out: reported, its child dead, and dead while the concurrent test still ran.
  expect(output).toMatch(/times out while its child runs[\s\S]*timed out in 1000ms/i);
  const timedOut = pidIn('timed-out.pid');
  expect(alive(timedOut)).toBe(false);
  expect(readFileSync(path.join(out, 'concurrent.ok'), 'utf8')).toContain('dead');
  expect(alive(pidIn('concurrent.pid'))).toBe(false);

  // The leak: named (pid and command line) by the end-of-run check, which failed the run, and killed.
  const leaked = pidIn('leaked.pid');
  expect(output).toContain('outlived it');
  expect(output).toMatch(new RegExp(`pid ${leaked}: .*hygiene: leaked on purpose`));
  expect(alive(leaked)).toBe(false);
  // The timed-out test's child had been killed long before: the end-of-run check does not name it.
  expect(output).not.toContain(`pid ${timedOut}:`);
});
