/**
 * A rule that warns, from the command line — each command a separate process (dist/cli/main.js):
 * a run of travel … `--policy <pack>` under travel-approval@1 with its approve-above-500 rule stating
 * `verdict: "warn"` completes without a person (the world holds the bookings and the 780 EUR charge),
 * and the warning is shown everywhere an auditor looks. The runs are fixtures, made in this process
 * as `weft run --policy FILE --json` makes them (test/support/runs-here.ts); `weft run --policy`
 * itself runs end to end in policy-pack-cli.test.ts. The commands an auditor reads with are processes:
 * - `weft policy explain` lists it under epoch 2's admission (text and --json);
 * - `weft show` under epoch 2; `weft log` on the admission's line;
 * - `weft ls --warnings` lists the invocation with the warning (epoch, rule, reason) from its inbox's
 *   advisories (text and --json), and a workspace where no rule warned says so;
 * - `weft inspect`: the server's description carries the epoch's warnings (checked without a
 *   browser), and the invocation page shows them as text (a real headless Chromium; skipped, loudly,
 *   when it is not installed);
 * - the journal replays, identical, to its fingerprint (the runtime's replay, in this process:
 *   `weft replay --json` runs end to end in cli-runtime.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { readTravelState } from '../examples/travel/state.js';
import type { JournalRecord } from '../journal/records.js';
import { FileStore } from '../stores/file.js';
import { assertBuilt, repoRoot, weft } from './support/cli.js';
import { inWorkspace, runInWorkspace } from './support/runs-here.js';
import { launchBrowser, NO_CHROMIUM_MESSAGE, requireChromium } from './support/chromium.js';
import { openPage } from './support/inspect-viewer.js';
import { serveInspector, type ServedViewer as Viewer } from './support/inspector.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-policy-warn-cli-'));
const dir = path.join(root, 'w');
const quiet = path.join(root, 'quiet');
const hasChromium = requireChromium();
let browser: Browser | undefined;

const intent = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const asOf = '2026-06-01T09:00:00Z';
const REASON = 'the epoch spends 780, above the 500 limit';
const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, any>;
let id = '';
let fingerprint = '';

beforeAll(async () => {
  assertBuilt();
  const pack = JSON.parse(readFileSync(path.join(repoRoot, 'examples', 'travel', 'policy-approval.json'), 'utf8')) as { name: string; rules: Array<Record<string, unknown>> };
  const warnPack = { ...pack, name: 'travel-warn', rules: pack.rules.map((r) => (r.id === 'approve-above-500' ? { ...r, id: 'warn-above-500', verdict: 'warn' } : r)) };
  const file = path.join(root, 'travel-warn.json');
  writeFileSync(file, JSON.stringify(warnPack, null, 2));
  const done = await runInWorkspace('travel', { intent, asOf, dir, policy: file });
  expect(done.status, done.reason ?? '').toBe('completed');
  id = done.id;
  fingerprint = done.fingerprint!;
  const quietRun = await runInWorkspace('travel', { intent, asOf, dir: quiet });
  expect(quietRun.status, quietRun.reason ?? '').toBe('completed');
  if (hasChromium) browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

test.runIf(!hasChromium && process.env.CI === 'true')('chromium is installed', () => {
  throw new Error(NO_CHROMIUM_MESSAGE);
});

describe('a rule that warns, from the command line', () => {
  test('the run completed without a person: the journal holds the warning on epoch 2, the world the bookings; replay is identical', async () => {
    const records = await new FileStore(dir).read(id);
    const admission = records.find((r) => r.kind === 'admission.decided' && r.epoch === 2 && (r.body as { subject: string }).subject === 'epoch') as JournalRecord<'admission.decided'>;
    expect(admission.body).toMatchObject({ decision: 'allow', rule: 'weft:default', warnings: [{ rule: 'warn-above-500', reason: REASON }] });
    expect(records.some((r) => r.kind === 'approval.requested')).toBe(false);
    const world = readTravelState(path.join(dir, 'state', 'travel', id, 'providers.json'));
    expect(world.charges.map((c) => c.amount)).toEqual([780]);
    expect(world.bookings.length).toBe(2);
    // Replayed without calling anything (the runtime's replay, as `weft replay` runs it): identical, the same fingerprint.
    const replay = await inWorkspace(dir, (ws) => ws.runtime.replay(id));
    expect(replay).toMatchObject({ status: 'completed', fingerprint });
  });

  test('weft policy explain lists the warning under the admission it was raised on', async () => {
    const text = await weft(['policy', 'explain', id, '--dir', dir]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    const at = lines.indexOf('epoch 2  epoch     allow');
    expect(at).toBeGreaterThan(0);
    // A warning admits nothing: the epoch is admitted by default (said so since flag 11's slice named every admitting rule), and warned.
    expect(lines.slice(at + 1, at + 4)).toEqual([
      '  rule      weft:default: no rule of the pack decided: admitted by default',
      '  admitted  admitted by default: a plan of the pinned library that no rule of the pack decided',
      `  warning   warn-above-500 (approve-above): ${REASON} — an epoch spending more than 500 amount goes on with a warning`,
    ]);
    expect(lines.filter((l) => l.startsWith('  warning '))).toHaveLength(1);
    const json = await weft(['policy', 'explain', id, '--dir', dir, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const warned = (last(json.stdout).admissions as Array<{ epoch: number; subject: string; warnings: unknown[] }>).filter((a) => a.warnings.length > 0);
    expect(warned).toEqual([expect.objectContaining({ epoch: 2, subject: 'epoch', warnings: [{ rule: 'warn-above-500', kind: 'approve-above', says: 'an epoch spending more than 500 amount goes on with a warning', reason: REASON }] })]);
  });

  test('weft show lists it under epoch 2, and weft log on the admission\'s line', async () => {
    const show = await weft(['show', id, '--dir', dir]);
    expect(show.code, show.stderr).toBe(0);
    const lines = show.stdout.split('\n');
    const epoch2 = lines.findIndex((l) => l.startsWith('epoch 2 '));
    expect(lines[epoch2 + 1]).toBe(`  warning: warn-above-500 on the epoch: ${REASON}`);
    expect(lines.filter((l) => l.includes('warning:'))).toHaveLength(1);
    const log = await weft(['log', id, '--dir', dir]);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toMatch(new RegExp(`admission\\.decided\\s+epoch allow \\(rule weft:default\\) \\[warning warn-above-500: ${REASON}\\]`));
  });

  test('weft ls --warnings lists the invocation and its warning from the inbox; a workspace where no rule warned says so', async () => {
    const text = await weft(['ls', '--warnings', '--dir', dir]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${id}  completed`));
    expect(lines).toContain(`    warning  epoch 2 epoch  warn-above-500: ${REASON}`);
    const json = await weft(['ls', '--warnings', '--dir', dir, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const rows = last(json.stdout) as unknown as Array<{ id: string; warnings: Array<Record<string, unknown>> }>;
    expect(rows.map((r) => [r.id, r.warnings.map((w) => [w.type, w.epoch, w.subject, w.rule, w.reason])])).toEqual([[id, [['advisory', 2, 'epoch', 'warn-above-500', REASON]]]]);
    // The plain listing is unchanged: no warnings field, nothing printed for them.
    const plain = await weft(['ls', '--dir', dir, '--json']);
    expect((last(plain.stdout) as unknown as Array<Record<string, unknown>>)[0]).not.toHaveProperty('warnings');
    const none = await weft(['ls', '--warnings', '--dir', quiet]);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/^no invocation in \S+ has warnings\n$/);
    expect(none.stdout).toContain(quiet);
  });
});

describe('weft inspect shows the warning', () => {
  let viewer: Viewer;
  beforeAll(async () => {
    viewer = await serveInspector(['--dir', dir]); // the viewer in this process: what it shows, not how it starts
  }, 90_000);
  afterAll(async () => viewer?.stop());

  test("the server's description of the invocation carries epoch 2's warnings", async () => {
    const described = (await (await fetch(`${viewer.origin}/api/invocations/${id}`)).json()) as { epochs: Array<{ epoch: number; warnings: unknown[] }> };
    expect(described.epochs.map((e) => [e.epoch, e.warnings])).toEqual([
      [1, []],
      [2, [{ subject: 'epoch', step: null, rule: 'warn-above-500', reason: REASON }]],
      [3, []],
    ]);
  });

  test.runIf(hasChromium)('the invocation page shows it in epoch 2, as text', async () => {
    const { page, errors } = await openPage(browser!);
    await page.goto(`${viewer.origin}/invocations/${id}`);
    const note = page.locator('section.epoch p.note.warning');
    await note.first().waitFor({ timeout: 30_000 });
    expect(await note.count()).toBe(1);
    expect(await note.first().textContent()).toBe(`warning: warn-above-500 on the epoch — ${REASON}`);
    expect(await note.first().evaluate((n) => n.closest('section.epoch')?.querySelector('.epoch-no')?.textContent)).toBe('epoch 2');
    expect(await note.first().evaluate((n) => n.children.length)).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});
