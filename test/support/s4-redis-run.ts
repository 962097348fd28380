/**
 * `weft run|resume|replay … --redis URL --redis-prefix P [--dispatch …] --json` made in the test's own
 * process, exactly as the commands make them: the same store choice and durability check
 * (cli/store-choice.ts), the same dispatch choice (`auto` asks the domain's queue for workers), the
 * same workspace (the signing key the command would pick: `signingKey` as --signing-key, else
 * WEFT_SIGNING_KEY, else the user's key under WEFT_HOME), the same metadata beside it — and the same
 * JSON line back (`journal: null`: a Redis store has no journal file).
 *
 * For the distributed-mode tests whose subject is the workers (their jobs, stalls, refusals, logs),
 * serve, or the viewer: the run that drives them is a fixture there, and a `weft` start costs
 * 0.3–0.5 s of CPU (several seconds on a loaded machine). With `dispatch: 'bullmq'` the effects still
 * run on the `weft worker` processes; only the runtime is in this process. Every command keeps its
 * own end-to-end runs (workers.test.ts: `weft run|resume --redis --dispatch bullmq`; the crash tests,
 * whose runtime must die, stay `weft` children).
 *
 * It runs the compiled modules the commands run (dist/, imported by Node: ./dist.ts), as
 * ./workspace-run.ts does: a user domain imports dist/, so the runtime that runs it must be that copy.
 */
import type { JournalStore } from '../../dist/journal/store.js';
import { fromDist } from './dist.js';

const modules = async () => {
  await fromDist('journal/sha256-node.js');
  await fromDist('journal/ed25519-node.js');
  return {
    ...(await fromDist<typeof import('../../dist/cli/domain-loader.js')>('cli/domain-loader.js')),
    ...(await fromDist<typeof import('../../dist/cli/workspace.js')>('cli/workspace.js')),
    ...(await fromDist<typeof import('../../dist/cli/store-choice.js')>('cli/store-choice.js')),
    ...(await fromDist<typeof import('../../dist/cli/dispatch-choice.js')>('cli/dispatch-choice.js')),
    ...(await fromDist<typeof import('../../dist/cli/open-invocation.js')>('cli/open-invocation.js')),
    ...(await fromDist<typeof import('../../dist/journal/store.js')>('journal/store.js')),
    ...(await fromDist<typeof import('../../dist/runtime/index.js')>('runtime/index.js')),
  };
};

/** What `weft run|resume --json` prints, as one object. */
export interface RedisRunLine {
  id: string;
  status: string;
  reason: string | null;
  journal: string | null;
  fingerprint: string | null;
  publicKey: string;
}

export interface RedisRunOptions {
  /** `--dir` (the workspace: its metadata, and a domain's local state). */
  dir: string;
  /** `--redis`. */
  redis: string;
  /** `--redis-prefix`. */
  prefix: string;
  /** `--dispatch` (default auto, as the command's). */
  dispatch?: 'auto' | 'bullmq' | 'in-process';
  /** `--queue`. */
  queue?: string;
  /** `--refusal-wait-ms`. */
  refusalWaitMs?: number;
  /** `--signing-key FILE`. */
  signingKey?: string;
  /** Lines the command would print on stderr about its dispatch choice (auto without a worker) go here. */
  notices?: string[];
}

export interface RedisStartOptions extends RedisRunOptions {
  intent?: string;
  seed?: string;
  tenant?: string;
  asOf?: string;
}

async function storeOf(m: Awaited<ReturnType<typeof modules>>, options: RedisRunOptions) {
  const choice = m.storeChoice(m.workspaceDir(options.dir), { redis: options.redis, 'redis-prefix': options.prefix });
  return { choice, store: await m.openStore(choice) };
}

function lineOf(m: Awaited<ReturnType<typeof modules>>, store: JournalStore, result: { id: string; status: string; reason?: string; fingerprint?: string }, publicKey: string): RedisRunLine {
  return { id: result.id, status: result.status, reason: result.reason ?? null, journal: m.journalFileOf(store, result.id) ?? null, fingerprint: result.fingerprint ?? null, publicKey };
}

/** `weft run <domain> [intent] --redis … --json` in this process (see the header). */
export async function runOnRedis(domainSpec: string, options: RedisStartOptions): Promise<RedisRunLine> {
  const m = await modules();
  const loaded = await m.loadDomain(domainSpec);
  const { domain } = loaded;
  const intent = options.intent ?? domain.intent;
  const asOf = options.asOf ?? domain.asOf;
  if (intent === undefined || asOf === undefined) throw new Error(`runOnRedis: domain ${domain.name} needs an intent and an asOf`);
  const start = { tenant: options.tenant ?? 'default', seed: options.seed ?? '1', asOf };
  const id = m.Runtime.defaultId(intent, start);
  const { choice, store } = await storeOf(m, options);
  try {
    const notice = (line: string) => options.notices?.push(line);
    const dispatch = await m.chooseDispatch(options.dispatch ?? 'auto', choice, options.queue, loaded, notice);
    const ws = await m.openWorkspace({ dir: options.dir, store, redis: choice.redis, dispatch, queue: options.queue, refusalWaitMs: options.refusalWaitMs, domain: loaded, signingKeyFile: options.signingKey });
    try {
      if (!m.readInvocationMeta(ws.dir, id)) m.writeInvocationMeta(ws.dir, id, { domain: ws.domainRef });
      const handle = await ws.runtime.start(intent, { ...start, id });
      return lineOf(m, store, await handle.done, ws.publicKeyFile);
    } finally {
      await ws.runtime.close();
    }
  } finally {
    await store.close();
  }
}

/** `weft resume <id> --redis … --json` in this process (see the header); `domain` as --domain. */
export async function resumeOnRedis(id: string, options: RedisRunOptions & { domain?: string }): Promise<RedisRunLine> {
  const m = await modules();
  const choice = m.storeChoice(m.workspaceDir(options.dir), { redis: options.redis, 'redis-prefix': options.prefix });
  const ws = await m.openWorkspaceFor({ dir: options.dir, id, domain: options.domain, model: { url: undefined, name: undefined }, store: choice, dispatch: options.dispatch ?? 'auto', queue: options.queue, refusalWaitMs: options.refusalWaitMs, signingKeyFile: options.signingKey });
  try {
    const handle = await ws.runtime.resume(id, { rekey: false });
    return lineOf(m, ws.store, await handle.done, ws.publicKeyFile);
  } finally {
    await ws.runtime.close();
    await ws.store.close();
  }
}

/** `weft replay <id> --redis … --json` in this process: its status and fingerprint (a divergence throws, as the command fails). */
export async function replayOnRedis(id: string, options: Pick<RedisRunOptions, 'dir' | 'redis' | 'prefix'> & { domain?: string }): Promise<{ id: string; status: string; fingerprint: string; records: number }> {
  const m = await modules();
  const { choice, store } = await storeOf(m, options);
  try {
    const { pin } = (await m.pinnedRecord(store, id)).body;
    const dir = m.workspaceDir(options.dir);
    const ws = await m.openWorkspace({ dir, store, redis: choice.redis, domain: await m.domainForInvocation(store, id, pin, options.domain, { meta: m.readInvocationMeta(dir, id), dir }) });
    try {
      const result = await ws.runtime.replay(id);
      return { id: result.id, status: result.status, fingerprint: result.fingerprint, records: result.records };
    } finally {
      await ws.runtime.close();
    }
  } finally {
    await store.close();
  }
}

/** The rows `weft ls --redis … --json` prints (runtime/list.ts listInvocations over the store), read in this process. */
export async function listOnRedis(options: Pick<RedisRunOptions, 'dir' | 'redis' | 'prefix'>): Promise<Array<{ id: string; status: string; reason?: string }>> {
  const m = await modules();
  const { listInvocations } = await fromDist<typeof import('../../dist/runtime/list.js')>('runtime/list.js');
  const { store } = await storeOf(m, options);
  try {
    return await listInvocations(store, {});
  } finally {
    await store.close();
  }
}

/**
 * `weft run <domain> --dir D --json` in this process (as ./workspace-run.ts makes it), counting the
 * store's durable appends as `WEFT_COUNT_APPENDS=1` does (cli/faults.ts): an embedded reference
 * whose append count a Redis run is compared with.
 */
export async function runEmbeddedCounted(domainSpec: string, options: { dir: string; seed?: string }): Promise<RedisRunLine & { appends: number }> {
  const m = await modules();
  const loaded = await m.loadDomain(domainSpec);
  const { domain } = loaded;
  const intent = domain.intent;
  const asOf = domain.asOf;
  if (intent === undefined || asOf === undefined) throw new Error(`runEmbeddedCounted: domain ${domain.name} needs an intent and an asOf`);
  const start = { tenant: 'default', seed: options.seed ?? '1', asOf };
  const id = m.Runtime.defaultId(intent, start);
  const ws = await m.openWorkspace({ dir: options.dir, domain: loaded });
  let appends = 0;
  const append = ws.store.append.bind(ws.store);
  ws.store.append = async (...args: Parameters<JournalStore['append']>) => {
    await append(...args);
    appends += 1;
  };
  try {
    if (!m.readInvocationMeta(ws.dir, id)) m.writeInvocationMeta(ws.dir, id, { domain: ws.domainRef });
    const handle = await ws.runtime.start(intent, { ...start, id });
    return { ...lineOf(m, ws.store, await handle.done, ws.publicKeyFile), appends };
  } finally {
    await ws.runtime.close();
  }
}
