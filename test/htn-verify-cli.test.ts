// `weft htn verify` as a command module: exit 0 + "plan valid (...)" for a valid plan, exit 1 with
// the first problem for an invalid plan or unparsable input, exit 2 for a bad command line.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { run, usage } from '../cli/commands/htn-verify.js';

const FIX = fileURLToPath(new URL('./fixtures/hddl/', import.meta.url));
const domain = join(FIX, 'courier-domain.hddl');
const problem = join(FIX, 'courier-problem.hddl');
const plan = join(FIX, 'courier-1.plan');
const tmp = mkdtempSync(join(tmpdir(), 'weft-htn-verify-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let out: string;
let err: string;
beforeEach(() => {
  out = '';
  err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
});
afterEach(() => vi.restoreAllMocks());

describe('weft htn verify', () => {
  test('a valid plan: exit 0', async () => {
    expect(await run([domain, problem, plan])).toBe(0);
    expect(out).toBe('plan valid (8 actions, 8 methods)\n');
  });

  test('an invalid plan: exit 1 with the first problem and its plan line', async () => {
    const bad = join(tmp, 'bad.plan');
    writeFileSync(bad, readFileSync(plan, 'utf8').replace('7 wash t1', '7 wash p1'));
    expect(await run([domain, problem, bad])).toBe(1);
    expect(out).toBe(`plan invalid: ${bad}:10: action 7 (wash p1): argument 1 "p1" is not of type vehicle (parameter ?v)\n`);
  });

  test('an unparsable domain or plan: exit 1 with file:line:col', async () => {
    const badDomain = join(tmp, 'bad-domain.hddl');
    writeFileSync(badDomain, '(define (domain d)\n  (:task t)\n');
    expect(await run([badDomain, problem, plan])).toBe(1);
    expect(err).toBe(`${badDomain}:1:1: unclosed "(" (end of file reached with 1 list(s) open)\n`);
    err = '';
    const badPlan = join(tmp, 'bad.plan');
    writeFileSync(badPlan, '==>\nx noop\nroot\n');
    expect(await run([domain, problem, badPlan])).toBe(1);
    expect(err).toBe(`${badPlan}: plan line 2: action id "x" is not a non-negative integer\n`);
  });

  test('a missing file: exit 1', async () => {
    expect(await run([domain, problem, join(tmp, 'nope.plan')])).toBe(1);
    expect(err).toMatch(/ENOENT/);
  });

  test('bad usage: exit 2', async () => {
    expect(await run([domain, problem])).toBe(2);
    expect(err).toBe(`usage: weft ${usage}\n`);
  });
});
