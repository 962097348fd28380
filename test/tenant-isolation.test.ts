/**
 * Tenants are isolated (issue 23): one tenant cannot resume, approve, cancel, fork, list, export or
 * read another tenant's invocation — through the library and the CLI (`--tenant`). Another tenant's
 * invocation is refused exactly as an id that does not exist (the same words), and after every
 * refused act the journal's bytes, the inbox and the world are what they were; a runtime scoped to
 * a tenant cannot be widened per call. Each tenant has its own signing key: another tenant's key
 * is refused before anything is written. The owner's approval then books, its journal replays to
 * the run's fingerprint and verifies offline with the owner's public key (and not another's).
 * (The viewer's scoping by `--tenant-token` is tested in inspect-security.)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../journal/stores/file.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createRuntime, type RuntimeOptions } from '../runtime/index.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import { assertBuilt, weft } from './support/cli.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-tenants-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const acmeKey = signingKeyFromSecret(new Uint8Array(32).fill(5));
const globexKey = signingKeyFromSecret(new Uint8Array(32).fill(6));
const strictPolicy = spendApprovalPolicy({ version: 'tenants', limit: 100, amountArg: 'amount' });
const missing = 'inv-00000000000000000000000000000000';

/** A travel world's file as text (null before anything was written to it). */
const worldText = (stateDir: string, id: string): string | null => {
  const file = path.join(stateDir, id, 'providers.json');
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
};

/** What an invocation is on disk — its journal's bytes and records, its inbox, its world — to compare after a refused act. */
async function footprint(store: FileStore, stateDir: string, id: string) {
  return {
    bytes: readFileSync(store.journalPath(id), 'utf8'),
    records: await store.read(id),
    inbox: (await store.peekInbox(id)) ?? null,
    world: worldText(stateDir, id),
  };
}

/** The error a call rejects with (it must reject). */
async function refusal(run: () => Promise<unknown>): Promise<{ code?: string; message?: string }> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the call should have been refused').toBeDefined();
  return err as { code?: string; message?: string };
}

// The kinds of an approved strict-travel run's records after its approval was asked for: the
// booking epoch (five steps), the next epoch (two), the model's goal reached, sealed. Each step's
// admission is recorded before its dispatch (flag 9).
const APPROVED_TAIL = [
  'approval.decided', 'epoch.certified', ...Array(5).fill(['admission.decided', 'step.dispatched', 'step.completed']).flat(), 'epoch.closed',
  'model.requested', 'model.completed', 'state.observed', 'epoch.derived', 'admission.decided', 'epoch.certified', ...Array(2).fill(['admission.decided', 'step.dispatched', 'step.completed']).flat(), 'epoch.closed',
  'model.requested', 'model.completed', 'invocation.completed', 'invocation.sealed',
];

describe('through the library', () => {
  const store = new FileStore(path.join(root, 'lib'));
  const stateDir = path.join(root, 'lib-state');
  const runtime = (over: Partial<RuntimeOptions> = {}) =>
    createRuntime({ store, domain: travelDomain, policy: strictPolicy, stateDir, signingKey: acmeKey, sleep: async () => undefined, ...over });
  let acmeId: string;
  let before: Awaited<ReturnType<typeof footprint>>;

  beforeAll(async () => {
    const handle = await runtime({ tenant: 'acme' }).start(travelDomain.intent!, { seed: 1, asOf: travelDomain.asOf! });
    expect((await handle.done).status).toBe('awaiting_approval');
    acmeId = handle.id;
    before = await footprint(store, stateDir, acmeId);
  });

  test("a runtime scoped to globex cannot approve, resume, cancel, fork, replay, verify or locate acme's invocation — nor widen its scope per call — as if it did not exist; nothing changes", async () => {
    const globex = runtime({ tenant: 'globex', signingKey: globexKey });
    const asMissing = async (run: (id: string) => Promise<unknown>) => {
      const foreign = await refusal(() => run(acmeId));
      const none = await refusal(() => run(missing));
      expect(foreign.code).toBe('runtime.unknown_invocation');
      // The same words for another tenant's id and for none.
      expect(foreign.message!.replace(acmeId, '<id>')).toBe(none.message!.replace(missing, '<id>'));
      expect(foreign.message).not.toContain('acme');
      return foreign.message!.replace(acmeId, '<id>');
    };
    const words = await asMissing((id) => globex.approve(id, { decision: 'approved', by: 'mallory' }));
    expect(words).toMatch(/no invocation <id> of tenant "globex"/);
    for (const act of [
      (id: string) => globex.resume(id),
      (id: string) => globex.cancel(id, { by: 'mallory', waitMs: 0 }),
      (id: string) => globex.fork(id, { atEpoch: 1, waitMs: 0 }),
      (id: string) => globex.replay(id),
      (id: string) => globex.verify(id, publicKeyOf(globexKey)),
      // The per-call tenant cannot change a scoped runtime's scope: refused as unknown, in the scope's words.
      (id: string) => globex.approve(id, { decision: 'approved', by: 'mallory' }, { tenant: 'acme' }),
      (id: string) => globex.resume(id, { tenant: 'acme' }),
      (id: string) => globex.cancel(id, { by: 'mallory', tenant: 'acme', waitMs: 0 }),
      (id: string) => globex.fork(id, { atEpoch: 1, tenant: 'acme', waitMs: 0 }),
    ]) {
      expect(await asMissing(act)).toBe(words);
    }
    // A journal file by path: another tenant's is unknown to a scoped runtime, as a missing file is.
    const file = store.journalPath(acmeId);
    expect((await refusal(() => globex.verify({ journalPath: file }))).code).toBe('runtime.unknown_invocation');
    expect((await refusal(() => globex.replay({ journalPath: file }))).code).toBe('runtime.unknown_invocation');
    expect(globex.journalPath(acmeId)).toBeUndefined();
    expect(runtime({ tenant: 'acme' }).journalPath(acmeId)).toBe(file);
    // An unscoped runtime narrowed per call to globex is refused too.
    expect((await refusal(() => runtime().approve(acmeId, { decision: 'approved', by: 'mallory' }, { tenant: 'globex' }))).code).toBe('runtime.unknown_invocation');
    expect((await refusal(() => runtime().cancel(acmeId, { tenant: 'globex', waitMs: 0 }))).code).toBe('runtime.unknown_invocation');
    // acme's records handed to globex's replay: refused as unknown, as its id is.
    expect((await refusal(() => globex.replay({ records: before.records }))).code).toBe('runtime.unknown_invocation');
    // A start or a fork under acme's id: refused, quoting nothing of acme's invocation.
    const started = await refusal(() => globex.start(travelDomain.intent!, { id: acmeId, seed: 1, asOf: travelDomain.asOf! }));
    expect(started.code).toBe('runtime.id_conflict');
    expect(started.message).not.toContain('acme');
    expect(started.message).not.toContain(travelDomain.intent!.slice(0, 20));
    // Nothing was written: the journal's bytes and records, the inbox, the world.
    expect(await footprint(store, stateDir, acmeId)).toEqual(before);
    expect((await globex.list()).map((row) => row.id)).not.toContain(acmeId);
    expect((await globex.listOpen()).map((row) => row.id)).not.toContain(acmeId);
    expect((await runtime().list()).map((row) => row.id)).toContain(acmeId);
  });

  test("acme's own scope given globex's key is refused before anything is written: approve, resume, cancel", async () => {
    const wrongKey = runtime({ tenant: 'acme', signingKey: globexKey });
    expect((await refusal(() => wrongKey.approve(acmeId, { decision: 'approved', by: 'ana' }))).code).toBe('pin.seal_key');
    expect((await refusal(() => wrongKey.resume(acmeId))).code).toBe('pin.seal_key');
    expect((await refusal(() => wrongKey.cancel(acmeId, { by: 'ana', waitMs: 0 }))).code).toBe('pin.seal_key');
    expect(await footprint(store, stateDir, acmeId)).toEqual(before);
  });

  test('a scoped runtime starts only for its tenant: its own by default, another refused', async () => {
    const globex = runtime({ tenant: 'globex', signingKey: globexKey });
    await expect(globex.start(travelDomain.intent!, { tenant: 'acme', seed: 2, asOf: travelDomain.asOf! })).rejects.toMatchObject({ code: 'runtime.tenant_scope' });
    const own = await globex.start(travelDomain.intent!, { seed: 2, asOf: travelDomain.asOf! });
    await own.done;
    expect((await store.read(own.id, 0, 1))[0]!.body).toMatchObject({ tenant: 'globex' });
  });

  test("acme's own scope approves it: the run completes and books, its journal replays to its fingerprint and verifies with acme's key alone", async () => {
    const acme = runtime({ tenant: 'acme' });
    const handle = await acme.approve(acmeId, { decision: 'approved', by: 'ana' });
    const done = await handle.done;
    expect(done.status).toBe('completed');
    const records = await store.read(acmeId);
    expect(records.slice(0, before.records.length)).toEqual(before.records);
    const after = records.slice(before.records.length).map((r) => r.kind);
    expect(after).toEqual(APPROVED_TAIL);
    const world = readTravelState(path.join(stateDir, acmeId, 'providers.json'));
    expect(world.charges.length).toBeGreaterThan(0);
    expect((await acme.replay(acmeId)).fingerprint).toBe(done.fingerprint);
    expect((await acme.verify({ journalPath: acme.journalPath(acmeId)! }, publicKeyOf(acmeKey))).ok).toBe(true);
    expect((await runtime().verify(acmeId, publicKeyOf(globexKey))).ok).toBe(false);
  });
});

describe('through the CLI (--tenant)', () => {
  beforeAll(() => assertBuilt());

  test("another tenant's --tenant, or its key, is refused writing nothing (journal bytes, inbox, world); acme's own approval books, replays and verifies", async () => {
    const dir = path.join(root, 'cli');
    const keys = path.join(root, 'keys');
    for (const tenant of ['acme', 'globex']) expect((await weft(['keygen', '--out', path.join(keys, tenant)])).code).toBe(0);
    const keyOf = (tenant: string) => path.join(keys, tenant, 'weft.key');
    const pubOf = (tenant: string) => path.join(keys, tenant, 'weft.pub');
    const domain = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')), { version: 'tenants-cli' });
    const stateDir = path.join(dir, 'state', 'strict-travel');
    const started = await weft(['run', domain, '--tenant', 'acme', '--signing-key', keyOf('acme'), '--dir', dir, '--json']);
    const run = JSON.parse(started.stdout.trim().split('\n').at(-1)!) as { id: string; status: string };
    expect(run.status).toBe('awaiting_approval');
    const store = new FileStore(dir);
    const before = await footprint(store, stateDir, run.id);
    const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

    // Acting as globex: refused exactly as a missing id (same JSON line and words), naming nothing of acme's.
    for (const args of [
      ['approve', '--by', 'mallory'],
      ['approve', '--by', 'mallory', '--leave-to-serve'],
      ['resume'],
      ['cancel', '--by', 'mallory', '--wait', '0'],
      ['fork', '--at-epoch', '1', '--wait', '0'],
    ]) {
      const [name, ...rest] = args;
      const common = [...rest, '--tenant', 'globex', '--signing-key', keyOf('globex'), '--domain', domain, '--dir', dir, '--json'];
      const foreign = await weft([name!, run.id, ...common]);
      const none = await weft([name!, missing, ...common]);
      expect(foreign.code, args.join(' ')).toBe(2);
      const line = lastLine(foreign.stdout);
      expect(line.refused, args.join(' ')).toBe('invocation.not_found');
      expect(line.reason).toMatch(new RegExp(`no invocation ${run.id} of tenant "globex"`));
      expect({ code: foreign.code, out: foreign.stdout.replaceAll(run.id, '<id>'), err: foreign.stderr.replaceAll(run.id, '<id>') }, args.join(' ')).toEqual({
        code: none.code,
        out: none.stdout.replaceAll(missing, '<id>'),
        err: none.stderr.replaceAll(missing, '<id>'),
      });
      expect(await footprint(store, stateDir, run.id), args.join(' ')).toEqual(before);
    }

    // As acme, with globex's key: refused (pin.seal_key) before anything is written — also where this process would not seal.
    for (const args of [
      ['approve', '--by', 'ana'],
      ['approve', '--by', 'ana', '--leave-to-serve'],
      ['cancel', '--by', 'ana', '--wait', '0'],
      ['resume'],
    ]) {
      const [name, ...rest] = args;
      const out = await weft([name!, run.id, ...rest, '--tenant', 'acme', '--signing-key', keyOf('globex'), '--domain', domain, '--dir', dir, '--json']);
      expect(out.code, args.join(' ')).not.toBe(0);
      expect(lastLine(out.stdout).refused, `${args.join(' ')}: ${out.stdout}`).toBe('pin.seal_key');
      expect(await footprint(store, stateDir, run.id), args.join(' ')).toEqual(before);
    }

    // Listing: globex's ls does not show acme's; acme's does.
    const ls = async (tenant: string) => (JSON.parse((await weft(['ls', '--tenant', tenant, '--dir', dir, '--json'])).stdout) as { id: string }[]).map((row) => row.id);
    expect(await ls('globex')).not.toContain(run.id);
    expect(await ls('acme')).toContain(run.id);

    // The owner approves with its key: it completes and books.
    const approved = await weft(['approve', run.id, '--by', 'ana', '--tenant', 'acme', '--signing-key', keyOf('acme'), '--domain', domain, '--dir', dir, '--json']);
    const done = lastLine(approved.stdout) as { id: string; status: string; fingerprint: string; journal: string };
    expect(done).toMatchObject({ id: run.id, status: 'completed' });
    const records = await store.read(run.id);
    expect(records.slice(0, before.records.length)).toEqual(before.records);
    const after = records.slice(before.records.length).map((r) => r.kind);
    expect(after).toEqual(APPROVED_TAIL);
    expect(readTravelState(path.join(stateDir, run.id, 'providers.json')).charges.length).toBeGreaterThan(0);
    const replayed = await weft(['replay', run.id, '--tenant', 'acme', '--domain', domain, '--dir', dir, '--json']);
    expect(lastLine(replayed.stdout).fingerprint).toBe(done.fingerprint);
    expect((await weft(['verify', done.journal, '--public-key', pubOf('acme')])).code).toBe(0);
    expect((await weft(['verify', done.journal, '--public-key', pubOf('globex')])).code).not.toBe(0);

    // Reading it: show, export, log, verify and replay with another tenant's --tenant answer exactly
    // what they answer for an id that does not exist; with the owner's, they read it.
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

    // log, verify and replay of a journal file, or of its bundle, with another tenant's --tenant: as a missing file.
    const bundle = path.join(root, 'acme-bundle.json');
    const exported = await weft(['export', run.id, '--tenant', 'acme', '--dir', dir]);
    expect(exported.code).toBe(0);
    writeFileSync(bundle, exported.stdout);
    const nowhere = path.join(root, 'no-such', 'journal.jsonl');
    for (const file of [done.journal, bundle]) {
      for (const command of [['log'], ['verify', '--no-signature', '--json'], ['replay', '--json', '--domain', domain]]) {
        const [name, ...rest] = command;
        const foreign = await weft([name!, file, ...rest, '--tenant', 'globex', '--dir', dir]);
        const none = await weft([name!, nowhere, ...rest, '--tenant', 'globex', '--dir', dir]);
        expect(foreign.code, `${name} ${file}`).not.toBe(0);
        expect({ code: foreign.code, out: foreign.stdout.replaceAll(file, '<file>'), err: foreign.stderr.replaceAll(file, '<file>') }, `${name} ${file}`).toEqual({
          code: none.code,
          out: none.stdout.replaceAll(nowhere, '<file>'),
          err: none.stderr.replaceAll(nowhere, '<file>'),
        });
        const own = await weft([name!, file, ...rest, '--tenant', 'acme', '--dir', dir]);
        expect(own.code, `${name} ${file} as acme: ${own.stderr}`).toBe(0);
      }
    }
  });
});
