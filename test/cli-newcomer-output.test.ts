/**
 * What a newcomer reads when something does not go as hoped says why and what to do:
 * - the offline scripted model, asked what it has no reply for, says what it answers (the travel
 *   demo's sentence pattern and its cities) and names `--model-url`;
 * - `weft run` and `weft show` print why a gap-path epoch failed, from the journal ("no method
 *   covers find_options(me, berlin, 3)"), not only the model's refusal;
 * - a signing key file that is not there points at `weft keygen`;
 * - `weft resume` of a run awaiting approval, with no decision to record, says so with the approve
 *   command (it used to exit 0 printing nothing, or wait for ever on Redis);
 * - `weft approve --leave-to-serve` says the decision waits in the inbox for `weft serve`;
 * - `weft run --json` in the Redis mode prints a `journal` that `weft verify` reads (no null).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { parseRedisJournalRef, redisJournalRef } from '../cli/journal-ref.js';
import { loadSigningKey } from '../runtime/keys.js';
import { TravelScriptedModel } from '../examples/travel/transfer-script.js';
import { travelTranscript } from '../examples/travel/transcript.js';
import type { ModelRequest } from '../actors/model/model.js';
import { assertBuilt, repoRoot, weft } from './support/cli.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-newcomer-'));
const ENV = { WEFT_REDIS_URL: '', WEFT_SIGNING_KEY: '', WEFT_DEBUG: '', WEFT_HOME: path.join(root, 'home') };
beforeAll(() => assertBuilt());
afterAll(() => rmSync(root, { recursive: true, force: true }));

const BERLIN = 'Take me to Berlin for the conference on the 3rd, under 900 EUR, and book me a taxi from the airport';

describe('messages', () => {
  test('the scripted model without a reply says what it answers and names --model-url', async () => {
    const model = new TravelScriptedModel(travelTranscript);
    const request = { purpose: 'parse', epoch: 1, intent: 'Take me to Berlin', outcomes: [] } as unknown as ModelRequest;
    const err = (await model.complete(request).catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe('model.no_scripted_reply');
    expect(err.message).toMatch(/^the offline scripted model scripted:travel-demo has no reply for this request: it answers only .*Take me to <City> for the <event>/);
    expect(err.message).toContain('Lisbon (12th), Porto (20th) and Madrid (25th)');
    // The way on comes before the request's details, so a reason cut short still shows it.
    expect(err.message.indexOf('--model-url URL --model NAME')).toBeLessThan(err.message.indexOf('intent "Take me to Berlin"'));
  });

  test('a signing key file that is not there points at weft keygen', async () => {
    const file = path.join(root, 'keys', 'ops.key');
    await expect(loadSigningKey(file)).rejects.toThrow(`key file ${file}: no such file: make a key pair with \`weft keygen --out ${path.dirname(file)}\``);
  });

  test('a Redis journal reference round-trips, without a password, and takes one from WEFT_REDIS_URL for the same server', () => {
    expect(redisJournalRef('redis://127.0.0.1:6393', 'weft', 'inv-1')).toBe('redis://127.0.0.1:6393/0#inv-1');
    const ref = redisJournalRef('redis://:pw@h:7000/2', 'p 1', 'inv-1');
    expect(ref).toBe('redis://h:7000/2?prefix=p%201#inv-1');
    expect(parseRedisJournalRef(ref, undefined)).toEqual({ url: 'redis://h:7000/2', prefix: 'p 1', id: 'inv-1' });
    expect(parseRedisJournalRef(ref, 'redis://:pw@h:7000/2')).toEqual({ url: 'redis://:pw@h:7000/2', prefix: 'p 1', id: 'inv-1' });
    expect(parseRedisJournalRef('./journal.jsonl', undefined)).toBeUndefined();
  });
});

describe('the CLI', () => {
  test('run and show print why a gap-path epoch failed, from the journal', async () => {
    const dir = path.join(root, 'berlin');
    const run = await weft(['run', 'travel', BERLIN, '--dir', dir], ENV);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^why +the gap path: no method covers find_options\(me, berlin, 3\)/m);
    const id = /^invocation +(\S+)/m.exec(run.stdout)![1]!;
    const show = await weft(['show', id, '--dir', dir], ENV);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^ {2}gap path: no method covers find_options\(me, berlin, 3\)/m);
  });

  test('resume of a run awaiting approval says so; approve --leave-to-serve says the decision waits for weft serve', async () => {
    const dir = path.join(root, 'leave');
    const run = await weft(['run', 'travel', '--policy', 'examples/travel/policy-approval.json', '--dir', dir, '--json'], ENV, repoRoot);
    const { id, status } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { id: string; status: string };
    expect(status).toBe('awaiting_approval');
    // Resumed with no decision to record: it says it waits, with the approve command — it neither exits mute nor waits for ever.
    const resumed = await weft(['resume', id, '--dir', dir], ENV);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^status +awaiting_approval/m);
    expect(resumed.stdout).toMatch(new RegExp(`^approve with: weft approve ${id} --by \\S+ --dir `, 'm'));
    const left = await weft(['approve', id, '--by', 'ana', '--leave-to-serve', '--dir', dir], ENV);
    expect(left.code, left.stderr).toBe(0);
    expect(left.stdout).toContain("the decision waits in the invocation's inbox for weft serve to act on it");
    expect(left.stdout).toContain(`weft resume ${id} --dir ${dir}`);
    expect(left.stdout).not.toContain('approve with:');
  });
});

const available = requireRedis();
describe.runIf(available || process.env.CI === 'true')('run --json on Redis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => server?.stop());

  test('its journal is a reference weft verify reads, with the public key it printed', async () => {
    const run = await weft(['run', 'travel', '--redis', server.url, '--redis-prefix', 'ref', '--json'], ENV);
    expect(run.code, run.stderr).toBe(0);
    const line = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { id: string; journal: string | null; publicKey: string };
    expect(line.journal).toBe(`${server.url}?prefix=ref#${line.id}`);
    const verified = await weft(['verify', line.journal!, '--public-key', line.publicKey], ENV);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toContain(`verified: `);
  });
});
