/**
 * Regression: a BullMQ dispatch that looks at its job directly (besides the event stream) must
 * read the job's state before its data — else a job finishing between the two reads shows its
 * empty return value, and a success is recorded as a permanent failure. 400 jobs that all succeed,
 * looked at every 2 ms: none may be answered as a failure (test/support/bullmq-lookup-race-repro.mjs).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, repoRoot, runNode } from './support/cli.js';
import { redisAvailable, startRedis } from './support/redis-server.js';

const available = redisAvailable();
if (!available && process.env.CI !== 'true') console.warn('\n*** redis-server is not installed: the BullMQ look-up race test is SKIPPED ***\n');

(available || process.env.CI === 'true' ? describe : describe.skip)('BullMQ dispatch looks at a finishing job safely', () => {
  let server: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => {
    assertBuilt();
    server = await startRedis({ aof: false });
  });
  afterAll(async () => server?.stop());

  test('400 successful jobs, re-checked every 2 ms: 0 answered as failures', async () => {
    const r = await runNode(path.join(repoRoot, 'test', 'support', 'bullmq-lookup-race-repro.mjs'), [server.url]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/answered 0 as failures/);
  });
});
