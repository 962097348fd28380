/**
 * What a `weft` command does before and after it prints, in the test's own process: the compiled
 * modules the command itself calls (dist/, as ./workspace-run.ts runs them), for tests whose subject
 * is behaviour reachable through them — which key seals and verifies, which tenant may act on an
 * invocation, which domain and model an invocation is opened with — rather than the command's
 * arguments, printed output or exit code (those keep their `weft` child processes, ./cli.ts).
 *
 * - `keyPair(dir)`: the key pair `weft keygen --out DIR` writes (DIR/weft.key, DIR/weft.pub).
 * - `openInvocation(options, act)`: what `weft resume|approve|cancel|fork` open first
 *   (cli/open-invocation.ts `openWorkspaceFor`: the tenant's pin, the domain, the model, the key in
 *   force), then `act` on its runtime as the command does; the runtime is closed after.
 * - `verifyWith(journal, publicKeyFile)`: the verdict and exit code `weft verify JOURNAL --public-key F`
 *   gives (cli/commands/verify.ts); `journal` is a journal file, or a stored journal's bytes.
 * - `storedJournal(url, prefix, id)`: a Redis journal written out as `weft export` writes it.
 * - `replayById(…)`: `weft replay ID` (the domain found as the command finds it), in a workspace or on Redis.
 * - `runOnRedis(…)`: `weft run DOMAIN --redis … --dispatch in-process`, as ./workspace-run.ts does
 *   `weft run DOMAIN --dir D`.
 *
 * A command's own output is not made here: where a test needs what is printed, it runs the command.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fromDist } from './dist.js';

type OpenInvocation = typeof import('../../dist/cli/open-invocation.js');
type WorkspaceModule = typeof import('../../dist/cli/workspace.js');
type Keys = typeof import('../../dist/runtime/keys.js');
type Seal = typeof import('../../dist/journal/seal.js');
type Verify = typeof import('../../dist/cli/commands/verify.js');
type JournalSource = typeof import('../../dist/cli/journal-source.js');
type TenantScope = typeof import('../../dist/cli/tenant-scope.js');
type FileStoreModule = typeof import('../../dist/journal/stores/file.js');
type GivenKey = typeof import('../../dist/cli/given-key.js');
type ListModule = typeof import('../../dist/runtime/list.js');

/** The command's own modules, loaded once (./dist.ts). */
export async function cliModules() {
  await fromDist('journal/sha256-node.js');
  await fromDist('journal/ed25519-node.js');
  return {
    ...(await fromDist<OpenInvocation>('cli/open-invocation.js')),
    ...(await fromDist<WorkspaceModule>('cli/workspace.js')),
    ...(await fromDist<Keys>('runtime/keys.js')),
    ...(await fromDist<Seal>('journal/seal.js')),
    ...(await fromDist<Verify>('cli/commands/verify.js')),
    ...(await fromDist<JournalSource>('cli/journal-source.js')),
    ...(await fromDist<TenantScope>('cli/tenant-scope.js')),
    ...(await fromDist<FileStoreModule>('journal/stores/file.js')),
    ...(await fromDist<GivenKey>('cli/given-key.js')),
    ...(await fromDist<ListModule>('runtime/list.js')),
  };
}

export interface KeyFiles {
  /** DIR/weft.key */
  key: string;
  /** DIR/weft.pub */
  pub: string;
  keyId: string;
}

/** The pair `weft keygen --out DIR` writes: a fresh key from the OS CSPRNG, never over another. */
export async function keyPair(dir: string): Promise<KeyFiles> {
  const { writeKeyPair, signingKeyFromSecret } = await cliModules();
  const key = signingKeyFromSecret(new Uint8Array(randomBytes(32)));
  const { secretFile, publicFile } = await writeKeyPair(dir, key);
  return { key: secretFile, pub: publicFile, keyId: key.keyId };
}

type OpenOptions = Parameters<OpenInvocation['openWorkspaceFor']>[0];
type Workspace = Awaited<ReturnType<OpenInvocation['openWorkspaceFor']>>;

/**
 * Open invocation `id` of workspace `dir` as `weft resume|approve|cancel|fork ID --dir DIR` opens
 * it (`domain`: `--domain`; `signingKeyFile`: `--signing-key`; `tenant`: `--tenant`; `model`: the
 * model flags), then `act` on it; the runtime is closed after, whatever `act` did.
 */
export async function openInvocation<T>(options: Omit<OpenOptions, 'model'> & { model?: OpenOptions['model'] }, act: (ws: Workspace) => Promise<T>): Promise<T> {
  const { openWorkspaceFor } = await cliModules();
  const ws = await openWorkspaceFor({ model: { url: undefined, name: undefined }, ...options, dir: path.resolve(options.dir ?? '.weft') });
  try {
    return await act(ws);
  } finally {
    await ws.runtime.close();
  }
}

/** What `weft verify JOURNAL --public-key FILE` decides: its exit code (0 verified, 1 not intact, 3 sealed by another key) and the lines it prints. */
export async function verifyWith(journal: string | Uint8Array, publicKeyFile: string): Promise<{ code: number; lines: string[] }> {
  const { loadPublicKey, verifyJournalFile, verifyJournalInMemory, verifyExitCode, verifyLines } = await cliModules();
  const key = await loadPublicKey(publicKeyFile);
  const report = typeof journal === 'string' ? await verifyJournalFile(journal, key) : verifyJournalInMemory(journal, key);
  const context = { signature: { by: 'file' as const, file: publicKeyFile, key }, input: 'journal' as const };
  return { code: verifyExitCode(report, context), lines: verifyLines(report, context) };
}

/** Invocation `id`'s journal in the Redis store at `url` under `prefix`, written out as `weft export` and `weft verify <id> --redis` read it (undefined when there is none). */
export async function storedJournal(url: string, prefix: string, id: string): Promise<Uint8Array | undefined> {
  const { RedisStore } = await fromDist<typeof import('../../dist/journal/stores/redis.js')>('journal/stores/redis.js');
  const { storedJournalLines } = await fromDist<typeof import('../../dist/journal/stored-lines.js')>('journal/stored-lines.js');
  const store = await RedisStore.open({ redis: url, prefix });
  try {
    return await storedJournalLines(store, id);
  } finally {
    await store.close();
  }
}

/**
 * `weft replay ID --dir DIR [--domain D] [--redis URL --redis-prefix P]` in this process, as the
 * command's replayById does it (cli/commands/replay.ts): the pin names where to find the domain
 * (`domain`, else the workspace's record of it, else the store's metadata, a built-in or a
 * domains.json mapping: cli/workspace.ts domainForInvocation), then the runtime replays the journal
 * (it checks the genesis and the pin). Rejects with what the command prints as its refusal. Unlike
 * the command it makes no signing key where there is none (a replay seals nothing).
 */
export async function replayById(options: { dir: string; id: string; domain?: string; redis?: { url: string; prefix: string } }) {
  const { pinnedRecord, openWorkspace, domainForInvocation, readInvocationMeta } = await cliModules();
  const { storeChoice, openStore } = await fromDist<typeof import('../../dist/cli/store-choice.js')>('cli/store-choice.js');
  const dir = path.resolve(options.dir);
  const choice = storeChoice(dir, options.redis ? { redis: options.redis.url, 'redis-prefix': options.redis.prefix } : {});
  const store = await openStore(choice);
  try {
    const { pin } = (await pinnedRecord(store, options.id)).body;
    // generateKey: false — a replay seals nothing; the command would make the user's key on Redis (and say so on stderr), this makes none.
    const ws = await openWorkspace({ dir, store, redis: choice.redis, generateKey: false, domain: await domainForInvocation(store, options.id, pin, options.domain, { meta: readInvocationMeta(dir, options.id), dir }) });
    try {
      return await ws.runtime.replay(options.id);
    } finally {
      await ws.runtime.close();
    }
  } finally {
    if (choice.redis) await (store as { close(): Promise<void> }).close().catch(() => undefined);
  }
}

/**
 * `weft run DOMAIN --redis URL --redis-prefix P --dispatch in-process --dir D --signing-key K [--seed N] [--hibernate] --json`
 * in this process, as the command makes it (cli/commands/run.ts): the same domain loader, the
 * workspace's record of the domain beside nothing else (the journal is in Redis), the same defaults
 * (tenant `default`, seed `1`, the domain's intent and asOf). `signingKey` is required: with none,
 * the command makes the user's own key in their home (cli/workspace.ts userKeysDir), which a test
 * must not touch.
 */
export async function runOnRedis(domainSpec: string, options: { dir: string; url: string; prefix: string; signingKey: string; seed?: string; hibernate?: boolean }) {
  const { openWorkspace, readInvocationMeta, writeInvocationMeta } = await cliModules();
  const { loadDomain } = await fromDist<typeof import('../../dist/cli/domain-loader.js')>('cli/domain-loader.js');
  const { Runtime } = await fromDist<typeof import('../../dist/runtime/index.js')>('runtime/index.js');
  const { storeChoice, openStore } = await fromDist<typeof import('../../dist/cli/store-choice.js')>('cli/store-choice.js');
  const loaded = await loadDomain(domainSpec);
  const { intent, asOf } = loaded.domain;
  if (intent === undefined || asOf === undefined) throw new Error(`runOnRedis: domain ${loaded.domain.name} needs an intent and an asOf`);
  const dir = path.resolve(options.dir);
  const choice = storeChoice(dir, { redis: options.url, 'redis-prefix': options.prefix });
  const store = await openStore(choice);
  const start = { tenant: 'default', seed: options.seed ?? '1', asOf };
  const id = Runtime.defaultId(intent, start);
  try {
    const ws = await openWorkspace({ dir, store, redis: choice.redis, dispatch: 'in-process', domain: loaded, signingKeyFile: options.signingKey });
    try {
      if (!readInvocationMeta(ws.dir, id)) writeInvocationMeta(ws.dir, id, { domain: ws.domainRef });
      const handle = await ws.runtime.start(intent, { ...start, id });
      if (options.hibernate) handle.hibernate();
      const result = await handle.done;
      return { id: result.id, status: result.status, fingerprint: result.fingerprint ?? null, publicKey: ws.publicKeyFile };
    } finally {
      await ws.runtime.close();
    }
  } finally {
    await (store as { close(): Promise<void> }).close().catch(() => undefined);
  }
}
