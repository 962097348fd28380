/**
 * Runs, resumes and listings on a Redis store made in the test's own process, exactly as
 * `weft run|resume|ls … --redis URL --redis-prefix P --dir D --json` make them: the same store
 * (opened after its durability check, store-choice.ts), the same workspace and domain lookup
 * (open-invocation.ts: the domain found from the pin, the key the store records), world effects run
 * here (what `--dispatch auto` chooses when no worker consumes the queue) — and the result the
 * command's --json line prints. Each call opens its own store and runtime and closes them: two calls
 * share nothing but Redis, as two processes would.
 *
 * For the Redis tests whose subject is the runtime (fingerprints, resumes, leases, listings), not
 * the command: a `weft` process costs 0.3–0.5 s of CPU to start. The commands keep their own
 * end-to-end tests (redis-runtime.test.ts, redis-outage-cli.test.ts and the CLI files).
 *
 * It runs the compiled modules the command runs (dist/, imported by Node: ./dist.ts), so a domain
 * module the tests load (slow-travel-domain.mjs) meets the same copy of the library.
 */
import type { Actuator, ActuatorContext } from '../../dist/actors/actuator.js';
import type { JournalStore } from '../../dist/journal/store.js';
import { fromDist } from './dist.js';

const modules = async () => {
  await fromDist('journal/sha256-node.js');
  await fromDist('journal/ed25519-node.js');
  return {
    ...(await fromDist<typeof import('../../dist/cli/domain-loader.js')>('cli/domain-loader.js')),
    ...(await fromDist<typeof import('../../dist/cli/workspace.js')>('cli/workspace.js')),
    ...(await fromDist<typeof import('../../dist/cli/store-choice.js')>('cli/store-choice.js')),
    ...(await fromDist<typeof import('../../dist/cli/open-invocation.js')>('cli/open-invocation.js')),
    ...(await fromDist<typeof import('../../dist/runtime/index.js')>('runtime/index.js')),
    ...(await fromDist<typeof import('../../dist/runtime/list.js')>('runtime/list.js')),
    ...(await fromDist<typeof import('../../dist/runtime/keys.js')>('runtime/keys.js')),
  };
};

/** Where: the server and the prefix (`--redis URL --redis-prefix P`). */
export interface OnRedis {
  url: string;
  prefix: string;
}

/** What `weft run|resume --json` prints on success, as one object (journal: none in Redis). */
export interface RedisRunLine {
  id: string;
  status: string;
  reason: string | null;
  fingerprint: string | null;
}

export interface RedisRunOptions extends OnRedis {
  /** The workspace (`--dir`): where the domain's local state and metadata go. */
  dir: string;
  /** `--signing-key FILE`. */
  signingKey: string;
  seed?: string;
  /** `--hibernate`: rest at the first epoch boundary. */
  hibernate?: boolean;
  /** Holds the run's first observation until this settles (a run a test keeps in flight, holding its lease). */
  observeGate?: Promise<void>;
  /** Told when the observation is reached (the run holds its lease and is waiting at the gate). */
  onObserve?: () => void;
}

/** A key pair made in `dir` as `weft keygen --out dir` makes it; the secret key's file. */
export async function keyPairIn(dir: string): Promise<string> {
  const { ensureKeyPair } = await modules();
  return (await ensureKeyPair(dir)).secretFile;
}

const choiceOf = (at: OnRedis, dir: string) => ({ dir, redis: { url: at.url, prefix: at.prefix, durability: 'strict' as const, giveUpAfterMs: 10_000, reachWithinMs: 10_000 } });

/** Faults-like hooks (cli/faults.ts's shape): a gate on the observation, and a count of durable appends. */
function hooks(options: { observeGate?: Promise<void>; onObserve?: () => void }, appends: { n: number }) {
  return {
    wrapActuators(actuators: Actuator[], observe: string): Actuator[] {
      const gate = options.observeGate;
      if (gate === undefined) return actuators;
      return actuators.map((a) => (a.name !== observe ? a : { ...a, run: async (args: unknown, ctx: ActuatorContext) => (options.onObserve?.(), await gate, a.run.call(a, args as never, ctx)) }));
    },
    wrapStore(store: JournalStore): void {
      const append = store.append.bind(store);
      store.append = async (...args: Parameters<JournalStore['append']>) => {
        await append(...args);
        appends.n++;
      };
    },
  };
}

/** `weft run <domain> --seed S [--hibernate] --redis URL --redis-prefix P --dir D --json` here; with how many durable appends it made (WEFT_COUNT_APPENDS). */
export async function runOnRedis(domainSpec: string, options: RedisRunOptions): Promise<RedisRunLine & { appends: number }> {
  const m = await modules();
  const loaded = await m.loadDomain(domainSpec);
  const { domain } = loaded;
  const intent = domain.intent!;
  const start = { tenant: 'default', seed: options.seed ?? '1', asOf: domain.asOf! };
  const id = m.Runtime.defaultId(intent, start);
  const choice = choiceOf(options, options.dir);
  const store = await m.openStore(choice);
  const appends = { n: 0 };
  const faults = hooks(options, appends);
  const ws = await m.openWorkspace({ dir: options.dir, store, redis: choice.redis, dispatch: 'in-process', domain: loaded, signingKeyFile: options.signingKey, wrapActuators: (a) => faults.wrapActuators(a, domain.observe) });
  faults.wrapStore(ws.store);
  try {
    if (!m.readInvocationMeta(ws.dir, id)) m.writeInvocationMeta(ws.dir, id, { domain: ws.domainRef });
    const handle = await ws.runtime.start(intent, { ...start, id });
    if (options.hibernate) handle.hibernate();
    const r = await handle.done;
    return { id: r.id, status: r.status, reason: r.reason ?? null, fingerprint: r.fingerprint ?? null, appends: appends.n };
  } finally {
    await ws.runtime.close();
    await store.close();
  }
}

/** `weft resume <id> [--domain D] --redis URL --redis-prefix P --dir D --json` here; a refusal throws the error the command prints (its `code` is the --json line's `refused`). */
export async function resumeOnRedis(id: string, options: RedisRunOptions & { domain?: string }): Promise<RedisRunLine> {
  const m = await modules();
  const faults = hooks(options, { n: 0 });
  const ws = await m.openWorkspaceFor({ dir: options.dir, id, domain: options.domain, model: { url: undefined, name: undefined }, store: choiceOf(options, options.dir), dispatch: 'in-process', faults, signingKeyFile: options.signingKey });
  try {
    const r = await (await ws.runtime.resume(id)).done;
    return { id: r.id, status: r.status, reason: r.reason ?? null, fingerprint: r.fingerprint ?? null };
  } finally {
    await ws.runtime.close();
    await ws.store.close();
  }
}

/** `weft replay <id> --redis URL --redis-prefix P --signing-key FILE --json` here: the replay's status and fingerprint. */
export async function replayOnRedis(id: string, options: OnRedis & { dir: string; signingKey: string }) {
  const m = await modules();
  const choice = choiceOf(options, options.dir);
  const store = await m.openStore(choice);
  try {
    const { pin } = (await m.pinnedRecord(store, id)).body;
    const ws = await m.openWorkspace({ dir: options.dir, store, redis: choice.redis, domain: await m.domainForInvocation(store, id, pin, undefined, { meta: undefined, dir: options.dir }), signingKeyFile: options.signingKey });
    try {
      return await ws.runtime.replay(id);
    } finally {
      await ws.runtime.close();
    }
  } finally {
    await store.close();
  }
}

/** `weft ls --redis URL --redis-prefix P --json` here: the rows (without the command's location in `fix`). */
export async function listOnRedis(options: OnRedis & { dir: string }) {
  const m = await modules();
  const store = await m.openStore(choiceOf(options, options.dir));
  try {
    return await m.listInvocations(store);
  } finally {
    await store.close();
  }
}
