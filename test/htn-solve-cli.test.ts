/**
 * `weft htn solve` as a process: the compiled CLI (dist/, built by `npm test`) prints the plan in
 * the IPC format on stdout, `weft htn verify` accepts it, a missing plan exits 1 with a reason,
 * and a bad command line exits 2. Skips when dist/ has not been built.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

const cli = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const fixtures = join(import.meta.dirname, 'fixtures', 'htn', 'delivery');
const weft = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

describe.skipIf(!existsSync(cli))('weft htn solve', () => {
  test('prints the committed plan, which `weft htn verify` accepts', () => {
    const r = weft('htn', 'solve', join(fixtures, 'domain.hddl'), join(fixtures, 'problem.hddl'), '--timeout', '10');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(readFileSync(join(fixtures, 'plan.ipc'), 'utf8'));
    expect(r.stderr).toMatch(/^solved: 9 actions/);
    const dir = mkdtempSync(join(tmpdir(), 'weft-htn-'));
    const planFile = join(dir, 'plan.txt');
    writeFileSync(planFile, r.stdout);
    const v = weft('htn', 'verify', join(fixtures, 'domain.hddl'), join(fixtures, 'problem.hddl'), planFile);
    expect(v.status).toBe(0);
  });

  test('an unsolvable problem exits 1 with the furthest failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-htn-'));
    const problem = readFileSync(join(fixtures, 'problem.hddl'), 'utf8').replace('(road north east)', '').replace('(road east west) (road west east)', '');
    const file = join(dir, 'unsolvable.hddl');
    writeFileSync(file, problem);
    const r = weft('htn', 'solve', join(fixtures, 'domain.hddl'), file);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^no plan: no decomposition of the initial task network; furthest failure after \d+ steps at \(/);
  });

  test('a node budget ends the search with a limit message', () => {
    const r = weft('htn', 'solve', join(fixtures, 'domain.hddl'), join(fixtures, 'problem.hddl'), '--max-nodes', '5');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^no plan: nodes limit 5 reached while expanding/);
  });

  test('a parse error names file, line and column', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-htn-'));
    const file = join(dir, 'broken.hddl');
    writeFileSync(file, '(define (problem p)\n  (:domain delivery)\n  (:objects a - location)\n');
    const r = weft('htn', 'solve', join(fixtures, 'domain.hddl'), file);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${file}:1:1`);
  });

  test('a wrong command line exits 2 with the usage', () => {
    const r = weft('htn', 'solve', 'only-one-file.hddl');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/usage: weft htn solve/);
  });
});
