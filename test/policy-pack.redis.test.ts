/**
 * Policy packs in the distributed mode: journals, snapshots and blobs in a private Redis, each
 * command a separate process in a folder of its own (nothing shared but Redis and one signing key).
 * `weft run --policy` files the pack in Redis by its digest and rests awaiting approval; `weft
 * approve` from another folder, given no pack, reads it back and completes the run; the world in
 * Redis holds one charge of 780; `weft replay` from a third folder is identical and `weft policy
 * explain` names the rules. Needs `redis-server` on PATH (skipped with a notice elsewhere, fails
 * under CI).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseTravelState } from '../examples/travel/state.js';
import { assertBuilt, repoRoot, weft, type CliResult } from './support/cli.js';
import { fileRedis } from './support/file-redis.js';

/** The file's private Redis (AOF, fsync always); each scenario under its own --redis-prefix. */
const redis = fileRedis();
const available = redis.available;
const root = mkdtempSync(path.join(tmpdir(), 'weft-policy-redis-'));
let folders = 0;
const fresh = (name: string) => mkdtempSync(path.join(root, `${name}-${++folders}-`));
let keyFile = '';
const env = () => ({ WEFT_SIGNING_KEY: keyFile, WEFT_REDIS_URL: '', WEFT_DEBUG: '' });
const show = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const last = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
const intent = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const approvalFile = path.join(repoRoot, 'examples', 'travel', 'policy-approval.json');

beforeAll(async () => {
  if (!available) return;
  assertBuilt();
  const keys = fresh('key');
  const keygen = await weft(['keygen', '--out', keys]);
  if (keygen.code !== 0) throw new Error(`weft keygen: ${show(keygen)}`);
  keyFile = path.join(keys, 'weft.key');
}, 120_000);
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!available)('policy packs on Redis', () => {
  test('run --policy in one folder, approve (no pack) in another, replay and explain in a third', async () => {
    const on = ['--redis', redis.url, '--redis-prefix', 'packs', '--dispatch', 'in-process'];
    const a = fresh('run');
    const run = await weft(['run', 'travel', intent, '--as-of', '2026-06-01T09:00:00Z', '--policy', approvalFile, ...on, '--dir', a, '--json'], env(), a);
    expect(run.code, show(run)).toBe(0);
    const rested = last(run);
    expect(rested).toMatchObject({ status: 'awaiting_approval', reason: 'the epoch spends 780, above the 500 limit' });
    const b = fresh('approve');
    const approved = await weft(['approve', rested.id, '--by', 'alice', ...on, '--dir', b, '--json'], env(), b);
    expect(approved.code, show(approved)).toBe(0);
    const done = last(approved);
    expect(done.status).toBe('completed');
    const world = parseTravelState((await redis.admin.get(`packs:travel:{${rested.id}}:providers`))!);
    expect(world.charges.map((c) => c.amount)).toEqual([780]);
    const c = fresh('replay');
    const replay = await weft(['replay', rested.id, ...on.slice(0, 4), '--dir', c, '--json'], env(), c);
    expect(replay.code, show(replay)).toBe(0);
    expect(last(replay)).toMatchObject({ identical: true, fingerprint: done.fingerprint });
    const explained = await weft(['policy', 'explain', rested.id, ...on.slice(0, 4), '--dir', c, '--json'], env(), c);
    expect(explained.code, show(explained)).toBe(0);
    // Under flag 9 each step's admission at dispatch is recorded too, after its epoch's.
    expect(last(explained).admissions.map((x: any) => `${x.epoch}:${x.subject}${x.step ?? ''}:${x.decision}:${x.rule}`)).toEqual([
      '1:epoch:allow:searches-free',
      '1:step0:allow:searches-free',
      '1:step1:allow:searches-free',
      '2:epoch:require_approval:approve-above-500',
      ...[0, 1, 2, 3, 4].map((i) => `2:step${i}:allow:weft:default`),
      '3:epoch:allow:weft:default',
      '3:step0:allow:weft:default',
      '3:step1:allow:weft:default',
    ]);
  }, 180_000);
});
