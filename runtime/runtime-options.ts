/**
 * What `createRuntime(options)` takes, and what it makes of it: `RuntimeOptions` (one options type
 * for every mode — the embedded default is a FileStore and the in-process dispatcher; the
 * distributed mode passes a Redis store and a BullMQ dispatcher to the same options), the domain's
 * parts filled in where the options leave them out (`resolveDomain`: explicit options win), and the
 * dispatcher the options imply (`chooseDispatcher`). Nothing here touches the store: a malformed
 * option is refused before anything is opened or written.
 */
import type { JournalRecord } from '../journal/records.js';
import type { InspectionEvent, Observer } from 'xstate';
import type { Redis as RedisClient } from 'ioredis';
import type { Actuator } from '../actors/actuator.js';
import type { Model } from '../actors/model/model.js';
import type { SigningKey } from '../journal/seal.js';
import type { JournalStore } from '../journal/store.js';
import { RedisStore } from '../stores/redis.js';
import type { EvaluableRegistry } from '../htn/library/evaluables.js';
import type { Library } from '../htn/library/schema.js';
import type { InvocationLimits } from '../machines/context.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import type { PolicyPredicate, PredicateRegistry } from '../policy/predicates.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import { InProcessDispatcher } from '../queue/in-process.js';
import { BullMqDispatcher, bullPrefix, workerCommand } from '../queue/bullmq.js';
import { isDomain, type Domain, type DomainContext } from './domain.js';
import { RuntimeUsageError } from './errors.js';

export interface RuntimeOptions {
  /**
   * Scope this runtime to one tenant: it starts invocations only for that tenant (the default
   * tenant of a start), and resumes, approves and lists only that tenant's — another tenant's id is
   * refused as unknown. Without it the runtime serves every tenant (a trusted operator's). Every
   * method that takes an id (resume, approve, cancel, fork, replay, verify, journalPath) holds to
   * it; a per-call `tenant` narrows an unscoped runtime, and never widens or changes a scoped one.
   * (The store itself, `runtime.store`, is not scoped: whoever holds it reads every tenant's.)
   */
  tenant?: string;
  /** Where journals, snapshots, leases and blobs live (FileStore, MemoryStore, RedisStore). */
  store?: JournalStore;
  /**
   * The distributed mode: a Redis URL or an ioredis client. Without `store`, it selects a RedisStore
   * (prefix `redisPrefix`, default `weft`), whose server's durability is checked before the first
   * write (`durability`); a URL is also handed to the domain's factories (`DomainContext.redis`).
   */
  redis?: string | RedisClient;
  redisPrefix?: string;
  /**
   * With `redis` a URL: how long the connections this runtime makes (its store's, BullMQ's) wait for
   * a server that has become unreachable before giving up, failing what waits on them. Default:
   * reconnect for ever, as a long-lived service should; a short command sets it (the CLI: 10 s).
   */
  redisGiveUpMs?: number;
  /** `strict` (default): refuse a Redis that may lose acknowledged appends; `relaxed`: warn once and go on. */
  durability?: 'strict' | 'relaxed';
  /**
   * Where world effects run. With `redis` the default is `bullmq`: jobs on the queue `queue`
   * (default `weft-effects-<domain name>`) for `weft worker` processes; `in-process` keeps them here. Without
   * Redis, always in-process. A `dispatcher` given explicitly wins over both.
   */
  dispatch?: 'in-process' | 'bullmq';
  queue?: string;
  /** The command that starts a worker, for the warning when none consumes the queue (default: built from the domain's name). */
  workerHint?: string;
  /**
   * The domain (defineDomain) this runtime runs: it supplies libraries, actuators, observe, policy,
   * policies, evaluables and a default model; any of those given here as well overrides it.
   */
  domain?: Domain;
  /** Where the domain's actuators may keep local state (passed to its factories). Needed when the domain's actuators or model are factories. */
  stateDir?: string;
  /** Method libraries this runtime can pin; `start` picks one by name (default: the first). */
  libraries?: readonly Library[];
  /** Actuators for the default in-process dispatcher. */
  actuators?: Actuator[];
  /** Overrides the in-process dispatcher (e.g. BullMQ). */
  dispatcher?: Dispatcher;
  /** Name of the read-only `state` actuator observed at the start of every epoch. */
  observe?: string;
  model?: Model;
  policy?: AdmissionPolicy;
  /** Older policy versions, for resuming and replaying invocations pinned to them. */
  policies?: readonly AdmissionPolicy[];
  /**
   * The policy predicates policy packs may reference by name and version (policy/predicates.ts): a
   * pack pinned by an invocation is read back from the store's blob and compiled against them.
   */
  policyPredicates?: PredicateRegistry | readonly PolicyPredicate[];
  evaluables?: EvaluableRegistry;
  signingKey?: SigningKey;
  limits?: Partial<InvocationLimits>;
  /**
   * An XState inspection observer, told of every live run's actors, events and snapshots (not of
   * replays: pass `inspect` to `replay` for that). Observation only: an observer that throws never
   * fails the run, and one that is slow (three calls over 50 ms: XState calls it inside each
   * transition) is detached with a warning (runtime/inspection.ts) — queue the work, do it later. To watch runs in Stately's inspector, use the relay
   * (`weft run --stately`, or inspector/stately: `statelyTap(relay).inspect`), not
   * `createSkyInspector`, which sends every event — the intent and the observed world included — to
   * a third-party server; `createBrowserInspector().inspect` is undefined in Node. `weft inspect`
   * is Weft's own viewer, offline.
   */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Identifies this process in leases and record envelopes. */
  writer?: string;
  /** How long an invocation's lease lasts without renewal (default 30 s; renewed every third of it while the run lives). */
  leaseTtlMs?: number;
  /**
   * How long a step that workers refuse (another domain's queue, a library or actuator their build
   * lacks) waits for a worker that can run it before the invocation rests suspended, naming them
   * (default 5 min; a refusal spends no attempt — runtime/epoch/refusals.ts). `weft run|resume|serve
   * --refusal-wait-ms`, WEFT_REFUSAL_WAIT_MS.
   */
  refusalWaitMs?: number;
  /** Wall clock for envelopes only (never hashed). */
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /**
   * An invocation already opened (runtime/open.ts `openInvocation`): its genesis record, read once
   * there, is not read again by the verb that continues it (the genesis of an id never changes).
   */
  opened?: { id: string; pinned: JournalRecord<'invocation.pinned'> };
}

/** RuntimeOptions with the domain's parts filled in. */
export type ResolvedOptions = Omit<RuntimeOptions, 'libraries' | 'observe' | 'store'> & { store: JournalStore; libraries: readonly Library[]; observe: string };

/** Fill in what the domain supplies; explicit options win. */
export function resolveDomain(options: RuntimeOptions): ResolvedOptions {
  const domain = options.domain;
  if (domain !== undefined && !isDomain(domain)) throw new RuntimeUsageError('runtime.not_a_domain', 'createRuntime({ domain }) needs a value made by defineDomain()');
  const libraries = options.libraries ?? domain?.libraries;
  const observe = options.observe ?? domain?.observe;
  if (!libraries) throw new RuntimeUsageError('runtime.no_library', 'createRuntime needs a domain or at least one method library');
  if (!observe) throw new RuntimeUsageError('runtime.no_observe', 'createRuntime needs a domain or the name of the observe actuator');
  const prefix = options.redisPrefix ?? 'weft';
  const store = options.store ?? (options.redis !== undefined ? new RedisStore({ redis: options.redis, prefix, giveUpAfterMs: options.redisGiveUpMs }) : undefined);
  if (!store) throw new RuntimeUsageError('runtime.no_store', 'createRuntime needs a store (new FileStore(dir), new MemoryStore()) or redis (a URL or an ioredis client)');
  // Asked for only when a factory reads it: a domain whose factories ignore stateDir needs none.
  const context: DomainContext = {
    get stateDir(): string {
      if (options.stateDir === undefined) throw new RuntimeUsageError('runtime.no_state_dir', `domain ${domain!.name} builds its actuators or model per state folder: pass createRuntime({ stateDir })`);
      return options.stateDir;
    },
    ...(typeof options.redis === 'string' ? { redis: { url: options.redis, prefix } } : {}),
  };
  const actuators = options.actuators ?? (options.dispatcher === undefined && domain ? domain.actuators(context) : undefined);
  const model = options.model ?? domain?.model(context);
  const policy = options.policy ?? domain?.policy;
  const policies = options.policies ?? domain?.policies;
  const policyPredicates = options.policyPredicates ?? domain?.policyPredicates;
  const evaluables = options.evaluables ?? domain?.evaluables;
  return {
    ...options,
    store,
    libraries,
    observe,
    ...(actuators ? { actuators } : {}),
    ...(model ? { model } : {}),
    ...(policy ? { policy } : {}),
    ...(policies ? { policies } : {}),
    ...(policyPredicates ? { policyPredicates } : {}),
    ...(evaluables ? { evaluables } : {}),
  };
}

/** The dispatcher the options imply: BullMQ workers in the Redis mode unless asked otherwise, else in-process. */
export function chooseDispatcher(options: ResolvedOptions): Dispatcher | undefined {
  if (!options.actuators) return undefined;
  if (options.redis !== undefined && options.dispatch !== 'in-process') {
    const url = typeof options.redis === 'string' ? options.redis : undefined;
    return new BullMqDispatcher({
      connection: options.redis as string,
      actuators: options.actuators,
      prefix: bullPrefix(options.redisPrefix),
      ...(options.queue ? { queue: options.queue } : {}),
      ...(options.domain ? { domain: options.domain.name } : {}),
      giveUpAfterMs: options.redisGiveUpMs,
      workerHint: options.workerHint ?? workerCommand({ domain: options.domain?.name ?? '<domain>', redisUrl: url, redisPrefix: options.redisPrefix, queue: options.queue }),
    });
  }
  return new InProcessDispatcher(options.actuators);
}
