/**
 * Tenants are isolated (issue 23): one tenant cannot resume, approve, cancel, fork, list, export or
 * read another tenant's invocation — through the library and the CLI (`--tenant`). Another tenant's
 * invocation is refused exactly as an id that does not exist (the same words), and after every
 * refused act the journal's bytes, the inbox and the world are what they were; a runtime scoped to
 * a tenant cannot be widened per call. Each tenant has its own signing key: another tenant's key
 * is refused before anything is written. The owner's approval then books, its journal replays to
 * the run's fingerprint and verifies offline with the owner's public key (and not another's).
 * (The viewer's scoping by `--tenant-token` is tested in inspect-security.)
 *
 * The CLI's part works on one run of acme's made in-process (test/support/runs-here.ts). What
 * each command asks before acting — the pin resume/approve/cancel/fork/replay open with --tenant,
 * show's and export's check, the source log and verify read, the key it was given — is compared
 * with a missing id in-process, on the compiled modules the command runs
 * (test/support/runs-here.ts, journals-here.ts); each command then runs once as a process with another
 * tenant's --tenant (approve, show and log beside a missing id, output for output), for what it
 * prints and its exit code, and the owner's approve, export and replay run end to end.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createRuntime, type RuntimeOptions } from '../runtime/index.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import { assertBuilt, weft } from './support/cli.js';
import { commandModules } from './support/commands-here.js';
import { keyPair, verifyJournal } from './support/journals-here.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { openInvocation, runInWorkspace } from './support/runs-here.js';

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
      expect(foreign.code).toBe('invocation.not_found');
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
    expect((await refusal(() => globex.verify({ journalPath: file }))).code).toBe('invocation.not_found');
    expect((await refusal(() => globex.replay({ journalPath: file }))).code).toBe('invocation.not_found');
    expect(globex.journalPath(acmeId)).toBeUndefined();
    expect(runtime({ tenant: 'acme' }).journalPath(acmeId)).toBe(file);
    // An unscoped runtime narrowed per call to globex is refused too.
    expect((await refusal(() => runtime().approve(acmeId, { decision: 'approved', by: 'mallory' }, { tenant: 'globex' }))).code).toBe('invocation.not_found');
    expect((await refusal(() => runtime().cancel(acmeId, { tenant: 'globex', waitMs: 0 }))).code).toBe('invocation.not_found');
    // acme's records handed to globex's replay: refused as unknown, as its id is.
    expect((await refusal(() => globex.replay({ records: before.records }))).code).toBe('invocation.not_found');
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
  // One run of acme's, awaiting approval, made once for the file in this process as
  // `weft run DOMAIN --tenant acme --signing-key K --dir D --json` makes it (support/runs-here.ts);
  // the tenants' keys as `weft keygen --out` writes them (support/journals-here.ts). What each command
  // asks before it acts is checked in-process on the modules it runs; each command then runs once with
  // another tenant's --tenant, for what it prints and its exit code.
  const dir = path.join(root, 'cli');
  const keys = path.join(root, 'keys');
  const keyOf = (tenant: string) => path.join(keys, tenant, 'weft.key');
  const pubOf = (tenant: string) => path.join(keys, tenant, 'weft.pub');
  const stateDir = path.join(dir, 'state', 'strict-travel');
  const store = new FileStore(dir);
  const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  const same = (a: { code: number | null; stdout: string; stderr: string }, aId: string, b: { code: number | null; stdout: string; stderr: string }, bId: string) => {
    const as = (r: typeof a, x: string) => ({ code: r.code, out: r.stdout.replaceAll(x, '<id>'), err: r.stderr.replaceAll(x, '<id>') });
    return [as(a, aId), as(b, bId)] as const;
  };
  let domain: string;
  let id: string;
  let before: Awaited<ReturnType<typeof footprint>>;
  /** What a missing id gets from the source log and verify read (cli/journal-source.ts). */
  let missingSource: string;

  beforeAll(async () => {
    assertBuilt();
    for (const tenant of ['acme', 'globex']) await keyPair(path.join(keys, tenant));
    domain = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')), { version: 'tenants-cli' });
    const run = await runInWorkspace(domain, { dir, tenant: 'acme', signingKey: keyOf('acme') });
    expect(run.status).toBe('awaiting_approval');
    id = run.id;
    before = await footprint(store, stateDir, id);
    const m = await commandModules();
    missingSource = (await refusal(() => m.journalSource(missing, { dir, tenant: 'globex' }))).message!;
  });

  test("what each command asks first (in-process): another tenant's id is refused exactly as a missing one — the pin resume, approve, cancel, fork and replay open, show's and export's check, log's and verify's source; acme's own scope with globex's key is refused (pin.seal_key); nothing is written", async () => {
    const m = await commandModules();
    const dstore = new m.FileStore(dir);
    const asMissing = async (run: (target: string) => Promise<unknown>) => {
      const foreign = await refusal(() => run(id));
      const none = await refusal(() => run(missing));
      expect(foreign.message!.replaceAll(id, '<id>')).toBe(none.message!.replaceAll(missing, '<id>'));
      expect(foreign.message).not.toContain('acme');
      return { foreign, none };
    };
    // resume, approve, cancel and fork open the invocation with --tenant first (cli/open-invocation.ts).
    const opened = await asMissing((target) => openInvocation({ dir, id: target, domain, signingKeyFile: keyOf('globex'), tenant: 'globex' }, async () => undefined));
    expect(opened.foreign.code).toBe('invocation.not_found');
    expect(opened.foreign.message).toMatch(new RegExp(`no invocation ${id} of tenant "globex"`));
    // replay by id reads the same pin (runtime/open.ts pinnedRecord).
    expect((await asMissing((target) => m.pinnedRecord(dstore, target, 'globex'))).foreign.code).toBe('invocation.not_found');
    // show and export: another tenant's invocation is not there, as a missing one is not; the owner's is.
    expect(await m.isTenants(dstore, id, 'globex')).toBe(false);
    expect(await m.isTenants(dstore, missing, 'globex')).toBe(false);
    expect(await m.isTenants(dstore, id, 'acme')).toBe(true);
    // log and verify by id (cli/journal-source.ts): the missing id's words; the owner's journal is read.
    expect((await asMissing((target) => m.journalSource(target, { dir, tenant: 'globex' }))).none.message).toBe(missingSource);
    expect(await m.journalSource(id, { dir, tenant: 'acme' })).toMatchObject({ file: store.journalPath(id) });
    // ls --tenant: only the tenant's own.
    expect((await m.listInvocations(dstore, { tenant: 'globex' })).map((row) => row.id)).not.toContain(id);
    expect((await m.listInvocations(dstore, { tenant: 'acme' })).map((row) => row.id)).toContain(id);
    expect(await footprint(store, stateDir, id)).toEqual(before);

    // As acme, with globex's key: approve, resume and cancel refused by the runtime, and the key a command
    // was given checked where this process would not seal (approve --leave-to-serve, cancel of a held run).
    type Ws = Parameters<Parameters<typeof openInvocation>[1]>[0];
    for (const [what, act] of [
      ['approve', (ws: Ws) => ws.runtime.approve(id, { decision: 'approved', by: 'ana' }, { tenant: 'acme' })],
      ['resume', (ws: Ws) => ws.runtime.resume(id, { tenant: 'acme' })],
      ['cancel', (ws: Ws) => ws.runtime.cancel(id, { by: 'ana', tenant: 'acme', waitMs: 0 })],
      ['approve --leave-to-serve', (ws: Ws) => m.refuseGivenOtherKey(ws.store, id, 'approve', keyOf('globex'))],
      ['cancel (a held run)', (ws: Ws) => m.refuseGivenOtherKey(ws.store, id, 'cancel', keyOf('globex'))],
    ] as const) {
      const err = await refusal(() => openInvocation({ dir, id, domain, signingKeyFile: keyOf('globex'), tenant: 'acme' }, act as (ws: Ws) => Promise<unknown>));
      expect(err.code, what).toBe('pin.seal_key');
      expect(await footprint(store, stateDir, id), what).toEqual(before);
    }
  });

  test("another tenant's --tenant, or its key, is refused by each command writing nothing (journal bytes, inbox, world), in the words of a missing id", async () => {
    // approve as globex: exactly what a missing id gets (the same JSON line and words), naming nothing of acme's.
    const common = (rest: string[]) => [...rest, '--tenant', 'globex', '--signing-key', keyOf('globex'), '--domain', domain, '--dir', dir, '--json'];
    const foreign = await weft(['approve', id, ...common(['--by', 'mallory'])]);
    const none = await weft(['approve', missing, ...common(['--by', 'mallory'])]);
    expect(foreign.code).toBe(2);
    expect(lastLine(foreign.stdout).refused).toBe('invocation.not_found');
    expect(lastLine(foreign.stdout).reason).toMatch(new RegExp(`no invocation ${id} of tenant "globex"`));
    const [f, n] = same(foreign, id, none, missing);
    expect(f).toEqual(n);
    expect(await footprint(store, stateDir, id)).toEqual(before);
    const missingReason = String(lastLine(none.stdout).reason);

    // resume, cancel, fork and replay as globex: refused as not found, in the words approve printed for a missing id (what they open is compared with a missing id in-process above).
    for (const args of [['resume'], ['cancel', '--by', 'mallory', '--wait', '0'], ['fork', '--at-epoch', '1', '--wait', '0'], ['replay']]) {
      const [name, ...rest] = args;
      const out = await weft(name === 'replay' ? ['replay', id, '--tenant', 'globex', '--dir', dir, '--json'] : [name!, id, ...common(rest)]);
      expect(out.code, args.join(' ')).toBe(2);
      const line = lastLine(out.stdout);
      expect(line.refused, args.join(' ')).toBe('invocation.not_found');
      expect(String(line.reason).replaceAll(id, '<id>'), args.join(' ')).toContain(missingReason.replaceAll(missing, '<id>'));
      expect(out.stdout + out.stderr, args.join(' ')).not.toContain('acme');
      expect(await footprint(store, stateDir, id), args.join(' ')).toEqual(before);
    }

    // As acme, with globex's key, leaving the decision to serve (this process would not seal): refused before anything is written.
    const leave = await weft(['approve', id, '--by', 'ana', '--leave-to-serve', '--tenant', 'acme', '--signing-key', keyOf('globex'), '--domain', domain, '--dir', dir, '--json']);
    expect(leave.code).not.toBe(0);
    expect(lastLine(leave.stdout).refused, leave.stdout).toBe('pin.seal_key');
    expect(await footprint(store, stateDir, id)).toEqual(before);

    // Listing: globex's ls does not show acme's (acme's own does: in-process above).
    const ls = await weft(['ls', '--tenant', 'globex', '--dir', dir, '--json']);
    expect(ls.code, ls.stderr).toBe(0);
    expect((JSON.parse(ls.stdout) as { id: string }[]).map((row) => row.id)).not.toContain(id);
  });

  test("acme's own approval books, replays and verifies with acme's key alone; show, export, log and verify by id, and log, verify and replay of a file, with globex's --tenant answer what they answer for an id or a file that is not there", async () => {
    // The owner approves with its key: it completes and books.
    const approved = await weft(['approve', id, '--by', 'ana', '--tenant', 'acme', '--signing-key', keyOf('acme'), '--domain', domain, '--dir', dir, '--json']);
    const done = lastLine(approved.stdout) as { id: string; status: string; fingerprint: string; journal: string };
    expect(done).toMatchObject({ id, status: 'completed' });
    const records = await store.read(id);
    expect(records.slice(0, before.records.length)).toEqual(before.records);
    expect(records.slice(before.records.length).map((r) => r.kind)).toEqual(APPROVED_TAIL);
    expect(readTravelState(path.join(stateDir, id, 'providers.json')).charges.length).toBeGreaterThan(0);
    // Sealed by acme's key: `weft verify --public-key` passes with acme's, not with globex's (exit 3).
    expect((await verifyJournal(done.journal, { publicKey: pubOf('acme') })).code).toBe(0);
    expect((await verifyJournal(done.journal, { publicKey: pubOf('globex') })).code).toBe(3);

    // show: with globex's --tenant exactly what a missing id gets.
    const showForeign = await weft(['show', id, '--json', '--tenant', 'globex', '--dir', dir]);
    const showNone = await weft(['show', missing, '--json', '--tenant', 'globex', '--dir', dir]);
    expect(showForeign.code, showForeign.stderr).not.toBe(0);
    const [sf, sn] = same(showForeign, id, showNone, missing);
    expect(sf).toEqual(sn);
    expect(showForeign.stdout + showForeign.stderr).not.toContain('acme');
    // export, log and verify by id with globex's: refused in a missing id's words (compared with a missing id in-process above; replay: before the approval).
    for (const [command, words] of [
      [['export'], `no invocation <id> in ${dir}`],
      [['log'], missingSource],
      [['verify', '--no-signature', '--json'], missingSource],
    ] as const) {
      const [name, ...rest] = command;
      const out = await weft([name!, id, ...rest, '--tenant', 'globex', '--dir', dir]);
      expect(out.code, `${name} ${out.stderr}`).not.toBe(0);
      expect((out.stdout + out.stderr).replaceAll(id, '<id>'), name).toContain(words.replaceAll(missing, '<id>'));
      expect(out.stdout + out.stderr, name).not.toContain('acme');
    }
    // With acme's: export writes its bundle, replay reproduces the run's fingerprint.
    const exported = await weft(['export', id, '--tenant', 'acme', '--dir', dir]);
    expect(exported.code, exported.stderr).toBe(0);
    const bundle = path.join(root, 'acme-bundle.json');
    writeFileSync(bundle, exported.stdout);
    const replayed = await weft(['replay', id, '--tenant', 'acme', '--domain', domain, '--dir', dir, '--json']);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(lastLine(replayed.stdout).fingerprint).toBe(done.fingerprint);

    // A journal file, or its bundle, with another tenant's --tenant: as a missing file. In-process, what log and
    // verify read (cli/journal-source.ts) and the tenant replay asks of a file (cli/tenant-scope.ts); then each command once.
    const m = await commandModules();
    const nowhere = path.join(root, 'no-such', 'journal.jsonl');
    const missingFile = (await refusal(() => m.journalSource(nowhere, { dir, tenant: 'globex' }))).message!;
    for (const file of [done.journal, bundle]) {
      const foreign = await refusal(() => m.journalSource(file, { dir, tenant: 'globex' }));
      expect(foreign.message!.replaceAll(file, '<file>'), file).toBe(missingFile.replaceAll(nowhere, '<file>'));
      expect(await m.journalSource(file, { dir, tenant: 'acme' }), file).toMatchObject({ file });
      expect(m.tenantOfFile(file), file).toBe('acme');
    }
    const logForeign = await weft(['log', done.journal, '--tenant', 'globex', '--dir', dir]);
    const logNone = await weft(['log', nowhere, '--tenant', 'globex', '--dir', dir]);
    expect(logForeign.code).not.toBe(0);
    const [lf, ln] = same(logForeign, done.journal, logNone, nowhere);
    expect(lf).toEqual(ln);
    for (const command of [['verify', '--no-signature', '--json'], ['replay', '--json', '--domain', domain]]) {
      const [name, ...rest] = command;
      const out = await weft([name!, bundle, ...rest, '--tenant', 'globex', '--dir', dir]);
      expect(out.code, `${name} ${out.stdout} ${out.stderr}`).not.toBe(0);
      const said = (out.stdout + out.stderr).replaceAll(bundle, '<file>');
      expect(said, name).not.toContain('acme');
      // verify: the missing file's words; replay: its whole answer for a file that is not there.
      if (name === 'verify') expect(said).toContain(missingFile.replaceAll(nowhere, '<file>'));
      else {
        const none = await weft([name!, nowhere, ...rest, '--tenant', 'globex', '--dir', dir]);
        expect(said).toBe((none.stdout + none.stderr).replaceAll(nowhere, '<file>'));
      }
    }
  });
});
