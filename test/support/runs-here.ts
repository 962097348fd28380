/**
 * Runs made in the test's own process exactly as the commands make them: `weft run`, `resume`,
 * `replay` and `ls`, in a workspace (`--dir D`) or on Redis (`--redis URL --redis-prefix P`), and
 * an invocation or a workspace opened as the commands open them — the same domain loader, store
 * choice and durability check (cli/store-choice.ts), dispatch choice (cli/dispatch-choice.ts),
 * workspace and key (cli/workspace.ts, cli/key-files.ts, cli/open-invocation.ts), the CLI's metadata beside the
 * journal (so `weft resume|approve|inspect --domain` find the domain), the same defaults (tenant
 * `default`, seed `1`, the domain's intent and asOf) — and the same JSON line back.
 *
 * For the tests whose subject is something else (a viewer's page, the workers, a listing, a
 * resume): the invocation they look at is a fixture, and a fixture costs a CLI start (0.3–0.5 s of
 * CPU, several seconds on a loaded machine) only where the command itself is what is tested. Every
 * command keeps its own end-to-end tests as `weft` processes (./cli.ts).
 *
 * Each call opens its own store and runtime and closes them: two calls share nothing but the
 * files or Redis, as two processes would. With `dispatch: 'bullmq'` the effects still run on the
 * `weft worker` processes; only the runtime is in this process. The signing key is the one the
 * command would pick: `signingKey` as --signing-key, else WEFT_SIGNING_KEY, else the workspace's own
 * key (on Redis, the user's key under WEFT_HOME).
 */
import type { Actuator, ActuatorContext } from '../../dist/actors/actuator.js';
import type { JournalStore } from '../../dist/journal/store.js';
import { commandModules } from './commands-here.js';

type Modules = Awaited<ReturnType<typeof commandModules>>;

/** What `weft run|resume --dir D --json` prints, as one object. */
export interface RunLine {
  id: string;
  status: string;
  reason: string | null;
  journal: string;
  fingerprint: string | null;
  publicKey: string;
  /** With `countAppends`: the store's durable appends, as `WEFT_COUNT_APPENDS=1` counts them (cli/faults.ts). */
  appends?: number;
}

/** What `weft run|resume --redis … --json` prints (`journal: null`: a Redis store has no journal file). */
export type RedisRunLine = Omit<RunLine, 'journal'> & { journal: string | null };

/** What a run is started with (`weft run <domain> [intent] --tenant T --seed S --as-of A --id I [--hibernate]`). */
export interface StartOptions {
  /** The intent (the positional after the domain); default the domain's. */
  intent?: string;
  tenant?: string;
  seed?: string;
  /** `--as-of`; default the domain's. */
  asOf?: string;
  /** `--id`; default the id the command derives from the intent and the start. */
  id?: string;
  /** `--hibernate`: rest at the first epoch boundary. */
  hibernate?: boolean;
  /** `--signing-key FILE` (else WEFT_SIGNING_KEY, else the workspace's own key, as the command chooses). */
  signingKey?: string;
  /**
   * Holds the run before its domain observes the world, until this settles: a run a test watches
   * while it is in flight (the viewer's live pages, a run holding its lease), released when the test
   * has seen what it needs.
   */
  observeGate?: Promise<void>;
  /** Told when the observation is reached (the run holds its lease and is waiting at the gate). */
  onObserve?: () => void;
  /** Count the store's durable appends into the line's `appends` (what WEFT_COUNT_APPENDS prints). */
  countAppends?: boolean;
}

export interface WorkspaceRunOptions extends StartOptions {
  /** The workspace (`--dir`). */
  dir: string;
  /** `--policy FILE`: a policy pack pinned instead of the domain's policy (read as cli/policy-choice.ts reads it). */
  policy?: string;
  /** `--library FILE|DIGEST`: a version of the domain's library to pin (cli/library-choice.ts). */
  library?: string;
}

/** Where on Redis, and how the command reaches it (`--redis URL --redis-prefix P --dispatch … --dir D`). */
export interface OnRedis {
  /** `--dir` (the workspace: its metadata, and a domain's local state). */
  dir: string;
  /** `--redis`. */
  redis: string;
  /** `--redis-prefix`. */
  prefix: string;
  /** `--redis-give-up-ms` (else WEFT_REDIS_GIVE_UP_MS, else the default). */
  giveUpMs?: number;
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

/** The store choice the command makes of its flags (cli/store-choice.ts). */
function choiceOf(m: Modules, options: OnRedis) {
  return m.storeChoice(m.workspaceDir(options.dir), { redis: options.redis, 'redis-prefix': options.prefix, ...(options.giveUpMs === undefined ? {} : { 'redis-give-up-ms': String(options.giveUpMs) }) });
}

/** The run's start as the command makes it of the domain's defaults and the flags; its id. */
function startOf(m: Modules, domain: { name: string; intent?: string; asOf?: string }, options: StartOptions, who: string) {
  const intent = options.intent ?? domain.intent;
  const asOf = options.asOf ?? domain.asOf;
  if (intent === undefined || asOf === undefined) throw new Error(`${who}: domain ${domain.name} needs an intent and an asOf`);
  const start = { tenant: options.tenant ?? 'default', seed: options.seed ?? '1', asOf };
  return { intent, start, id: options.id ?? m.Runtime.defaultId(intent, start) };
}

/** The gate on the domain's observation (cli/faults.ts's shape), when the test holds one. */
function gateOf(options: Pick<StartOptions, 'observeGate' | 'onObserve'>) {
  const gate = options.observeGate;
  if (gate === undefined) return undefined;
  return (actuators: Actuator[], observe: string): Actuator[] =>
    actuators.map((a) => (a.name !== observe ? a : { ...a, run: async (args: unknown, ctx: ActuatorContext) => (options.onObserve?.(), await gate, a.run.call(a, args as never, ctx)) }));
}

/** Counts the store's durable appends, as WEFT_COUNT_APPENDS does. */
function countAppends(store: JournalStore): { n: number } {
  const appends = { n: 0 };
  const append = store.append.bind(store);
  store.append = async (...args: Parameters<JournalStore['append']>) => {
    await append(...args);
    appends.n++;
  };
  return appends;
}

type Opened = Awaited<ReturnType<Modules['openWorkspace']>>;

/** Start the run on the opened workspace (its metadata written first, as the command does) and wait for its end. */
async function startOn(m: Modules, ws: Opened, run: ReturnType<typeof startOf>, options: StartOptions) {
  const appends = options.countAppends ? countAppends(ws.store) : undefined;
  if (!m.readInvocationMeta(ws.dir, run.id)) m.writeInvocationMeta(ws.dir, run.id, { domain: ws.domainRef });
  const handle = await ws.runtime.start(run.intent, { ...run.start, id: run.id });
  if (options.hibernate) handle.hibernate();
  const result = await handle.done;
  return { ...lineOf(m, ws, result), ...(appends ? { appends: appends.n } : {}) };
}

function lineOf(m: Modules, ws: { store: JournalStore; publicKeyFile: string }, result: { id: string; status: string; reason?: string; fingerprint?: string }): RedisRunLine {
  return { id: result.id, status: result.status, reason: result.reason ?? null, journal: m.journalFileOf(ws.store, result.id) ?? null, fingerprint: result.fingerprint ?? null, publicKey: ws.publicKeyFile };
}

/** `weft run <domain> [intent] --dir D --json …` in this process (see the header). */
export async function runInWorkspace(domainSpec: string, options: WorkspaceRunOptions): Promise<RunLine> {
  const m = await commandModules();
  const loaded = await m.loadDomain(domainSpec);
  const { domain } = loaded;
  const run = startOf(m, domain, options, 'runInWorkspace');
  const policy = options.policy === undefined ? undefined : await m.readPolicyFile(options.policy, domain.policyPredicates);
  const store = new m.FileStore(m.workspaceDir(options.dir));
  const library = options.library === undefined ? undefined : await m.libraryChoice(options.library, domain, store);
  const gate = gateOf(options);
  const ws = await m.openWorkspace({
    dir: options.dir, store, domain: loaded,
    ...(options.signingKey ? { signingKeyFile: options.signingKey } : {}),
    ...(gate ? { wrapActuators: (a: Actuator[]) => gate(a, domain.observe) } : {}),
    ...(policy ? { policy } : {}),
    ...(library ? { library } : {}),
  });
  try {
    return (await startOn(m, ws, run, options)) as RunLine;
  } finally {
    await ws.runtime.close();
  }
}

/**
 * `weft resume <id> --dir D --json` in this process: the invocation's workspace opened as the command
 * opens it (its recorded domain, its pinned model, the workspace's key), then resumed to its end.
 */
export async function resumeInWorkspace(id: string, options: { dir: string }): Promise<RunLine> {
  const m = await commandModules();
  const ws = await m.openWorkspaceFor({ dir: options.dir, id, domain: undefined, model: { url: undefined, name: undefined } });
  try {
    return lineOf(m, ws, await (await ws.runtime.resume(id)).done) as RunLine;
  } finally {
    await ws.runtime.close();
  }
}

/** `weft run <domain> [intent] --redis URL --redis-prefix P [--dispatch …] --dir D --json …` in this process (see the header). */
export async function runOnRedis(domainSpec: string, options: OnRedis & StartOptions): Promise<RedisRunLine> {
  const m = await commandModules();
  const loaded = await m.loadDomain(domainSpec);
  const { domain } = loaded;
  const run = startOf(m, domain, options, 'runOnRedis');
  const choice = choiceOf(m, options);
  const store = await m.openStore(choice);
  try {
    const notice = (line: string) => options.notices?.push(line);
    const dispatch = await m.chooseDispatch(options.dispatch ?? 'auto', choice, options.queue, loaded, notice);
    const gate = gateOf(options);
    const ws = await m.openWorkspace({
      dir: options.dir, store, redis: choice.redis, dispatch, queue: options.queue, refusalWaitMs: options.refusalWaitMs, domain: loaded, signingKeyFile: options.signingKey,
      ...(gate ? { wrapActuators: (a: Actuator[]) => gate(a, domain.observe) } : {}),
    });
    try {
      return await startOn(m, ws, run, options);
    } finally {
      await ws.runtime.close();
    }
  } finally {
    await store.close();
  }
}

/**
 * `weft resume <id> [--domain D] --redis URL --redis-prefix P [--dispatch …] --dir D --json` in this
 * process; a refusal throws the error the command prints (its `code` is the --json line's `refused`).
 */
export async function resumeOnRedis(id: string, options: OnRedis & Pick<StartOptions, 'observeGate' | 'onObserve'> & { domain?: string }): Promise<RedisRunLine> {
  const m = await commandModules();
  const gate = gateOf(options);
  const ws = await m.openWorkspaceFor({
    dir: options.dir, id, domain: options.domain, model: { url: undefined, name: undefined }, store: choiceOf(m, options),
    dispatch: options.dispatch ?? 'auto', queue: options.queue, refusalWaitMs: options.refusalWaitMs, signingKeyFile: options.signingKey,
    ...(gate ? { faults: { wrapActuators: gate, wrapStore: () => undefined } } : {}),
  });
  try {
    return lineOf(m, ws, await (await ws.runtime.resume(id)).done);
  } finally {
    await ws.runtime.close();
    await ws.store.close();
  }
}

/**
 * `weft replay <id> --dir D [--domain D] [--redis URL --redis-prefix P]` in this process, through the
 * command's own path (cli/commands/replay.ts openForReplay: the pin names where to find the domain),
 * then the runtime replays the journal (it checks the genesis and the pin). Rejects with what the command prints as its refusal (a
 * divergence throws, where the command exits 1). `generateKey: false`: unlike the command, make no
 * signing key where there is none (a replay seals nothing).
 */
export async function replayById(id: string, options: Omit<OnRedis, 'redis' | 'prefix'> & Partial<Pick<OnRedis, 'redis' | 'prefix'>> & { domain?: string; generateKey?: false }) {
  const m = await commandModules();
  const dir = m.workspaceDir(options.dir);
  const choice = m.storeChoice(dir, options.redis === undefined ? {} : { redis: options.redis, 'redis-prefix': options.prefix, ...(options.giveUpMs === undefined ? {} : { 'redis-give-up-ms': String(options.giveUpMs) }) });
  const { ws, store } = await m.commands.replay.openForReplay(id, {
    dir,
    ...(options.domain === undefined ? {} : { domain: options.domain }),
    choice,
    ...(options.signingKey ? { signingKeyFile: options.signingKey } : {}),
    ...(options.generateKey === false ? { generateKey: false } : {}),
  });
  try {
    return await ws.runtime.replay(id);
  } finally {
    await ws.runtime.close();
    if (choice.redis) await store.close();
  }
}

/** The rows `weft ls --redis … --json` prints (runtime/list.ts listInvocations over the store, without the command's location in `fix`), read in this process. */
export async function listOnRedis(options: Pick<OnRedis, 'dir' | 'redis' | 'prefix' | 'giveUpMs'>) {
  const m = await commandModules();
  const store = await m.openStore(choiceOf(m, options));
  try {
    return await m.listInvocations(store, {});
  } finally {
    await store.close();
  }
}

type OpenOptions = Parameters<Modules['openWorkspaceFor']>[0];
type Workspace = Awaited<ReturnType<Modules['openWorkspaceFor']>>;

/**
 * Open invocation `id` of workspace `dir` as `weft resume|approve|cancel|fork ID --dir DIR` opens
 * it (cli/open-invocation.ts openWorkspaceFor: the tenant's pin, the domain, the model, the key in
 * force; `domain`: `--domain`; `signingKeyFile`: `--signing-key`; `tenant`: `--tenant`; `model`: the
 * model flags), then `act` on its runtime as the command does; the runtime is closed after, whatever
 * `act` did.
 */
export async function openInvocation<T>(options: Omit<OpenOptions, 'model'> & { model?: OpenOptions['model'] }, act: (ws: Workspace) => Promise<T>): Promise<T> {
  const m = await commandModules();
  const ws = await m.openWorkspaceFor({ model: { url: undefined, name: undefined }, ...options, dir: m.workspaceDir(options.dir ?? '.weft') });
  try {
    return await act(ws);
  } finally {
    await ws.runtime.close();
  }
}

/**
 * The workspace `dir` opened as the commands open it (with `domainSpec`, default travel, and no key
 * made), handed to `use` — for the runtime's own `cancel`, `replay`, `verify` and `list` on a run
 * the test made — then closed.
 */
export async function inWorkspace<T>(dir: string, use: (ws: Opened) => Promise<T>, domainSpec = 'travel'): Promise<T> {
  const m = await commandModules();
  const ws = await m.openWorkspace({ dir, domain: await m.loadDomain(domainSpec), generateKey: false });
  try {
    return await use(ws);
  } finally {
    await ws.runtime.close();
  }
}
