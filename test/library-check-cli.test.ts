/**
 * The library check from the command line (issue 30): `weft policy check FILE --domain D` checks the
 * domain's library too, and warns — on stderr and as `libraryWarnings` in its --json line, exit 0 —
 * about a method-less task whose effectful operators pass args no constraint ties to the goal
 * (htn/library/unbound-effects.ts), saying which args of which operator; `weft mine` checks the
 * library it mines into (or stays on) the same way — a `warning:` line of its report, and
 * `warnings` in its --json line. Travel, whose taxi task binds its effects, has none.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import '../journal/sha256-node.js';
import { LibraryBuilder } from '../htn/library/builder.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, repoRoot, weft } from './support/cli.js';

const root = mkdtempSync(join(tmpdir(), 'weft-library-check-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const pack = join(root, 'pack.json');
const domainFile = join(root, 'payments-domain.mjs');

beforeAll(() => {
  assertBuilt();
  writeFileSync(pack, JSON.stringify({ pack: 1, name: 'small', version: '1', rules: [{ id: 'cap', rule: 'spend-cap', arg: 'amount', cap: 100 }] }));
  // A domain whose method-less task binds who the money goes from, but not to whom nor how much.
  writeFileSync(
    domainFile,
    `const { defineDomain, htn, ScriptedModel, z } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'index.js')).href)});
const library = new htn.LibraryBuilder('payments')
  .type('person')
  .task('pay_back', { '?from': 'person', '?to': 'person' }, { constraints: [{ bind: 'money.send', args: { from: '?from' } }] })
  .operator('send', { params: { '?from': 'person', '?to': 'person', '?n': 'number' }, actuator: { actuator: 'money.send', args: { from: '?from', to: '?to', amount: '?n' } } })
  .operator('look', { params: { '?from': 'person' }, actuator: { actuator: 'money.balance', args: { who: '?from' } }, readOnly: true })
  .build();
const tool = (name, readOnly) => ({ name, kind: 'tool', readOnly, argsSchema: z.object({}).passthrough(), resultSchema: z.unknown(), async run() { return {}; } });
export default defineDomain({
  name: 'payments',
  libraries: [library],
  actuators: () => [tool('money.send', false), tool('money.balance', true), { ...tool('payments.observe', true), kind: 'state', async run() { return { objects: [], facts: [] }; } }],
  observe: 'payments.observe',
  model: () => new ScriptedModel({ model: 'payments', entries: [] }),
  asOf: '2026-06-01T09:00:00Z',
});
`,
  );
});

describe('weft policy check --domain checks the library too', () => {
  test('a method-less task with unbound effect args: a warning naming the operator and the args, exit 0', async () => {
    const out = await weft(['policy', 'check', pack, '--domain', domainFile, '--json']);
    expect(out.code, out.stderr).toBe(0);
    const line = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { ok: boolean; libraryWarnings: unknown[] };
    expect(line.ok).toBe(true);
    expect(line.libraryWarnings).toEqual([
      { task: 'pay_back', operator: 'send', actuator: 'money.send', args: ['amount', 'to'], message: expect.stringContaining('operator send dispatches money.send with amount, to, which no constraint of pay_back ties to the goal') },
    ]);
    expect(out.stderr).toMatch(/weft policy check: warning: task pay_back has no method, so the model authors its fragments: operator send dispatches money\.send with amount, to/);
    const text = await weft(['policy', 'check', pack, '--domain', domainFile]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/valid policy pack small@1/);
    expect(text.stderr).toMatch(/warning: .*operator send dispatches money\.send with amount, to/);
  });

  test('travel binds its taxi task: no warning', async () => {
    const out = await weft(['policy', 'check', join(repoRoot, 'examples', 'travel', 'policy-pack.json'), '--domain', 'travel', '--json']);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout.trim().split('\n').at(-1)!)).toMatchObject({ ok: true, predicatesChecked: true, libraryWarnings: [] });
    expect(out.stderr).not.toMatch(/warning/);
  });
});

describe('weft mine checks the library it mines into', () => {
  test('a library whose method-less task leaves effect args unbound: warnings in the report and the --json line, exit 0', async () => {
    const library = new LibraryBuilder('payments')
      .type('person')
      .task('pay_back', { '?from': 'person', '?to': 'person' }, { constraints: [{ bind: 'money.send', args: { from: '?from' } }] })
      .operator('send', { params: { '?from': 'person', '?to': 'person', '?n': 'number' }, actuator: { actuator: 'money.send', args: { from: '?from', to: '?to', amount: '?n' } } })
      .build();
    const file = join(root, 'payments.library.json');
    writeFileSync(file, JSON.stringify(library));
    const emptyWorkspace = join(root, 'empty-ws'); // a workspace with no journals yet (a folder that is not there is a usage error)
    mkdirSync(emptyWorkspace, { recursive: true });
    const out = await weft(['mine', '--dir', emptyWorkspace, '--library', file, '--json']);
    expect(out.code, out.stderr).toBe(0);
    const line = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { accepted: number; warnings: unknown[] };
    expect(line.accepted).toBe(0);
    expect(line.warnings).toEqual([{ task: 'pay_back', operator: 'send', actuator: 'money.send', args: ['amount', 'to'], message: expect.stringContaining('which no constraint of pay_back ties to the goal') }]);
    expect(out.stderr).toMatch(/^warning: task pay_back has no method/m);
  });
});
