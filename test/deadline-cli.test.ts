/**
 * A deadline passing while a run rests, ended by `weft serve` as a process (issue 23, "serve
 * enforces deadlines on resting invocations too"): `weft run --hibernate --deadline 2s` rests after
 * its searches; once the deadline has passed, a `weft serve` started afterwards takes the run up,
 * writes `deadline.passed` before anything acts on it, ends it failed (policy,
 * `invocation.deadline_passed`) and seals it. The world holds nothing (the run had only searched),
 * `weft replay` re-derives the journal to its fingerprint and `weft verify` checks it offline.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { readTravelState } from '../examples/travel/state.js';
import type { JournalRecord } from '../journal/records.js';
import { FileStore } from '../stores/file.js';
import { assertBuilt, weft } from './support/cli.js';
import { spawnWeft, waitFor, type Spawned } from './support/weft-processes.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-deadline-cli-'));
const running: Spawned[] = [];
afterAll(() => {
  for (const p of running) p.signal('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});
const intent = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, any>;

describe('weft serve and a passed deadline', () => {
  test('a run hibernated past its deadline is ended by weft serve: deadline.passed, failed, sealed; it replays and verifies', async () => {
    assertBuilt();
    const dir = path.join(root, 'ws');
    const run = await weft(['run', 'travel', intent, '--seed', '4', '--as-of', '2026-06-01T09:00:00Z', '--dir', dir, '--hibernate', '--deadline', '10s', '--json']);
    // 10 s: the run must come to rest before its deadline, and a CLI run on a loaded CI machine can take several seconds (2 s once ended it failed at start).
    expect(run.code, run.stderr).toBe(0);
    const started = lastJson(run.stdout);
    expect(started.status).toBe('hibernated');
    const store = new FileStore(dir);
    const before = await store.read(started.id);
    const deadline = (before[0] as JournalRecord<'invocation.pinned'>).body.pin.deadline!;
    expect(deadline).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Real time has to pass the pinned deadline; nothing is asserted about how long it takes.
    await waitFor('the pinned deadline to pass', async () => (Date.now() > Date.parse(deadline) ? true : undefined), 30_000);
    expect((await store.read(started.id)).length).toBe(before.length); // nothing acts on a resting run by itself

    const serve = spawnWeft(['serve', '--domain', 'travel', '--dir', dir, '--poll-ms', '200']);
    running.push(serve);
    const stopped = await waitFor('serve ending the run', async () => new RegExp(`^stopped\\s+${started.id} (\\w+)`, 'm').exec(serve.stdout())?.[1], 90_000);
    serve.signal('SIGTERM');
    await serve.done;
    expect(stopped).toBe('failed');
    expect(serve.stdout()).toMatch(new RegExp(`resuming\\s+${started.id} \\(deadline\\)`));

    // The journal: what was there, then the deadline recorded before it acted, the failure, the seal.
    const records = await store.read(started.id);
    expect(records.slice(0, before.length)).toEqual(before);
    expect(records.slice(before.length).map((r) => r.kind)).toEqual(['deadline.passed', 'invocation.failed', 'invocation.sealed']);
    const passed = records[before.length]!.body as { deadline: string; at: string };
    expect(passed.deadline).toBe(deadline);
    expect(Date.parse(passed.at)).toBeGreaterThan(Date.parse(deadline));
    expect(records[before.length + 1]!.body).toMatchObject({ class: 'policy', code: 'invocation.deadline_passed' });
    expect(records.some((r) => r.kind === 'compensation.dispatched')).toBe(false);

    // The world: only the searches ran; nothing is held or charged.
    const world = readTravelState(path.join(dir, 'state', 'travel', started.id, 'providers.json'));
    expect({ holds: world.holds, charges: world.charges }).toEqual({ holds: [], charges: [] });

    const ls = await weft(['ls', '--dir', dir]);
    expect(ls.stdout).toMatch(new RegExp(`${started.id}.*failed`));
    const replay = await weft(['replay', started.id, '--dir', dir, '--json']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(lastJson(replay.stdout)).toMatchObject({ status: 'failed', fingerprint: records.at(-1)!.prev });
    const verify = await weft(['verify', started.journal, '--public-key', started.publicKey]);
    expect(verify.code, verify.stderr).toBe(0);
  }, 180_000);
});
