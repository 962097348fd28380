/**
 * Invariant 4, by real crashes: the travel example runs in a child process that is SIGKILLed —
 * after each durable journal append in turn (a step's completion is written with the next step's
 * write-ahead record, so a kill point may cover two records), and inside each
 * world-effect actuator after its effect and before its completion is recorded — then resumed.
 * Every run must end with the uninterrupted run's journal (same hashes, same fingerprint) and every
 * effect applied exactly once, though some were dispatched twice.
 *
 * The crash is always a real `weft run` killed by SIGKILL. The resume that follows is `weft resume`
 * in a new process at the first and the last kill point of each kind; at the others it is the same
 * command's code in this process (test/support/runs-here.ts resumeInWorkspace), which shares
 * nothing with the killed process but the files either — a CLI start (0.3–0.45 s of CPU) for each of
 * some 25 resumes proved nothing the two real ones do not. The uninterrupted reference run, which
 * only gives the journal and the kill points to compare with, is made in this process as `weft run`
 * makes it (runInWorkspace, counting the durable appends as WEFT_COUNT_APPENDS does).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { effectCounts } from '../examples/travel/state.js';
import { assertBuilt, pool, weft } from './support/cli.js';
import { resumeInWorkspace, runInWorkspace } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-crash-'));
const refDir = path.join(root, 'reference');
let refHashes: string[] = [];
let refId = '';
let refApplied: string[] = [];
let appends = 0;

const journalHashes = (dir: string, id: string) =>
  readFileSync(path.join(dir, 'invocations', id, 'journal.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { hash: string }).hash);
/** The invocation's own provider world (the travel domain keeps one per invocation). */
const stateFile = (dir: string) => path.join(dir, 'state', 'travel', refId, 'providers.json');
const applied = (dir: string) =>
  Object.entries(effectCounts(stateFile(dir)).byKey)
    .filter(([, e]) => e.applied > 0)
    .map(([k]) => k)
    .sort();

/** A fresh workspace that shares the reference's signing key (so seals are comparable). */
function workspace(name: string): string {
  const dir = path.join(root, name);
  cpSync(path.join(refDir, 'keys'), path.join(dir, 'keys'), { recursive: true });
  return dir;
}

/** Crash a `weft run` with the hook in `env`, then resume it — by `weft resume` in a new process, or in this one. */
async function crashThenResume(dir: string, env: Record<string, string>, resumeBy: 'process' | 'in-process'): Promise<void> {
  const crashed = await weft(['run', 'travel', '--dir', dir, '--json'], env);
  expect(crashed.signal, `expected a SIGKILL with ${JSON.stringify(env)}; stderr: ${crashed.stderr}`).toBe('SIGKILL');
  if (resumeBy === 'process') {
    const resumed = await weft(['resume', refId, '--dir', dir, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const out = JSON.parse(resumed.stdout) as { status: string };
    expect(out.status).toBe('completed');
  } else {
    expect((await resumeInWorkspace(refId, { dir })).status).toBe('completed');
  }
  expect(journalHashes(dir, refId)).toEqual(refHashes);
  const counts = effectCounts(stateFile(dir));
  for (const [key, e] of Object.entries(counts.byKey)) expect(e.applied, `effect ${key} applied ${e.applied} times`).toBeLessThanOrEqual(1);
  expect(applied(dir)).toEqual(refApplied);
}

beforeAll(async () => {
  assertBuilt();
  // The uninterrupted run, counting its durable appends (what WEFT_COUNT_APPENDS prints): made here as `weft run` makes it.
  const out = await runInWorkspace('travel', { dir: refDir, countAppends: true });
  expect(out.status, out.reason ?? '').toBe('completed');
  refId = out.id;
  refHashes = journalHashes(refDir, refId);
  refApplied = applied(refDir);
  appends = out.appends!;
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('crash and resume', () => {
  test('there is one kill point per durable append: records that announce no call travel with the next write-ahead record', () => {
    expect(refHashes.length).toBeGreaterThan(20);
    expect(appends).toBeLessThan(refHashes.length);
    // every world effect has a durable write of its own before it is dispatched
    expect(appends).toBeGreaterThan(refApplied.length);
    expect(refApplied.length).toBeGreaterThan(5);
  });

  test('a kill after each durable append, then a resume in a new process, gives the same journal and applies every effect once', async () => {
    const points = Array.from({ length: appends }, (_, i) => i + 1);
    await pool(
      2,
      points.map((k) => () => crashThenResume(workspace(`append-${k}`), { WEFT_CRASH_AFTER_APPEND: String(k) }, k === 1 || k === appends ? 'process' : 'in-process')),
    );
  }, 600_000);

  test('a kill inside each world effect (applied, completion not recorded) is re-dispatched with the same key and applied once', async () => {
    const effects = refApplied.length;
    await pool(
      2,
      Array.from({ length: effects }, (_, i) => async () => {
        const dir = workspace(`effect-${i + 1}`);
        await crashThenResume(dir, { WEFT_CRASH_IN_EFFECT: String(i + 1) }, i === 0 || i === effects - 1 ? 'process' : 'in-process');
        const twice = Object.values(effectCounts(stateFile(dir)).byKey).filter((e) => e.attempts === 2 && e.applied === 1);
        expect(twice.length, 'the interrupted effect was dispatched again and deduplicated').toBeGreaterThanOrEqual(1);
      }),
    );
  }, 600_000);
});
