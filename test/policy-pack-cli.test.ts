/**
 * Policy packs from the command line (dist/cli/main.js):
 * - `weft run travel <the standard intent> --policy examples/travel/policy-approval.json` rests
 *   awaiting approval (the 780 EUR booking is above the pack's 500); `weft approve` — a new
 *   process given no pack: it reads the pinned pack from the store — completes it; the world holds
 *   one charge of 780; the journal replays identical (the runtime's replay) and verifies offline
 *   (`weft verify`'s own check, in this process: test/support/journals-here.ts; both commands run end
 *   to end in cli-runtime.test.ts, and on the exported bundle below); the bundle `weft export` prints
 *   (made by the command's own function, in this process) carries the pinned pack, and `weft replay`
 *   and `weft verify` replay and verify it with no workspace;
 * - `weft policy explain <id>` shows each admission and the rule that decided it (text and --json),
 *   each step's at dispatch included (flag 9), and says "rule not recorded (pinned before flag 7)"
 *   for a journal an older weft wrote, and — before flag 9 — that a step allowed at dispatch was
 *   not recorded, its admission implied by its dispatch;
 * - `weft policy check` prints a good pack's digest (text and --json) and refuses a bad one naming
 *   the file and the field; `weft run --policy` with a bad pack is refused before anything is written.
 *
 * Each command runs end to end as a separate process: run and approve with a pack, log, explain
 * (text and --json), replay and verify of the bundle, check (--json, good and bad), run with a bad
 * pack (--json). What a command prints for the other inputs — explain of an unknown id and of the
 * older journals, check's text of a good and a bad pack, run with a pack file that is not there — is
 * the command's module run in this process (test/support/command-in-process.ts: the code the
 * process runs, with main.ts's exit codes): its subject is what the command computes, not its process.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { readTravelState } from '../examples/travel/state.js';
import type { JournalRecord } from '../journal/records.js';
import { packDigest, parseRulePackText } from '../policy/index.js';
import { assertBuilt, repoRoot, weft } from './support/cli.js';
import { weftHere } from './support/command-in-process.js';
import { exportAs, verifyJournal } from './support/journals-here.js';
import { inWorkspace } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-policy-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(() => assertBuilt());

const intent = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const asOf = '2026-06-01T09:00:00Z';
const approvalFile = path.join(repoRoot, 'examples', 'travel', 'policy-approval.json');
const approvalDigest = packDigest(parseRulePackText(readFileSync(approvalFile, 'utf8'), 'policy-approval.json'));
const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, any>;
const readJournal = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as JournalRecord);

describe('weft run --policy makes the approval path reachable from the CLI', () => {
  const dir = path.join(root, 'approval');
  let id = '';

  test('run with the travel approval pack rests awaiting approval; approve, in a process given no pack, completes it', async () => {
    const run = await weft(['run', 'travel', intent, '--as-of', asOf, '--dir', dir, '--policy', approvalFile, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const rested = last(run.stdout);
    expect(rested).toMatchObject({ status: 'awaiting_approval', reason: 'the epoch spends 780, above the 500 limit' });
    id = rested.id;
    const pinned = readJournal(rested.journal)[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin.policy).toBe(`pack:travel-approval@1#${approvalDigest}`);
    expect(existsSync(path.join(dir, 'blobs', approvalDigest))).toBe(true);

    const approved = await weft(['approve', id, '--by', 'alice', '--dir', dir, '--json']);
    expect(approved.code, approved.stderr).toBe(0);
    const done = last(approved.stdout);
    expect(done.status).toBe('completed');
    const records = readJournal(done.journal);
    expect(records.filter((r) => r.kind === 'admission.decided' && (r.body as any).subject === 'epoch').map((r) => [r.epoch, (r.body as any).decision, (r.body as any).rule])).toEqual([
      [1, 'allow', 'searches-free'],
      [2, 'require_approval', 'approve-above-500'],
      [3, 'allow', 'weft:default'],
    ]);
    // And each step's at dispatch (flag 9): one per dispatched step.
    expect(records.filter((r) => r.kind === 'admission.decided' && (r.body as any).subject === 'step')).toHaveLength(records.filter((r) => r.kind === 'step.dispatched').length);
    expect(records.find((r) => r.kind === 'approval.decided')!.body).toMatchObject({ decision: 'approved', by: 'alice' });
    const world = readTravelState(path.join(dir, 'state', 'travel', id, 'providers.json'));
    expect(world.charges.map((c) => c.amount)).toEqual([780]);
    expect(world.bookings.length).toBe(2);

    // Replayed without calling anything, identical, to the same fingerprint: the pinned pack is read from the store.
    expect(await inWorkspace(dir, (ws) => ws.runtime.replay(id))).toMatchObject({ status: 'completed', fingerprint: done.fingerprint });
    expect((await verifyJournal(done.journal, { publicKey: done.publicKey })).code).toBe(0);
    // weft log names the rule that decided each admission, not only the pinned policy.
    const log = await weft(['log', id, '--dir', dir]);
    expect(log.stdout).toMatch(/admission\.decided\s+epoch require_approval \(rule approve-above-500\): the epoch spends 780/);
    expect(log.stdout).toMatch(/admission\.decided\s+step #0 allow \(rule searches-free\)/);
  });

  test('weft policy explain shows each admission and the rule that decided it', async () => {
    const text = await weft(['policy', 'explain', id, '--dir', dir]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines).toContain(`policy      pack:travel-approval@1#${approvalDigest}  (policy pack travel-approval@1)`);
    expect(lines).toContain('rules       recorded on each admission (flag 7)');
    expect(lines).toContain('epoch 2  epoch     require_approval');
    expect(lines).toContain('  reason    the epoch spends 780, above the 500 limit');
    expect(lines).toContain('  rule      approve-above-500 (approve-above): a person approves an epoch spending more than 500 amount');
    expect(lines).toContain('  approval  approved by alice');
    expect(lines).toContain('  rule      searches-free (read-only-free): read-only steps are admitted freely');
    // Each step's admission at dispatch (flag 9), with its rule: the read-only searches by searches-free.
    expect(lines).toContain("steps       each step's admission at dispatch recorded, allows included (flag 9)");
    const search = lines.indexOf('epoch 1  step 1    allow');
    expect(search).toBeGreaterThan(0);
    expect(lines[search + 1]).toBe('  rule      searches-free (read-only-free): read-only steps are admitted freely');
    expect(lines.filter((l) => /^epoch \d+ {2}step \d+ +allow$/.test(l))).toHaveLength(9);
    expect(text.stdout).not.toContain('implied');
    const json = await weft(['policy', 'explain', id, '--dir', dir, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const explained = last(json.stdout);
    expect(explained).toMatchObject({ id, rulesRecorded: true, stepsRecorded: true, implied: [], pack: { name: 'travel-approval', version: '1', digest: approvalDigest } });
    expect(explained.admissions.map((a: any) => `${a.epoch}:${a.subject}${a.step === null ? '' : `#${a.step}`}:${a.decision}:${a.rule}`)).toEqual([
      '1:epoch:allow:searches-free', '1:step#0:allow:searches-free', '1:step#1:allow:searches-free',
      '2:epoch:require_approval:approve-above-500', ...[0, 1, 2, 3, 4].map((i) => `2:step#${i}:allow:weft:default`),
      '3:epoch:allow:weft:default', '3:step#0:allow:weft:default', '3:step#1:allow:weft:default',
    ]);
  });

  test('weft export carries the pinned pack: the bundle replays and verifies with no workspace', async () => {
    // The bundle as `weft export` prints it, made by the command's own function in this process (the command runs end to end
    // in cli-domain.test.ts, mining-cli.test.ts and others); its replay and verify below are processes, in a folder with no workspace.
    const exported = { stdout: await exportAs(dir, id) };
    const bundle = JSON.parse(exported.stdout) as { packs?: Record<string, unknown> };
    expect(Object.keys(bundle.packs ?? {})).toEqual([approvalDigest]);
    const file = path.join(root, 'approval-bundle.json');
    writeFileSync(file, exported.stdout);
    const replay = await weft(['replay', file, '--json'], {}, root);
    expect(replay.code, replay.stderr).toBe(0);
    expect(last(replay.stdout)).toMatchObject({ id, identical: true, status: 'completed' });
    const verify = await weft(['verify', file], {}, root);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  test('an unknown id is refused, and a journal an older weft wrote says its rules were not recorded', async () => {
    const missing = await weftHere(['policy', 'explain', 'inv-nope', '--dir', dir]);
    expect(missing.code).toBe(2); // an unknown invocation: a command line to fix (cli/exit-codes.ts)
    expect(missing.stderr).toMatch(/no invocation inv-nope/);
    const old = path.join(root, 'old');
    cpSync(path.join(repoRoot, 'test', 'fixtures', 'runtime', 'travel-v3'), old, { recursive: true });
    const oldId = (JSON.parse(readFileSync(path.join(old, 'fixture.json'), 'utf8')) as { id: string }).id;
    const explained = await weftHere(['policy', 'explain', oldId, '--dir', old]);
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toContain('rules       not recorded: pinned before flag 7');
    const rules = explained.stdout.split('\n').filter((l) => l.startsWith('  rule '));
    expect(rules.filter((l) => !l.includes('flag 9'))).toEqual(Array(3).fill('  rule      rule not recorded (pinned before flag 7)'));
    // Before flag 9 the steps allowed at dispatch left no record: each is shown as implied by its dispatch.
    expect(explained.stdout).toContain('steps       a step allowed at dispatch was not recorded (pinned before flag 9): implied by its dispatch');
    expect(rules.filter((l) => l.includes('flag 9'))).toHaveLength(9);
  });

  test('a journal pinned under travel@4 before flag 9 (travel-v5): epoch admissions name their rule, steps are implied by their dispatch (text and --json)', async () => {
    const old = path.join(root, 'before-9');
    cpSync(path.join(repoRoot, 'test', 'fixtures', 'runtime', 'travel-v5'), old, { recursive: true });
    const oldId = (JSON.parse(readFileSync(path.join(old, 'fixture.json'), 'utf8')) as { id: string }).id;
    const text = await weftHere(['policy', 'explain', oldId, '--dir', old]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines).toContain('rules       recorded on each admission (flag 7)');
    expect(lines).toContain('steps       a step allowed at dispatch was not recorded (pinned before flag 9): implied by its dispatch');
    const first = lines.indexOf('epoch 1  step 0    allow (implied)');
    expect(first).toBeGreaterThan(lines.indexOf('epoch 1  epoch     allow'));
    expect(lines[first + 1]).toMatch(/^ {2}rule {6}not recorded \(pinned before flag 9\): implied by its step\.dispatched \(flights\.search\), seq \d+$/);
    expect(lines.filter((l) => l.endsWith('allow (implied)'))).toHaveLength(9);
    const json = last((await weft(['policy', 'explain', oldId, '--dir', old, '--json'])).stdout);
    expect(json).toMatchObject({ rulesRecorded: true, stepsRecorded: false });
    expect(json.admissions.map((a: any) => `${a.epoch}:${a.subject}:${a.rule}`)).toEqual(['1:epoch:weft:default', '2:epoch:weft:default', '3:epoch:weft:default']);
    expect(json.implied.map((i: any) => `${i.epoch}#${i.step}:${i.actuator}:${i.by}`)).toEqual([
      '1#0:flights.search:step.dispatched', '1#1:hotels.search:step.dispatched',
      '2#0:airline.hold:step.dispatched', '2#1:hotel.hold:step.dispatched', '2#2:card.charge:step.dispatched', '2#3:airline.confirm:step.dispatched', '2#4:hotel.confirm:step.dispatched',
      '3#0:message.send:step.dispatched', '3#1:reminder.set:step.dispatched',
    ]);
  });
});

describe('weft policy check, and a bad pack on weft run', () => {
  test('a good pack: its digest, the id a run pins, its rules (text and --json)', async () => {
    const text = await weftHere(['policy', 'check', approvalFile]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('valid policy pack travel-approval@1 (8 rules)');
    expect(text.stdout).toContain(`digest      ${approvalDigest}`);
    expect(text.stdout).toContain('  approve-above-500     approve-above         a person approves an epoch spending more than 500 amount');
    const json = last((await weft(['policy', 'check', approvalFile, '--json'])).stdout);
    expect(json).toMatchObject({ ok: true, name: 'travel-approval', version: '1', digest: approvalDigest, policy: `pack:travel-approval@1#${approvalDigest}`, predicates: [] });
    expect(json.rules[0]).toEqual({ id: 'searches-free', rule: 'read-only-free', says: 'read-only steps are admitted freely' });
  });

  test('a bad pack is refused naming the file and the field; run --policy with it writes nothing', async () => {
    const bad = path.join(root, 'bad-pack.json');
    writeFileSync(bad, JSON.stringify({ pack: 1, name: 'x', version: '1', rules: [{ id: 'cap', rule: 'spend-cap', arg: 'amount', cap: 'lots' }] }));
    const check = await weftHere(['policy', 'check', bad]);
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(new RegExp(`^weft policy check: ${bad.replaceAll('.', '\\.')} is not a valid policy pack: rules\\[0\\]\\.cap: `));
    const json = last((await weft(['policy', 'check', bad, '--json'])).stdout);
    expect(json).toMatchObject({ ok: false, refused: 'policy.invalid_pack' });

    const dir = path.join(root, 'refused');
    const run = await weft(['run', 'travel', intent, '--as-of', asOf, '--dir', dir, '--policy', bad, '--json']);
    expect(run.code).toBe(2);
    expect(last(run.stdout)).toMatchObject({ status: null, refused: 'policy.invalid_pack' });
    expect(run.stderr).toContain(`${bad} is not a valid policy pack: rules[0].cap:`);
    expect(existsSync(path.join(dir, 'invocations'))).toBe(false);
    const missing = await weftHere(['run', 'travel', intent, '--dir', dir, '--policy', path.join(root, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.json is not a valid policy pack: cannot read it \(ENOENT\)/);
    expect(existsSync(path.join(dir, 'invocations'))).toBe(false);
  });
});
