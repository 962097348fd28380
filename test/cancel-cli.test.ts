/**
 * `weft cancel` from the command line (issue 23, "Cancel and deadlines"): a run hibernated by one
 * `weft` process is cancelled by another — refused for another tenant (as if it did not exist, its
 * inbox unwritten), then cancelled, its JSON line and text naming the effects that stay done; `weft
 * ls` lists it cancelled, `weft replay` re-derives it, `weft verify` checks it offline. `weft run
 * --deadline` pins the deadline.
 *
 * `weft run` and every `weft cancel` (refused, done, asked again) are processes: their JSON lines,
 * texts and exit codes are the subject. What the readers then make of the cancelled run — ls's row,
 * replay's status and fingerprint, verify's verdict, log's record — is read in this process by the
 * same code (test/support/command-in-process.ts, runs-here.ts); those commands run end to end in
 * cli-runtime.test.ts and others.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { JournalRecord } from '../journal/records.js';
import { FileStore } from '../stores/file.js';
import { readTravelState } from '../examples/travel/state.js';
import { assertBuilt, weft } from './support/cli.js';
import { weftHere } from './support/command-in-process.js';
import { replayById } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-cancel-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const intent = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, any>;

describe('weft cancel', () => {
  test('cancels a hibernated run from another process; another tenant is refused; ls, replay and verify agree', async () => {
    assertBuilt();
    const dir = path.join(root, 'a');
    const run = await weft(['run', 'travel', intent, '--seed', '4', '--as-of', '2026-06-01T09:00:00Z', '--dir', dir, '--tenant', 'acme', '--hibernate', '--deadline', '2d', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const started = lastJson(run.stdout);
    expect(started.status).toBe('hibernated');
    const store = new FileStore(dir);
    const pin = ((await store.read(started.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(Date.parse(pin.deadline!)).toBeGreaterThan(Date.now());

    const refused = await weft(['cancel', started.id, '--dir', dir, '--tenant', 'globex', '--json']);
    expect(refused.code).not.toBe(0);
    expect(lastJson(refused.stdout)).toMatchObject({ refused: 'invocation.not_found' });
    expect(await store.peekInbox(started.id)).toBeUndefined();

    const cancelled = await weft(['cancel', started.id, '--dir', dir, '--tenant', 'acme', '--reason', 'conference cancelled', '--by', 'ops', '--json']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const line = lastJson(cancelled.stdout);
    expect(line).toMatchObject({ id: started.id, status: 'cancelled', journal: started.journal, by: 'ops', kept: [], alreadyEnded: false });
    const records = await store.read(started.id);
    expect(records.slice(-3).map((r) => r.kind)).toEqual(['cancel.requested', 'invocation.cancelled', 'invocation.sealed']);
    expect(records.at(-1)!.prev).toBe(line.fingerprint);

    // The world: the run hibernated after its searches, so nothing was held or charged, and the
    // cancel undid nothing (only the searches' read-only entries are in the ledger).
    const world = readTravelState(path.join(dir, 'state', 'travel', started.id, 'providers.json'));
    expect({ holds: world.holds, charges: world.charges }).toEqual({ holds: [], charges: [] });
    expect(Object.values(world.ledger).map((e) => e.actuator).sort()).toEqual(['flights.search', 'hotels.search']);
    expect(records.some((r) => r.kind === 'compensation.dispatched')).toBe(false);

    const again = await weft(['cancel', started.id, '--dir', dir]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/status\s+cancelled — cancelled by ops: conference cancelled/);
    expect(again.stdout).toMatch(/stays done\s+nothing/);

    // What the readers make of it: ls, verify and log by their modules in this process, replay as `weft replay ID --dir D` replays.
    const ls = await weftHere(['ls', '--dir', dir]);
    expect(ls.stdout).toMatch(new RegExp(`${started.id}.*cancelled`));
    expect(await replayById(started.id, { dir, generateKey: false })).toMatchObject({ status: 'cancelled', fingerprint: line.fingerprint });
    const verify = await weftHere(['verify', started.journal, '--public-key', started.publicKey]);
    expect(verify.code, verify.stderr).toBe(0);
    const log = await weftHere(['log', started.id, '--dir', dir]);
    expect(log.stdout).toMatch(/cancel\.requested.*by ops/);
  });
});
