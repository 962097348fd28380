/**
 * `weft serve --tenant T --signing-key FILE` (issue 23, "Tenants"): a deployment runs one serve per
 * tenant, each with the tenant's own key. Two runs of two tenants, each started with its tenant's
 * key, are SIGKILLed mid-run in one store; tenant a's serve finishes a's run and never touches b's
 * (not listed, not resumed, not sealed); b's serve, with b's key, finishes b's. Each journal is
 * sealed by its own tenant's key — and by no other — and verifies with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signingKeyFromSecret } from '../journal/seal.js';
import { writeKeyPair } from '../runtime/keys.js';
import { assertBuilt, weft } from './support/cli.js';
import { spawnWeft, waitFor, type Spawned } from './support/weft-processes.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-serve-tenant-'));
const running: Spawned[] = [];
const keys = { a: path.join(root, 'keys-a'), b: path.join(root, 'keys-b') };
const dir = path.join(root, 'ws');

beforeAll(async () => {
  assertBuilt();
  await writeKeyPair(keys.a, signingKeyFromSecret(new Uint8Array(32).fill(31)));
  await writeKeyPair(keys.b, signingKeyFromSecret(new Uint8Array(32).fill(32)));
});
afterAll(() => {
  for (const p of running) p.signal('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

const secret = (t: 'a' | 'b') => path.join(keys[t], 'weft.key');
const pub = (t: 'a' | 'b') => path.join(keys[t], 'weft.pub');
type Row = { id: string; tenant: string; status: string };
const ls = async () => JSON.parse((await weft(['ls', '--dir', dir, '--json'])).stdout) as Row[];
const stoppedLine = (serve: Spawned, id: string) => new RegExp(`^stopped\\s+${id} (\\w+)`, 'm').exec(serve.stdout())?.[1];

describe('weft serve --tenant, each tenant with its own key', () => {
  test("tenant a's serve finishes a's interrupted run only; b's serve with b's key finishes b's; each journal verifies with its tenant's key alone", async () => {
    // Two runs killed right after their third dispatch was written ahead.
    const ids: Record<'a' | 'b', string> = { a: '', b: '' };
    for (const t of ['a', 'b'] as const) {
      const killed = await weft(['run', 'travel', '--seed', '7', '--tenant', t, '--signing-key', secret(t), '--dir', dir, '--json'], { WEFT_CRASH_AFTER: 'step.dispatched:3' });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
    }
    for (const row of await ls()) ids[row.tenant as 'a' | 'b'] = row.id;
    expect(ids.a).not.toBe('');
    expect(ids.b).not.toBe('');

    const serveA = spawnWeft(['serve', '--domain', 'travel', '--dir', dir, '--tenant', 'a', '--signing-key', secret('a'), '--poll-ms', '200']);
    running.push(serveA);
    expect(await waitFor("a's serve finishing a's run", () => stoppedLine(serveA, ids.a), 90_000)).toBe('completed');
    // A few more polls: b's run is never taken, and never mentioned.
    await waitFor('two more polls of serve a', async () => (serveA.stdout().length > 0 && (await ls()).length === 2 ? true : undefined));
    serveA.signal('SIGTERM');
    await serveA.done;
    expect(serveA.stdout()).not.toContain(ids.b);
    expect(serveA.stderr()).toMatch(/tenant "a" only/);
    const afterA = await ls();
    expect(afterA.find((r) => r.id === ids.a)!.status).toBe('completed');
    expect(afterA.find((r) => r.id === ids.b)!.status).not.toBe('completed');

    const serveB = spawnWeft(['serve', '--domain', 'travel', '--dir', dir, '--tenant', 'b', '--signing-key', secret('b'), '--poll-ms', '200']);
    running.push(serveB);
    expect(await waitFor("b's serve finishing b's run", () => stoppedLine(serveB, ids.b), 90_000)).toBe('completed');
    serveB.signal('SIGTERM');
    await serveB.done;
    expect(serveB.stdout()).not.toContain(ids.a);

    for (const t of ['a', 'b'] as const) {
      const other = t === 'a' ? 'b' : 'a';
      const own = await weft(['verify', ids[t], '--dir', dir, '--public-key', pub(t)]);
      expect(own.code, own.stderr).toBe(0);
      const foreign = await weft(['verify', ids[t], '--dir', dir, '--public-key', pub(other)]);
      expect(foreign.code).not.toBe(0);
    }
  }, 240_000);
});
