/**
 * Tenants are isolated (issue 23, defect 3): `resume` and `approve` — through the library and the
 * CLI — act only on an invocation of the tenant they are scoped to. Another tenant's invocation is
 * refused exactly as an id that does not exist, before its inbox is written or its journal moves;
 * a runtime scoped to a tenant starts and lists only that tenant's. (The viewer's scoping by
 * `--tenant-token` is tested in inspect-security.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../journal/stores/file.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createRuntime, type RuntimeOptions } from '../runtime/index.js';
import { travelDomain } from '../examples/travel/domain.js';
import { assertBuilt, weft } from './support/cli.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-tenants-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const key = signingKeyFromSecret(new Uint8Array(32).fill(5));
const strictPolicy = spendApprovalPolicy({ version: 'tenants', limit: 100, amountArg: 'amount' });

describe('through the library', () => {
  const store = new FileStore(path.join(root, 'lib'));
  const runtime = (over: Partial<RuntimeOptions> = {}) =>
    createRuntime({ store, domain: travelDomain, policy: strictPolicy, stateDir: path.join(root, 'lib-state'), signingKey: key, sleep: async () => undefined, ...over });
  let acmeId: string;

  beforeAll(async () => {
    const handle = await runtime().start(travelDomain.intent!, { tenant: 'acme', seed: 1, asOf: travelDomain.asOf! });
    expect((await handle.done).status).toBe('awaiting_approval');
    acmeId = handle.id;
  });

  test("a runtime scoped to another tenant cannot approve, resume or replay acme's invocation, nor see it listed — as if it did not exist", async () => {
    const globex = runtime({ tenant: 'globex' });
    const records = await store.length(acmeId);
    const asMissing = async (run: () => Promise<unknown>, id: string) => {
      const err = (await run().then(
        () => undefined,
        (e: unknown) => e,
      )) as { code?: string; message?: string } | undefined;
      expect(err?.code).toBe('runtime.unknown_invocation');
      return err!.message!.replace(id, '<id>');
    };
    const refusedApprove = await asMissing(() => globex.approve(acmeId, { decision: 'approved', by: 'mallory' }), acmeId);
    const missingApprove = await asMissing(() => globex.approve('inv-does-not-exist', { decision: 'approved', by: 'mallory' }), 'inv-does-not-exist');
    expect(refusedApprove).toBe(missingApprove); // the same words for another tenant's id and for none
    expect(refusedApprove).toMatch(/no invocation <id> of tenant "globex"/);
    await asMissing(() => globex.resume(acmeId), acmeId);
    await asMissing(() => globex.replay(acmeId), acmeId);
    await asMissing(() => runtime().approve(acmeId, { decision: 'approved', by: 'mallory' }, { tenant: 'globex' }), acmeId);
    // Nothing was written: no decision waits in the inbox, the journal did not move.
    expect(await store.peekInbox(acmeId)).toBeUndefined();
    expect(await store.length(acmeId)).toBe(records);
    expect((await globex.list()).map((row) => row.id)).not.toContain(acmeId);
    expect((await runtime().list()).map((row) => row.id)).toContain(acmeId);
  });

  test('a scoped runtime starts only for its tenant: its own by default, another refused', async () => {
    const globex = runtime({ tenant: 'globex' });
    await expect(globex.start(travelDomain.intent!, { tenant: 'acme', seed: 2, asOf: travelDomain.asOf! })).rejects.toMatchObject({ code: 'runtime.tenant_scope' });
    const own = await globex.start(travelDomain.intent!, { seed: 2, asOf: travelDomain.asOf! });
    await own.done;
    expect((await store.read(own.id, 0, 1))[0]!.body).toMatchObject({ tenant: 'globex' });
  });

  test("acme's own scope approves it, and the run completes", async () => {
    const handle = await runtime({ tenant: 'acme' }).approve(acmeId, { decision: 'approved', by: 'ana' });
    expect((await handle.done).status).toBe('completed');
  });
});

describe('through the CLI (--tenant)', () => {
  beforeAll(() => assertBuilt());

  test("resume and approve with another tenant's --tenant are refused as not found, writing nothing; acme's goes on", async () => {
    const dir = path.join(root, 'cli');
    const domain = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')), { version: 'tenants-cli' });
    const started = await weft(['run', domain, '--tenant', 'acme', '--dir', dir, '--json']);
    const run = JSON.parse(started.stdout.trim().split('\n').at(-1)!) as { id: string; status: string };
    expect(run.status).toBe('awaiting_approval');
    const store = new FileStore(dir);
    const records = await store.length(run.id);
    for (const args of [
      ['approve', run.id, '--by', 'mallory', '--tenant', 'globex'],
      ['approve', run.id, '--by', 'mallory', '--tenant', 'globex', '--leave-to-serve'],
      ['resume', run.id, '--tenant', 'globex'],
    ]) {
      const out = await weft([...args, '--domain', domain, '--dir', dir, '--json']);
      expect(out.code, args.join(' ')).toBe(2);
      const line = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { refused: string; reason: string };
      expect(line.refused).toBe('invocation.not_found');
      expect(line.reason).toMatch(new RegExp(`no invocation ${run.id} of tenant "globex"`));
    }
    expect(await store.peekInbox(run.id)).toBeUndefined();
    expect(await store.length(run.id)).toBe(records);
    const approved = await weft(['approve', run.id, '--by', 'ana', '--tenant', 'acme', '--domain', domain, '--dir', dir, '--json']);
    expect(JSON.parse(approved.stdout.trim().split('\n').at(-1)!)).toMatchObject({ id: run.id, status: 'completed' });

    // Reading it: show, export, log, verify and replay with another tenant's --tenant answer exactly
    // what they answer for an id that does not exist; with the owner's, they read it.
    const missing = 'inv-00000000000000000000000000000000';
    for (const command of [['show', '--json'], ['export'], ['log'], ['verify', '--no-signature', '--json'], ['replay', '--json']]) {
      const [name, ...rest] = command;
      const foreign = await weft([name!, run.id, ...rest, '--tenant', 'globex', '--dir', dir]);
      const none = await weft([name!, missing, ...rest, '--tenant', 'globex', '--dir', dir]);
      expect(foreign.code, `${name} ${foreign.stderr}`).not.toBe(0);
      expect({ code: foreign.code, out: foreign.stdout.replaceAll(run.id, '<id>'), err: foreign.stderr.replaceAll(run.id, '<id>') }, name).toEqual({
        code: none.code,
        out: none.stdout.replaceAll(missing, '<id>'),
        err: none.stderr.replaceAll(missing, '<id>'),
      });
      expect(foreign.stdout + foreign.stderr).not.toContain('acme');
      const own = await weft([name!, run.id, ...rest, '--tenant', 'acme', '--dir', dir, ...(name === 'replay' ? ['--domain', domain] : [])]);
      expect(own.code, `${name} as acme: ${own.stderr}`).toBe(0);
    }
  });
});
