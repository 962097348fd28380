/**
 * Ctrl-C stops a run that never waits (issue 30, defect 6). Plain travel on the embedded file store
 * with the in-process dispatcher and the scripted model has no slow actuator: appends are
 * synchronous writes and everything else is promises, so a run that never yielded to the event loop
 * never ran its SIGINT handler and printed `completed`, exit 0. The runtime now yields at every
 * durable boundary (runtime/recorder.ts), so:
 *
 * - a SIGINT raised at a chosen append (cli/faults.ts WEFT_INTERRUPT_AFTER, the same on every
 *   machine) stops the run: exit 130, `interrupted (SIGINT) — resume with: …`, no `completed`;
 * - a user's Ctrl-C — SIGINT to the process group, again and again, from its `pinned` line on —
 *   does the same;
 *
 * and in both the journal verifies, unsealed; the printed resume completes it with the fingerprint
 * of an uninterrupted run of the same seed; and the world holds each booking, hold and charge once,
 * exactly as the uninterrupted run left its own.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { parseTravelState, type TravelState } from '../examples/travel/state.js';
import { verifyRecords } from '../journal/reader.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { writeKeyPair } from '../runtime/keys.js';
import { assertBuilt, weft, weftBin, type CliResult } from './support/cli.js';
import { spawnNode, waitFor } from './support/weft-processes.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-interrupt-travel-'));
const keys = path.join(root, 'keys');
await writeKeyPair(keys, signingKeyFromSecret(new Uint8Array(32).fill(30)));
const ENV = { WEFT_REDIS_URL: '', WEFT_SIGNING_KEY: path.join(keys, 'weft.key'), WEFT_DEBUG: '', WEFT_INTERRUPT_AFTER: '' };
const SEED = 'int1';
const show = (r: CliResult) => `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const RESUME_LINE = /^interrupted \(SIGINT\) — resume with: weft resume (inv-\S+) --dir (\S+)$/m;

/** The uninterrupted run of the same seed: its fingerprint and its world. */
let whole: { id: string; fingerprint: string; world: TravelState };
beforeAll(async () => {
  assertBuilt();
  const dir = path.join(root, 'whole');
  const run = await weft(['run', 'travel', '--dir', dir, '--seed', SEED, '--json'], ENV, root);
  if (run.code !== 0) throw new Error(`the uninterrupted run: ${show(run)}`);
  const line = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { id: string; fingerprint: string };
  whole = { id: line.id, fingerprint: line.fingerprint, world: worldOf(dir, line.id) };
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function worldOf(dir: string, id: string): TravelState {
  return parseTravelState(readFileSync(path.join(dir, 'state', 'travel', id, 'providers.json'), 'utf8'));
}

function journalOf(dir: string, id: string): Array<{ kind: string; body: any }> {
  return readFileSync(path.join(dir, 'invocations', id, 'journal.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

/** What an interrupted run must leave: exit 130, the resume line, a journal that verifies unsealed, and a resume that completes it as if never interrupted. */
async function expectInterruptedThenResumed(stopped: CliResult, dir: string): Promise<void> {
  expect(stopped.code, show(stopped)).toBe(130);
  const [, id, where] = RESUME_LINE.exec(stopped.stderr) ?? [];
  expect(id, show(stopped)).toBe(whole.id);
  expect(where).toBe(dir);
  expect(stopped.stdout).not.toMatch(/^(completed|sealed) /m);
  const cut = journalOf(dir, id!);
  expect(cut.map((r) => r.kind)).not.toContain('invocation.sealed');
  expect(cut.map((r) => r.kind)).not.toContain('invocation.completed');
  // The journal as the signal left it: intact (every record chained and valid), not sealed.
  const report = verifyRecords(cut);
  expect(report.error?.message).toBeUndefined();
  expect(report).toMatchObject({ ok: true, sealed: false });

  const resumed = await weft(['resume', id!, '--dir', dir, '--json'], ENV, root);
  expect(resumed.code, show(resumed)).toBe(0);
  expect(JSON.parse(resumed.stdout.trim().split('\n').at(-1)!)).toMatchObject({ status: 'completed', fingerprint: whole.fingerprint });
  const journal = path.join(dir, 'invocations', id!, 'journal.jsonl');
  const verified = await weft(['verify', journal, '--public-key', path.join(keys, 'weft.pub'), '--json'], ENV, root);
  expect(verified.code, show(verified)).toBe(0);
  // Every effect once: the world is the one the uninterrupted run left.
  const world = worldOf(dir, id!);
  expect(world.charges).toEqual(whole.world.charges);
  expect(world.bookings).toEqual(whole.world.bookings);
  expect(world.holds).toEqual(whole.world.holds);
  expect(world.messages).toEqual(whole.world.messages);
  expect(world.charges.map((c) => c.amount)).toEqual([780]);
}

test('a SIGINT raised right after the third dispatch is written stops the run: exit 130, resumable to the same fingerprint, every effect once', async () => {
  const dir = path.join(root, 'at-dispatch');
  const run = spawnNode(weftBin, ['run', 'travel', '--dir', dir, '--seed', SEED], { ...ENV, WEFT_INTERRUPT_AFTER: 'step.dispatched:3' }, root);
  const stopped = await run.done;
  // It stopped soon after the signal, in the epoch it came in (the third dispatch is epoch 2's first step).
  expect(journalOf(dir, whole.id).filter((r) => r.kind === 'epoch.closed'), show(stopped)).toHaveLength(1);
  await expectInterruptedThenResumed(stopped, dir);
}, 180_000);

test("Ctrl-C on the terminal — SIGINT to the process group, again and again, from the 'pinned' line on — stops a plain travel run", async () => {
  const dir = path.join(root, 'ctrl-c');
  const run = spawnNode(weftBin, ['run', 'travel', '--dir', dir, '--seed', SEED], ENV, root);
  await waitFor('the pinned line', () => /^pinned /m.test(run.stdout()) || run.child.exitCode !== null, 60_000, 1);
  // As a terminal sends it: to the whole process group (spawnTracked starts each child as its own group), until it is gone.
  const press = () => {
    try {
      process.kill(-run.pid, 'SIGINT');
    } catch {
      /* gone */
    }
  };
  press();
  const again = setInterval(press, 50);
  const stopped = await run.done.finally(() => clearInterval(again));
  await expectInterruptedThenResumed(stopped, dir);
}, 180_000);
