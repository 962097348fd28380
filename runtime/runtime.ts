/**
 * `createRuntime(options)` — Weft's library API. One options type for every mode: the embedded
 * default is a FileStore and the in-process dispatcher; the distributed mode passes other values
 * (a Redis store, a BullMQ dispatcher) to the same options.
 *
 * - `start(intent, opts?)` pins (library digest, runtime version and flags, model, seed, asOf,
 *   policy, limits, the actuators that spend), files the library — and a rule pack policy
 *   (policy/) — in the store's blobs by digest, writes `invocation.pinned`, and runs the machine; the id of the key that will
 *   seal it goes into the store's unhashed metadata, not the pin (seal-key.ts). Options default as
 *   `weft run` does (start-options.ts); a malformed one is refused before anything is written.
 *   Starting an id that exists attaches to it — or fails clearly if its intent, pin or sealing key
 *   differ.
 * - `resume(id)` re-opens an invocation from its latest snapshot (or from the start) and the
 *   journal's tail: the records after the snapshot are read back, not re-done, then it runs live.
 *   Its signing key must be the key in force (seal-key.ts), unless `rekey` records a change of key
 *   first.
 * - `approve(id, decision)` records a person's decision on a hibernated epoch and continues.
 * - `cancel(id, { reason })` asks an invocation to stop, from any process (runtime/cancel.ts says how).
 * - `replay(id | journal)` re-runs the machine over a journal without calling anything, re-deriving
 *   every decomposition; any difference stops with ReplayDivergenceError. A fork's replay first
 *   checks its parent's journal up to the boundary it forked at (fork.ts).
 * - `fork(parentId, { atEpoch, library?, model?, policy? })` starts a new invocation from a parent's
 *   epoch boundary under a new pin, and ends the parent superseded (fork.ts).
 */
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import type { InspectionEvent, Observer } from 'xstate';
import type { Actuator } from '../actors/actuator.js';
import type { Model } from '../actors/model/model.js';
import { canonicalBytes, canonicalize } from '../journal/canonical.js';
import { digestOf, hexToBytes } from '../journal/digest.js';
import { LeaseHeldError, WeftError } from '../journal/errors.js';
import { verifyRecords, type JournalReport } from '../journal/reader.js';
import { readJournalBytes } from '../journal/verify-bytes.js';
import type { JournalRecord, Pin } from '../journal/records.js';
import type { PublicKey, SigningKey } from '../journal/seal.js';
import { DamagedMetadataError, journalFileOf, type InboxMessage, type InvocationMetadata, type JournalStore } from '../journal/store.js';
import { JournalWriter } from '../journal/writer.js';
import { marksForLibrary } from '../journal/redaction.js';
import type { EvaluableRegistry } from '../htn/library/evaluables.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import type { InvocationInput, InvocationLimits } from '../machines/context.js';
import { FLAG_DECLARED_SPEND, FLAG_LINEAGE_EFFECTS, hasFlag, IMPLEMENTED_FLAGS } from '../machines/flags.js';
import { advisoryRaiser } from './advisories.js';
import { shadowPin } from './shadow-pin.js';
import { pinnedSpenders, spendDeclarationProblem, type PinnedSpender } from '../machines/spenders.js';
import { isWellFormed, REFUSED_PREFIX_CHARS, toWellFormed, utf16Digest } from '../machines/untrusted-text.js';
import { allowAll, type AdmissionPolicy } from '../machines/policy.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import { InProcessDispatcher } from '../queue/in-process.js';
import { startConflictMessage, startDifferences } from './start-conflict.js';
import { BullMqDispatcher, bullPrefix, workerCommand } from '../queue/bullmq.js';
import { checkRedisDurability, RedisStore } from '../journal/stores/redis.js';
import { durabilityRefusal, relaxedDurabilityWarning } from '../journal/stores/redis-durability.js';
import type { Redis as RedisClient } from 'ioredis';
import { isDomain, type Domain, type DomainContext } from './domain.js';
import { createInvocationActor, type EpochServices } from './epoch-actors.js';
import { readLibraryBlob } from '../htn/library/stored.js';
import { readPinnedPack } from './pack-blob.js';
import { isPackPolicy, type PackPolicy } from '../policy/compile.js';
import { packBytes } from '../policy/digest.js';
import { predicateRegistry, type PolicyPredicate, type PredicateRegistry } from '../policy/predicates.js';
import { invocationStatus, listInvocations, listOpenInvocations, type InvocationSummary } from './list.js';
import { compareEvaluables, compareFlags, compareLimits, compareModel, comparePolicy, compareSpenders, libraryActuators, libraryMismatch, UNPINNED_MODEL_PARAMS, type PinMismatch } from './pin-check.js';
import type { SealKeyInForce } from './seal-key.js';
import { callScope, tenantOfJournalFile } from './tenant-of.js';
import { keyInForce, refuseOtherKey, repairRecordedKey } from './key-in-force.js';
import { DEFAULT_LIMITS, inputFromJournal } from './limits.js';
import { ForeignJournalError, PinMismatchError, RuntimeUsageError, SealKeyMismatchError } from './errors.js';
import { InvocationHandle } from './handle.js';
import { boundaryOf, checkForkOf, effectsAfterRefusal, ForkParentError, forkOfBody, supersededRefusal, ForkRefusedError, forkId, forkState, inheritedState, parentHistory, repinnedFields, SUPERSEDABLE, worldEffects, type ForkedBody, type ForkOptions } from './fork.js';
import { guardedObserver, type InspectionObserver } from './inspection.js';
import { Recorder } from './recorder.js';
import { replayJournal, type ReplayResult } from './replay.js';
import { serve, type ServeOptions } from './serve.js';
import { cancelledHandle, INBOX_LOOK_MS, RESTING_STATES, stopEventFor, waitForEnd, type CancelOptions } from './cancel.js';
import { resolveStartOptions, type StartOptions } from './start-options.js';

export type { StartOptions } from './start-options.js';
export type { ForkOptions } from './fork.js';
export type { CancelOptions } from './cancel.js';

export interface ResumeOptions {
  snapshot?: unknown;
  at?: { seq: number; tail: string };
  /**
   * When this runtime's signing key is not the key in force (seal-key.ts), change it on purpose —
   * an `invocation.rekeyed` record (from, to) is appended before the run goes on, the store's
   * metadata names the new key, and the journal is then sealed by it. Without it such a resume is
   * refused (SealKeyMismatchError).
   */
  rekey?: boolean;
  /**
   * Act only if the invocation belongs to this tenant (its pinned tenant); otherwise it is refused
   * as unknown, exactly as an id that does not exist — one tenant learns nothing of another's.
   * Defaults to the runtime's own `tenant`; a scoped runtime's scope cannot be changed per call
   * (another tenant named here is refused as unknown, tenant-of.ts callScope).
   */
  tenant?: string;
}

export const RUNTIME_VERSION = 'weft@0.1.0';
/** Numbered behaviour flags this runtime applies (machines/flags.ts); recorded in the pin, and replay follows the journal's. */
export const BEHAVIOUR_FLAGS: readonly number[] = IMPLEMENTED_FLAGS;


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
   * The policy predicates rule packs may reference by name and version (policy/predicates.ts): a
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
}

export class Runtime {
  private readonly dispatcher?: Dispatcher;
  private readonly writerId: string;
  private readonly limits: InvocationLimits;
  /** Each library's digest, computed once: pinning and resuming look libraries up by it. */
  private readonly digests = new Map<Library, string>();
  private readiness: Promise<void> | undefined;
  /** Blobs this runtime has put in the store (pinned libraries; the signing key's public half, by its key id), by digest. */
  private readonly blobsStored = new Map<string, Promise<void>>();
  /** True when the runtime made its store from `redis` (and closes it). */
  private readonly ownsStore: boolean;
  /** Rule packs read back from the store's blobs for invocations that pinned them (pack-blob.ts), by policy id. */
  private readonly pinnedPacks = new Map<string, PackPolicy>();
  private readonly predicates: PredicateRegistry;
  /**
   * What this runtime's actuators declare they spend (flag 2; machines/spenders.ts) — pinned by
   * `start`, compared with the pin on resume — or undefined when it knows no actuators (its own
   * dispatcher, and a domain whose actuators come from a factory). Admission never reads it: it
   * reads the pin.
   */
  private readonly declaredSpenders: readonly PinnedSpender[] | undefined;

  /** The options with the domain's parts filled in: what this runtime actually runs. */
  readonly options: ResolvedOptions;

  constructor(given: RuntimeOptions) {
    const options = resolveDomain(given);
    this.options = options;
    this.ownsStore = given.store === undefined;
    if (options.libraries.length === 0) throw new RuntimeUsageError('runtime.no_library', 'createRuntime needs at least one method library');
    for (const library of options.libraries) {
      validateLibrary(library);
      this.digests.set(library, libraryDigest(library));
    }
    if (options.actuators) {
      const problem = spendDeclarationProblem((options.policy ?? allowAll).envelope, options.actuators);
      if (problem) throw new RuntimeUsageError('runtime.ambiguous_spend', `createRuntime: ${problem}`);
      this.declaredSpenders = pinnedSpenders(options.actuators);
    } else {
      this.declaredSpenders = options.domain?.declaredSpenders;
    }
    this.dispatcher = options.dispatcher ?? chooseDispatcher(options);
    this.writerId = options.writer ?? `${hostname()}:${process.pid}`;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.inspector = options.inspect ? guardedObserver(options.inspect) : undefined;
    this.predicates = predicateRegistry(options.policyPredicates);
  }

  /** The runtime's inspection observer, unable to throw into a run (inspection.ts). */
  private readonly inspector: Observer<InspectionEvent> | undefined;

  get store(): JournalStore {
    return this.options.store;
  }

  /**
   * Before the first operation of a runtime over a RedisStore it opened itself: the server must keep
   * what it acknowledges (AOF, appendfsync always, noeviction) — or the user said `relaxed`.
   */
  private ready(): Promise<void> {
    this.readiness ??= (async () => {
      const store = this.options.store;
      if (!(store instanceof RedisStore) || !this.ownsStore) return;
      await store.reachable();
      const verdict = await checkRedisDurability(await store.connection());
      if (verdict.ok) return;
      if ((this.options.durability ?? 'strict') === 'strict') throw durabilityRefusal(store.name, verdict);
      process.emitWarning(relaxedDurabilityWarning(store.name, verdict.problems));
    })();
    return this.readiness;
  }

  /** The invocation id a start without `id` gets: a digest of tenant, intent, seed and asOf. */
  static defaultId(intent: string, opts: Pick<StartOptions, 'tenant' | 'seed' | 'asOf' | 'shadow'>): string {
    // An intent that is not well-formed Unicode cannot be canonicalized: its UTF-16 digest stands in.
    const named = isWellFormed(intent) ? intent : { wellFormed: toWellFormed(intent), utf16: utf16Digest(intent) };
    // A shadow run of the same intent is another invocation than the real one (a real run's id is unchanged).
    return `inv-${digestOf({ tenant: opts.tenant, intent: named, seed: String(opts.seed), asOf: opts.asOf, ...(opts.shadow === true ? { shadow: true } : {}) }).slice(0, 32)}`;
  }

  /**
   * Start an invocation. Without options it takes the CLI's defaults (tenant `default`, seed `1`,
   * the domain's `asOf`); a malformed option is refused with a RuntimeUsageError before anything
   * is written (start-options.ts).
   */
  async start(intent: string, options?: Partial<StartOptions>): Promise<InvocationHandle> {
    const scope = this.options.tenant;
    if (scope !== undefined && options?.tenant !== undefined && options.tenant !== scope) {
      throw new RuntimeUsageError('runtime.tenant_scope', `this runtime is scoped to tenant ${JSON.stringify(scope)} and cannot start an invocation for tenant ${JSON.stringify(options.tenant)}`);
    }
    const opts = resolveStartOptions(intent, scope !== undefined && options?.tenant === undefined ? { ...options, tenant: scope } : options, this.options.domain?.asOf);
    const library = this.pickLibrary(opts.library);
    // The key that will seal the journal is fixed now (recorded in the store's metadata), so a runtime without one cannot start.
    const key = this.options.signingKey;
    if (!key) throw new RuntimeUsageError('runtime.no_signing_key', 'runtime.start: this runtime has no signing key, and an invocation is sealed by the key it starts with: pass createRuntime({ signingKey }) (loadSigningKey(file), or generateSigningKey() + writeKeyPair(dir, key))');
    await this.ready();
    const digest = this.digests.get(library)!;
    await this.putBlobOnce(digest, () => canonicalBytes(library));
    // A rule pack is filed by its digest too, so any process resumes or replays under the pinned rules with no file.
    const policy = this.options.policy;
    if (isPackPolicy(policy)) await this.putBlobOnce(policy.digest, () => packBytes(policy.pack));
    // The public key, by its id (a blob's digest is its key id), so that any process finds the key a journal was sealed with.
    await this.putBlobOnce(key.keyId, () => hexToBytes(key.publicKey));
    const model = this.options.model;
    // A step timeout is pinned only when there is one: a run without pins what it pinned before.
    const { stepTimeoutMs: runtimeTimeout, ...limits } = this.limits;
    const stepTimeoutMs = opts.stepTimeoutMs ?? runtimeTimeout ?? 0;
    const pin: Pin = {
      library: digest,
      runtime: RUNTIME_VERSION,
      flags: [...BEHAVIOUR_FLAGS],
      model: { id: model?.id ?? 'none', params: pinnedModelParams(model) },
      seed: String(opts.seed),
      asOf: new Date(opts.asOf).toISOString(),
      policy: (this.options.policy ?? allowAll).id,
      limits: { ...limits, ...(stepTimeoutMs > 0 ? { stepTimeoutMs } : {}) },
      // Which actuators spend (flag 2), fixed for the invocation's life; none known: none declared (every world effect counts).
      ...(BEHAVIOUR_FLAGS.includes(FLAG_DECLARED_SPEND) ? { spenders: [...(this.declaredSpenders ?? [])] } : {}),
      // A shadow run, and whether its world effects have shadow results (shadow-pin.ts); absent on a real run.
      ...(opts.shadow === true ? { shadow: shadowPin(library, this.dispatcher) } : {}),
      ...(opts.deadline === undefined ? {} : { deadline: String(opts.deadline) }),
    };
    const id = opts.id ?? Runtime.defaultId(intent, opts);
    // An intent over the pinned cap (or not well-formed) is recorded as a prefix with its size and digest; the run then fails, sealed, before any model call.
    const cut = intent.length > this.limits.maxIntentChars || !isWellFormed(intent);
    const recordedIntent = cut ? toWellFormed(intent.slice(0, Math.min(REFUSED_PREFIX_CHARS, this.limits.maxIntentChars))) : intent;
    const intentCut = cut ? { chars: intent.length, digest: utf16Digest(intent) } : undefined;
    // Which domain, library and sealing key it is, in the store beside the journal (unhashed): any
    // process finds its domain by it, and a resume with another key is refused (seal-key.ts).
    if ((await this.options.store.length(id)) === 0) await this.options.store.putMetadata(id, { ...this.domainMetadata(digest, library), sealKey: key.keyId });
    let writer: JournalWriter;
    try {
      writer = await JournalWriter.create(this.options.store, { invocation: id, tenant: opts.tenant, intent: recordedIntent, pin, ...(intentCut ? { intentCut } : {}) }, this.writerOptions());
    } catch (err) {
      // An id that exists (created, or being run by another process) is attached to — or refused
      // clearly when its intent or pin differ; anything else is this start's own failure.
      if ((await this.options.store.length(id).catch(() => 0)) > 0) return this.attach(id, recordedIntent, opts.tenant, pin);
      throw err;
    }
    const input: InvocationInput = { invocation: id, tenant: opts.tenant, intent: recordedIntent, pin, limits: { ...limits, ...(stepTimeoutMs > 0 ? { stepTimeoutMs } : {}) }, seq: writer.seq, tail: writer.tail, ...(intentCut ? { intentCut } : {}) };
    return this.run(writer, library, input, [], undefined, key.keyId);
  }

  /**
   * The store metadata's domain, library and the domain's redaction marks (seal-key.ts adds the key).
   * The marks are written for the library pinned: an operator's marks under its actuator too, since
   * a journal's dispatch names only the actuator (journal/redaction.ts marksForLibrary).
   */
  private domainMetadata(digest: string, library: Library): Omit<InvocationMetadata, 'sealKey'> {
    const domain = this.options.domain;
    return { ...(domain ? { domain: domain.name } : {}), library: digest, ...(domain?.redact ? { redact: marksForLibrary(domain.redact, library) } : {}) };
  }

  /**
   * Continue an invocation from its latest snapshot and the journal after it — a hibernated one is
   * woken, a suspended one retried, a sleeping one goes on if its time has come (else it rests
   * again); one awaiting approval waits for `approve`. A journal whose
   * final record is torn (a crash mid-write) is refused with TornTailError; move that record aside
   * explicitly first (`store.quarantineTornTail(lease)`, or `weft resume --quarantine-torn`).
   */
  async resume(id: string, options: ResumeOptions = {}): Promise<InvocationHandle> {
    return this.resumeAs('resume', id, options);
  }

  /**
   * A person's decision on an epoch awaiting approval: written to the invocation's inbox in the
   * store (any process may write it), then — unless `{ run: false }`, which leaves it to `serve` or
   * a later `resume` — consumed here: the invocation continues and its journal records the decision.
   * Without `run`, the handle returned is a finished one reporting `awaiting_approval`.
   */
  async approve(id: string, decision: { decision: 'approved' | 'rejected'; by: string; note?: string }, options: { run?: boolean; rekey?: boolean; tenant?: string } = {}): Promise<InvocationHandle> {
    // Another tenant's invocation is unknown here: nothing of it is read further, and its inbox is not written.
    this.checkGenesis(id, (await this.options.store.read(id, 0, 1))[0], options.tenant ?? this.options.tenant);
    // An ended run keeps the snapshot of its last rest (none is taken of a sealed run): its journal says it ended.
    if ((await this.options.store.tail(id))?.kind === 'invocation.sealed') {
      throw new RuntimeUsageError('runtime.not_awaiting_approval', `invocation ${id} is not awaiting approval: it has ended (${await invocationStatus(this.options.store, id)}, sealed)`);
    }
    const snapshot = await this.options.store.getSnapshot(id);
    const value = (snapshot?.data as { value?: unknown } | undefined)?.value;
    if (value !== 'awaitingApproval') {
      throw new RuntimeUsageError('runtime.not_awaiting_approval', `invocation ${id} is not awaiting approval (its last snapshot is in ${JSON.stringify(value ?? 'no snapshot')})`);
    }
    // A cancel waiting in the inbox is never replaced by a decision.
    if ((await this.options.store.peekInbox(id).catch(() => undefined))?.type === 'cancel') {
      throw new RuntimeUsageError('runtime.cancel_pending', `invocation ${id} has a cancel waiting in its inbox: it ends cancelled when it is next taken up (weft resume ${id}, or weft serve); an approval cannot replace it`);
    }
    // Continuing here seals with this runtime's key: a key the journal is not sealed by is refused before the inbox is written.
    if (options.run !== false && !options.rekey) this.checkSealKey('approve', id, await this.sealKeyOf(id), false);
    await this.options.store.putInbox(id, { type: 'approval', ...decision, at: (this.options.now?.() ?? new Date()).getTime() });
    if (options.run === false) return InvocationHandle.finished({ id, status: 'awaiting_approval', journal: this.pathOf(id) });
    return this.resumeAs('approve', id, { ...(options.rekey ? { rekey: true } : {}), ...(options.tenant === undefined ? {} : { tenant: options.tenant }) });
  }

  /**
   * Fork `parentId` at the end of its epoch `atEpoch` onto a new pin (fork.ts): a new invocation —
   * same tenant and intent, the pin with `library`, `model`, `policy` changed as asked — whose journal
   * opens with its pin and `invocation.forked` (the parent, the hash of the parent's `epoch.closed`
   * of that epoch, what was re-pinned, the state at that boundary), then runs live from epoch
   * `atEpoch + 1`. The parent, unless it had ended, must be at rest (hibernated, awaiting approval,
   * asleep, suspended) and free: it ends `superseded` and sealed, naming the fork.
   *
   * Refused with nothing written: an epoch the parent did not close; world effects the parent
   * applied after it and did not compensate (named: the fork would apply them again under new
   * keys); a parent held by a live process (named), running, interrupted, or already superseded by
   * another fork; another tenant's parent (unknown, as resume says); a new pin this runtime cannot
   * run. Crash-safe: the parent is superseded first, naming the fork's id (derived from the parent,
   * the epoch and the new pin), then the fork is written in one durable append; asking for the same
   * fork again finishes what a crash left, or attaches to the fork that exists.
   */
  async fork(parentId: string, options: ForkOptions): Promise<InvocationHandle> {
    if (!Number.isSafeInteger(options.atEpoch) || options.atEpoch < 1) throw new RuntimeUsageError('fork.bad_epoch', `fork: atEpoch must be an epoch number (1, 2, …), not ${JSON.stringify(options.atEpoch)}`);
    await this.askHolderToRest(parentId, options);
    return this.forkAtRest(parentId, options);
  }

  /**
   * One writer per journal: a parent held by a live runtime is asked, through its inbox (as a cancel
   * is), to come to rest at its next epoch boundary, and this waits for it — then the fork goes on
   * from wherever the parent rests (a boundary later than asked for is refused there, naming the
   * effects it applied after it). Refused, naming the holder, when it does not rest within
   * `waitMs`; its request is withdrawn. Another tenant's parent is unknown before anything is written.
   */
  private async askHolderToRest(parentId: string, options: ForkOptions): Promise<void> {
    const store = this.options.store;
    this.checkGenesis(parentId, (await store.read(parentId, 0, 1))[0], options.tenant ?? this.options.tenant);
    const holder = await store.holder(parentId).catch(() => undefined);
    if (!holder?.live) return;
    const waiting = await store.peekInbox(parentId).catch(() => undefined);
    if (waiting?.type === 'cancel') return; // forkAtRest refuses it: the cancel is the parent's to honour
    const waitMs = options.waitMs ?? 60_000;
    if (waitMs <= 0) throw this.heldRefusal(parentId, holder.writer);
    const request: InboxMessage = { type: 'rest', by: `weft fork (${this.writerId})`, reason: `a fork at the end of epoch ${options.atEpoch} waits for it to rest`, at: (this.options.now?.() ?? new Date()).getTime() };
    await store.putInbox(parentId, request);
    const until = Date.now() + waitMs;
    for (;;) {
      const now = await store.holder(parentId).catch(() => undefined);
      if (!now?.live) return;
      if (Date.now() >= until) {
        // Withdrawn, unless something else has taken the inbox's one place meanwhile.
        const left = await store.peekInbox(parentId).catch(() => undefined);
        if (left?.type === 'rest' && left.at === request.at && left.by === request.by) await store.clearInbox(parentId).catch(() => undefined);
        throw new ForkRefusedError(
          'fork.parent_held',
          `cannot fork ${parentId}: it is held live by ${now.writer}, which was asked through its inbox to come to rest at its next epoch boundary and did not within ${Math.round(waitMs / 1000)} s ` +
            `(a long step, or a model call, holds it between boundaries). Ask again later, or hibernate or cancel it there. Nothing was written`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  private async forkAtRest(parentId: string, options: ForkOptions): Promise<InvocationHandle> {
    const { atEpoch } = options;
    if (!Number.isSafeInteger(atEpoch) || atEpoch < 1) throw new RuntimeUsageError('fork.bad_epoch', `fork: atEpoch must be an epoch number (1, 2, …), not ${JSON.stringify(atEpoch)}`);
    const key = this.options.signingKey;
    if (!key) throw new RuntimeUsageError('runtime.no_signing_key', 'runtime.fork: this runtime has no signing key, and a fork is sealed by the key it starts with (and seals the parent it supersedes): pass createRuntime({ signingKey })');
    await this.ready();
    const store = this.options.store;
    const records = await store.read(parentId);
    this.checkGenesis(parentId, records[0], options.tenant ?? this.options.tenant);
    const report = verifyRecords(records);
    if (!report.ok) throw new ForkRefusedError('fork.parent_damaged', `cannot fork ${parentId}: its journal does not verify (${report.error!.message}); nothing was written`);
    const parentPinned = records[0] as JournalRecord<'invocation.pinned'>;
    const parentPin = parentPinned.body.pin;
    // Superseded already: only the same fork asked again (its epoch, its id if one is given) goes on; anything else is a second run from one lineage point.
    const superseded = records.find((r) => r.kind === 'invocation.superseded') as JournalRecord<'invocation.superseded'> | undefined;
    if (superseded && (superseded.body.atEpoch !== atEpoch || (options.id !== undefined && options.id !== superseded.body.by))) {
      throw supersededRefusal(parentId, superseded.body, (await store.length(superseded.body.by).catch(() => 0)) > 0);
    }
    // A shadow run without shadow results changed nothing its next epoch could observe: nothing can go on from after it.
    if (parentPin.shadow?.results === 'none' && records.some((r) => r.kind === 'step.shadowed' && r.epoch <= atEpoch)) {
      throw new ForkRefusedError('fork.shadow_parent', `cannot fork ${parentId} at epoch ${atEpoch}: it is a shadow run whose world effects by then were shadowed with no shadow result, so the world a fork would observe does not show them; start a real run (weft run without --shadow). Nothing was written`);
    }
    // A cancel someone asked for is not carried on elsewhere: it is the parent's to honour first.
    if ((await store.peekInbox(parentId).catch(() => undefined))?.type === 'cancel') {
      throw new ForkRefusedError('fork.cancel_pending', `cannot fork ${parentId}: a cancel waits in its inbox; it ends cancelled when it is next taken up (weft resume ${parentId}, or weft serve). Nothing was written`);
    }
    const boundary = boundaryOf(parentId, records, atEpoch);
    // The parent's whole journal, replayed over what it pinned: each epoch's plan, and its state at the boundary.
    const parentLibrary = await this.checkPin('replay', parentPinned, [], false);
    const history = await parentHistory(records, this.replayDeps(parentLibrary, parentPin.library), atEpoch);
    const after = worldEffects(records, history.plans, (epoch) => epoch > atEpoch);
    if (after.length > 0) throw effectsAfterRefusal(parentId, atEpoch, after);
    const state = await this.forkStateOf(parentId, records.slice(0, boundary.seq + 1), parentLibrary, atEpoch, hasFlag(parentPin, FLAG_LINEAGE_EFFECTS));

    // The new pin: the parent's, with what was asked changed; this runtime must be able to run it.
    const library = await this.forkLibrary(options.library, parentLibrary);
    const digest = libraryDigest(library);
    const policy = options.policy === undefined ? parentPin.policy : typeof options.policy === 'string' ? options.policy : options.policy.id;
    if (typeof options.policy === 'object' && !this.policies().some((p) => p.id === policy)) this.forkPolicies.push(options.policy);
    // A rule pack is filed by its digest, as a start files it, so any process finds the pack the fork pins.
    const pack = options.policy;
    if (typeof pack === 'object' && isPackPolicy(pack)) await this.putBlobOnce(pack.digest, () => packBytes(pack.pack));
    const modelPin = options.model ? { id: options.model.id, params: pinnedModelParams(options.model) } : parentPin.model;
    const pin: Pin = { ...parentPin, library: digest, model: modelPin, policy };
    const id = options.id ?? forkId(parentId, atEpoch, pin);
    const model = options.model ?? this.options.model;
    const mismatches: PinMismatch[] = [...compareEvaluables(library, this.options.evaluables), ...comparePolicy(pin.policy, this.policies().map((p) => p.id))];
    mismatches.push(...compareModel(pin.model, model ? { id: model.id, params: pinnedModelParams(model) } : undefined));
    if (hasFlag(pin, FLAG_DECLARED_SPEND) && this.declaredSpenders !== undefined) mismatches.push(...compareSpenders(pin.spenders ?? [], this.declaredSpenders, libraryActuators(library)));
    if (mismatches.length > 0) throw new PinMismatchError(parentId, 'fork', mismatches);
    // The fork acts in its parent's world (the lineage's first invocation's).
    const world = records[1]?.kind === 'invocation.forked' ? ((records[1] as JournalRecord<'invocation.forked'>).body.world ?? (records[1] as JournalRecord<'invocation.forked'>).body.parent) : parentId;
    const body: ForkedBody = { parent: parentId, parentSeq: boundary.seq, parentHash: boundary.hash, atEpoch, repinned: repinnedFields(parentPin, pin), world, state };
    const { tenant, intent, intentCut } = parentPinned.body;

    // The fork exists already: the same fork asked again (attach), or another one under that id (refused).
    const exists = (await store.length(id)) > 0;
    if (exists) {
      const head = await store.read(id, 0, 2);
      const mine = head[0]?.kind === 'invocation.pinned' && head[1]?.kind === 'invocation.forked' &&
        canonicalize({ tenant, intent, pin }) === canonicalize({ tenant: (head[0] as JournalRecord<'invocation.pinned'>).body.tenant, intent: (head[0] as JournalRecord<'invocation.pinned'>).body.intent, pin: (head[0] as JournalRecord<'invocation.pinned'>).body.pin }) &&
        canonicalize(body) === canonicalize(head[1].body);
      if (!mine) throw new ForkRefusedError('fork.id_conflict', `cannot fork ${parentId} as ${id}: invocation ${id} exists and is not this fork (another parent, epoch or pin); give another --id. Nothing was written`);
    }

    // The parent: ended (nothing to supersede), superseded by this fork (a crash left the rest), or at rest and free.
    const parentTail = records.at(-1)!;
    if (superseded && superseded.body.by !== id) throw supersededRefusal(parentId, superseded.body, (await store.length(superseded.body.by).catch(() => 0)) > 0);
    const reason = options.reason ?? `forked at the end of epoch ${atEpoch}${body.repinned.length ? ` onto a new ${body.repinned.join(', ')}` : ''}`;
    if (parentTail.kind !== 'invocation.sealed') await this.supersede(parentId, records, parentLibrary, { by: id, atEpoch, reason });

    if (exists) return this.resume(id, { tenant });
    await this.putBlobOnce(digest, () => canonicalBytes(library));
    await this.putBlobOnce(key.keyId, () => hexToBytes(key.publicKey));
    await store.putMetadata(id, { ...this.domainMetadata(digest, library), sealKey: key.keyId });
    let writer: JournalWriter;
    try {
      writer = await JournalWriter.create(store, { invocation: id, tenant, intent, pin, ...(intentCut ? { intentCut } : {}), forkOf: forkOfBody(body) }, this.writerOptions(), [{ kind: 'invocation.forked', epoch: 0, body }]);
    } catch (err) {
      // Created meanwhile by another process asking for the same fork: attach to it.
      if ((await store.length(id).catch(() => 0)) > 0) return this.resume(id, { tenant });
      throw err;
    }
    const input = inputFromJournal(await store.read(id, 0, 2));
    return this.run(writer, library, input, [], undefined, key.keyId, model);
  }

  /** What replay needs to re-run a journal pinned to `library` (its digest `digest`) here. */
  private replayDeps(library: Library, digest: string) {
    return {
      loadLibrary: async (asked: string) => {
        if (asked !== digest) throw new RuntimeUsageError('runtime.library_missing', `replay asked for library ${asked}, which the journal did not pin`);
        return library;
      },
      policy: (id: string) => this.policyById(id),
      evaluables: this.options.evaluables,
      observe: this.options.observe,
      dispatcher: this.dispatcher,
    };
  }

  /** The state at the end of epoch `atEpoch`, from the parent's records up to that boundary (what `invocation.forked` records, and replay re-derives). */
  private async forkStateOf(parentId: string, upToBoundary: readonly JournalRecord[], library: Library, atEpoch: number, lineage: boolean) {
    const digest = (upToBoundary[0] as JournalRecord<'invocation.pinned'>).body.pin.library;
    const history = await parentHistory(upToBoundary, this.replayDeps(library, digest), atEpoch);
    if (!history.boundary) throw new ForkRefusedError('fork.no_boundary', `cannot fork ${parentId} at epoch ${atEpoch}: replaying its journal did not reach the start of epoch ${atEpoch + 1}`);
    return forkState(history.boundary, worldEffects(upToBoundary, history.plans, (epoch) => epoch <= atEpoch), lineage ? inheritedState(upToBoundary) : undefined);
  }

  /** The library a fork pins: the parent's, one given, or one of this runtime's (by name or digest) or the store's (by digest). */
  private async forkLibrary(asked: Library | string | undefined, parentLibrary: Library): Promise<Library> {
    if (asked === undefined) return parentLibrary;
    if (typeof asked !== 'string') return validateLibrary(asked);
    const found = this.options.libraries.find((l) => l.name === asked) ?? (await this.pinnedLibrary(asked, []));
    if (!found) throw new RuntimeUsageError('runtime.unknown_library', `fork: no library named or with digest ${asked}; this runtime has ${this.options.libraries.map((l) => `${l.name} (${this.digests.get(l)!.slice(0, 12)})`).join(', ')}`);
    return found;
  }

  /**
   * End a resting parent `superseded`, sealed, naming the fork: its lease is taken (a live holder is
   * named and refused), its machine restarted from its snapshot in its resting state and driven by
   * the `supersede` event, which records `invocation.superseded` and the seal.
   */
  private async supersede(parentId: string, records: readonly JournalRecord[], library: Library, supersession: { by: string; atEpoch: number; reason: string }): Promise<void> {
    const store = this.options.store;
    const holder = await store.holder(parentId).catch(() => undefined);
    if (holder?.live) throw this.heldRefusal(parentId, holder.writer);
    const status = await invocationStatus(store, parentId);
    const snapshot = await store.getSnapshot(parentId);
    const context = (snapshot?.data as { context?: { suspension?: { class?: string } | null } } | undefined)?.context;
    if (!SUPERSEDABLE.has(status) || !snapshot || snapshot.seq !== records.length) {
      throw new ForkRefusedError(
        'fork.parent_not_at_rest',
        `cannot fork ${parentId}: it is ${status}, not at rest — a parent is superseded only while it rests (hibernated, awaiting approval, asleep, suspended). ` +
          `Resume it (or let weft serve take it over) until it rests, or hibernate it, then fork. Nothing was written`,
      );
    }
    if (status === 'suspended' && context?.suspension?.class === 'runtime') {
      throw new ForkRefusedError('fork.parent_not_at_rest', `cannot fork ${parentId}: it is suspended by a runtime error that its journal does not record; resume it first (weft resume ${parentId}) until it rests, then fork. Nothing was written`);
    }
    const sealKey = this.checkSealKey('resume', parentId, await this.sealKeyOf(parentId), false);
    let writer: JournalWriter;
    try {
      writer = await JournalWriter.open(store, parentId, this.writerOptions());
    } catch (err) {
      if (err instanceof LeaseHeldError) throw this.heldRefusal(parentId, err.holder);
      throw err;
    }
    if (writer.seq !== records.length) {
      await writer.close().catch(() => undefined);
      throw new ForkRefusedError('fork.parent_moved', `cannot fork ${parentId}: its journal grew while the fork was being made (another process ran it); ask again. Nothing was written`);
    }
    const input = inputFromJournal(records);
    const handle = this.run(writer, library, input, [], { seq: snapshot.seq, tail: snapshot.hash, data: snapshot.data }, sealKey?.to ?? (await this.sealKeyOf(parentId))?.keyId);
    handle.send({ type: 'supersede', ...supersession });
    const result = await handle.done;
    if (result.status !== 'superseded') {
      throw new WeftError('fork.supersede_failed', 'permanent', `fork: superseding ${parentId} stopped ${result.status}${result.reason ? ` (${result.reason})` : ''}; ask for the same fork again to finish it`);
    }
    // A decision left in its inbox belongs to a run that has ended.
    await store.clearInbox(parentId).catch(() => undefined);
  }

  private heldRefusal(parentId: string, holder: string): ForkRefusedError {
    return new ForkRefusedError(
      'fork.parent_held',
      `cannot fork ${parentId}: it is held live by ${holder} — one writer per journal. Cancel or hibernate it there (or wait until it rests), then fork. Nothing was written`,
    );
  }

  /**
   * A fork's replay starts here: its parent must be in this store, of the same tenant and intent,
   * its journal verifying up to `parentSeq` where the record is the `epoch.closed` of `atEpoch` with
   * hash `parentHash`, and the state re-derived from those records must be the state recorded. A
   * parent that is a fork itself is checked against its own parent the same way, up the lineage.
   */
  private async checkForkParent(pinned: JournalRecord<'invocation.pinned'>, forked: JournalRecord<'invocation.forked'>): Promise<void> {
    const fork = pinned.body.invocation;
    const { parent, parentSeq, parentHash, atEpoch, state, world } = forked.body;
    const records = await this.options.store.read(parent, 0, parentSeq + 1).catch((err: unknown) => {
      throw new ForkParentError(fork, parent, `cannot be read in ${this.options.store.name} (${(err as Error).message})`);
    });
    // The parent's tenant first: of another tenant, nothing of it is said (not even how long it is).
    const head = records[0];
    if (head?.kind === 'invocation.pinned' && (head as JournalRecord<'invocation.pinned'>).body.tenant !== pinned.body.tenant) {
      throw new ForkParentError(fork, parent, `is not in ${this.options.store.name} as a parent of this fork's tenant: replay the fork where its parent's journal is`);
    }
    if (records.length !== parentSeq + 1) throw new ForkParentError(fork, parent, `is not in ${this.options.store.name} as far as seq ${parentSeq} (it has ${records.length} records): replay the fork where its parent's journal is`);
    const first = records[0] as JournalRecord<'invocation.pinned'>;
    if (first.kind !== 'invocation.pinned' || first.body.invocation !== parent) throw new ForkParentError(fork, parent, 'does not start with its own invocation.pinned');
    if (first.body.tenant !== pinned.body.tenant || first.body.intent !== pinned.body.intent) throw new ForkParentError(fork, parent, 'has another tenant or intent than the fork');
    const report = verifyRecords(records);
    if (!report.ok) throw new ForkParentError(fork, parent, `does not verify up to seq ${parentSeq}: ${report.error!.message}`);
    const boundary = records[parentSeq]!;
    if (boundary.hash !== parentHash || boundary.kind !== 'epoch.closed' || boundary.epoch !== atEpoch) {
      throw new ForkParentError(fork, parent, `has at seq ${parentSeq} a ${boundary.kind} of epoch ${boundary.epoch} with hash ${boundary.hash}, not the epoch.closed of epoch ${atEpoch} with hash ${parentHash} the fork names (the parent's journal was changed)`);
    }
    const parentForked = records[1]?.kind === 'invocation.forked' ? (records[1] as JournalRecord<'invocation.forked'>).body : undefined;
    const parentWorld = parentForked ? (parentForked.world ?? parentForked.parent) : parent;
    if (world !== undefined && world !== parentWorld) throw new ForkParentError(fork, parent, `acts in world ${parentWorld}, not the world ${world} the fork names`);
    if (parentForked) {
      checkForkOf(first, records[1] as JournalRecord<'invocation.forked'>);
      await this.checkForkParent(first, records[1] as JournalRecord<'invocation.forked'>);
    }
    const library = await this.checkPin('replay', first, [], false);
    const derived = await this.forkStateOf(parent, records, library, atEpoch, hasFlag(pinned.body.pin, FLAG_LINEAGE_EFFECTS));
    if (canonicalize(derived) !== canonicalize(state)) throw new ForkParentError(fork, parent, `gives another state at the end of epoch ${atEpoch} than the fork recorded (recorded ${canonicalize(state).slice(0, 200)}…, re-derived ${canonicalize(derived).slice(0, 200)}…)`);
  }

  /**
   * Ask an invocation to stop (see cancel.ts): the request goes to its inbox, then — if no live
   * runtime holds it — this runtime takes it up and, resting, it stops here: `cancel.requested`, the
   * current epoch's effects compensated in reverse order, `invocation.cancelled` (listing the
   * effects that stay done), sealed. Held by a live runtime, that one sees the request before its
   * next step; this waits (up to `waitMs`) for the journal to end. Already ended: a finished handle
   * with its status, and nothing is written. Another tenant's id is unknown, as for approve.
   */
  async cancel(id: string, options: CancelOptions = {}): Promise<InvocationHandle> {
    await this.ready();
    const store = this.options.store;
    const tenant = options.tenant ?? this.options.tenant;
    this.checkGenesis(id, (await store.read(id, 0, 1))[0], tenant);
    const ended = await cancelledHandle(store, id, this.pathOf(id), 'before');
    if (ended) return ended;
    // Taken up here (no live runtime holds it), it is sealed by this runtime's key: another key is refused before the inbox is written.
    if (!(await store.holder(id).catch(() => undefined))?.live) this.checkSealKey('cancel', id, await this.sealKeyOf(id), false);
    const since = await store.length(id);
    const waiting = await store.peekInbox(id).catch(() => undefined);
    const message: InboxMessage = waiting?.type === 'cancel' ? waiting : { type: 'cancel', by: options.by ?? 'runtime', reason: options.reason ?? '', at: (this.options.now?.() ?? new Date()).getTime() };
    if (waiting?.type !== 'cancel') await store.putInbox(id, message);
    const resumeOptions = tenant === undefined ? {} : { tenant };
    for (;;) {
      // Held by a live runtime, it is that runtime's to stop (this one need not be able to run it); else this one takes it up.
      if (!(await store.holder(id).catch(() => undefined))?.live) {
        try {
          return await this.resumeAs('cancel', id, { ...resumeOptions, cancel: message });
        } catch (err) {
          if (!(err instanceof LeaseHeldError)) throw err;
        }
      }
      // A live runtime holds it: it sees the request before its next step. Wait for the journal to end, or the lease to come free.
      const waited = await waitForEnd(store, id, this.pathOf(id), options, { message, since });
      if (waited) return waited;
    }
  }

  /**
   * Re-run an invocation over its journal without calling anything; see replay.ts. The source is an
   * id in this runtime's store, a journal file, or records with the libraries they pinned (a bundle).
   * The pin is checked first (library, evaluables, policy, flags, limits — not the model, nor which
   * actuators spend: replay calls none, and reads the spenders from the pin), and a journal filed
   * under another invocation's id is refused.
   */
  async replay(source: string | { journalPath: string } | { records: readonly JournalRecord[]; libraries?: readonly Library[] }, options: { inspect?: InspectionObserver } = {}): Promise<ReplayResult> {
    if (typeof source === 'object' && 'journalPath' in source) this.checkFileTenant(source.journalPath);
    const records = typeof source === 'string' ? await this.options.store.read(source) : 'journalPath' in source ? parseJournalFile(source.journalPath) : source.records;
    const bundled = typeof source === 'object' && 'records' in source ? (source.libraries ?? []) : [];
    const first = records[0];
    if (typeof source === 'string') this.checkGenesis(source, first, this.options.tenant);
    // Records handed in: a scoped runtime replays only its tenant's, as for an id or a file.
    else if ('records' in source && this.options.tenant !== undefined) {
      const named = first?.kind === 'invocation.pinned' ? (first as JournalRecord<'invocation.pinned'>).body.invocation : '(no pin)';
      this.checkTenant(named, first, this.options.tenant);
    }
    // A journal that does not start with its pin is refused by replayJournal's own verification.
    const library = first?.kind === 'invocation.pinned' ? await this.checkPin('replay', first as JournalRecord<'invocation.pinned'>, bundled, false) : undefined;
    // A fork is proven by its parent: the parent's journal up to the boundary, and the state re-derived from it.
    if (first?.kind === 'invocation.pinned' && (records[1]?.kind === 'invocation.forked' || (first as JournalRecord<'invocation.pinned'>).body.forkOf !== undefined)) {
      const report = verifyRecords(records.slice(0, 2));
      if (!report.ok) throw report.error!;
      checkForkOf(first as JournalRecord<'invocation.pinned'>, records[1]);
      await this.checkForkParent(first as JournalRecord<'invocation.pinned'>, records[1] as JournalRecord<'invocation.forked'>);
    }
    return replayJournal(records, {
      loadLibrary: async (digest: string) => {
        if (!library || digest !== (first as JournalRecord<'invocation.pinned'>).body.pin.library) throw new RuntimeUsageError('runtime.library_missing', `replay asked for library ${digest}, which the journal did not pin`);
        return library;
      },
      policy: (id: string) => this.policyById(id),
      evaluables: this.options.evaluables,
      observe: this.options.observe,
      dispatcher: this.dispatcher,
      // A replay is shown to an observer only when asked: the runtime's own observer watches live runs.
      ...(options.inspect ? { inspect: guardedObserver(options.inspect) } : {}),
    });
  }

  /** Verify a journal (by id or file) offline: chain, schemas, and the seal by `publicKey`. */
  async verify(source: string | { journalPath: string }, publicKey?: PublicKey): Promise<JournalReport> {
    if (typeof source !== 'string') {
      this.checkFileTenant(source.journalPath);
      return readJournalBytes(readFileSync(source.journalPath), publicKey ? { publicKey } : {});
    }
    const records = await this.options.store.read(source);
    if (this.options.tenant !== undefined) this.checkTenant(source, records[0], undefined);
    return verifyRecords(records, publicKey ? { publicKey } : {});
  }

  /**
   * Keep invocations moving until `options.signal` aborts: take over interrupted ones (their
   * runtime died) and retry transient suspensions with backoff; see serve.ts. Several processes may
   * serve one store; the lease decides who runs each invocation.
   */
  serve(options: ServeOptions = {}): Promise<void> {
    return serve(this, options);
  }

  /** With a dispatcher that wakes sleepers (BullMQ): consume durable sleeps' wake-ups (serve does); undefined otherwise. */
  onWake(wake: (invocation: string) => void): Promise<{ close(): Promise<void> }> | undefined {
    return this.dispatcher?.onWake?.(wake);
  }

  /** Every invocation in the store with its status; see list.ts (damaged journals are listed and marked). */
  /** Every invocation in the store — of the runtime's tenant only, when it is scoped to one. */
  async list(): Promise<InvocationSummary[]> {
    const all = await listInvocations(this.options.store);
    const scope = this.options.tenant;
    return scope === undefined ? all : all.filter((row) => row.tenant === scope);
  }

  /** The invocations that have not ended (what `serve` polls); with Redis, at a cost that does not grow with the ended ones. */
  async listOpen(options: { repair?: boolean } = {}): Promise<InvocationSummary[]> {
    const open = await listOpenInvocations(this.options.store, options);
    const scope = this.options.tenant;
    return scope === undefined ? open : open.filter((row) => row.tenant === scope);
  }

  /** Where the store keeps this invocation's journal file, when it is a file store. */
  journalPath(id: string): string | undefined {
    const file = this.pathOf(id);
    // Scoped to a tenant, another tenant's journal has no path here (nor has a missing one): read from its pin.
    if (file !== undefined && this.options.tenant !== undefined && tenantOfJournalFile(file) !== this.options.tenant) return undefined;
    return file;
  }

  /** The journal file of an invocation whose tenant was checked already (journalPath checks it for callers). */
  private pathOf(id: string): string | undefined {
    return journalFileOf(this.options.store, id);
  }

  async close(): Promise<void> {
    await this.dispatcher?.close();
    if (this.ownsStore) await this.options.store.close();
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  /**
   * Continue an invocation from its latest snapshot (or one given) and the journal after it. The
   * genesis must be this id's and the pin must match what this runtime offers — both checked
   * before the lease is taken, so a refusal changes nothing.
   */
  private async resumeAs(command: 'resume' | 'approve' | 'cancel', id: string, options: ResumeOptions & { cancel?: InboxMessage }): Promise<InvocationHandle> {
    await this.ready();
    const store = this.options.store;
    const head = await store.read(id, 0, 2);
    const first = head[0];
    this.checkGenesis(id, first, options.tenant ?? this.options.tenant);
    const pinnedRecord = first as JournalRecord<'invocation.pinned'>;
    const tail = await store.tail(id);
    if (tail?.kind === 'invocation.sealed') {
      // A sealed journal ended completed, failed, handed off or cancelled: its ending record says which.
      return (await cancelledHandle(store, id, this.pathOf(id), command === 'cancel' ? 'before' : 'now'))!;
    }
    const library = await this.checkPin(command, pinnedRecord, [], true);
    // The key in force must be this runtime's — or, asked for, the change is recorded first.
    const stored = await store.getSnapshot(id);
    const inForce = await this.sealKeyOf(id, stored?.seq ?? 0);
    const rekey = this.checkSealKey(command, id, inForce, options.rekey === true);
    const snapshot =
      options.snapshot !== undefined && options.at
        ? { ...options.at, data: options.snapshot }
        : stored
          ? { seq: stored.seq, tail: stored.hash, data: stored.data }
          : undefined;
    const writer = await JournalWriter.open(store, id, this.writerOptions());
    // Under the lease, once more: no other process can re-key now, so the key in force read here is
    // the one this run goes on under, and the metadata is put right after a crash's re-key
    // (key-in-force.ts) with nobody able to re-key behind it.
    try {
      const held = await this.sealKeyOf(id, stored?.seq ?? 0);
      if (held?.keyId !== inForce?.keyId) {
        this.checkSealKey(command, id, held, options.rekey === true);
        throw new RuntimeUsageError('runtime.key_changed', `the key in force for ${id} changed while this ${command} began (another process re-keyed it); nothing was written: ask again`);
      }
      await repairRecordedKey(store, id, held);
    } catch (err) {
      await writer.close().catch(() => undefined);
      throw err;
    }
    // Resumed on purpose, it goes on: a request to rest left by a fork that has given up (or been withdrawn) no longer applies.
    if (command === 'resume' && (await store.peekInbox(id).catch(() => undefined))?.type === 'rest') await store.clearInbox(id).catch(() => undefined);
    try {
      if (rekey?.from !== undefined && rekey.from !== rekey.to) {
        // The new key's public half by its id, as start does, so that export finds the key that seals.
        const key = this.options.signingKey!;
        await this.putBlobOnce(key.keyId, () => hexToBytes(key.publicKey));
        await writer.append({ kind: 'invocation.rekeyed', epoch: tail?.epoch ?? 0, body: { from: rekey.from, to: rekey.to } });
        // The journal now says which key seals; the metadata follows it (were this lost, the journal's re-key still wins).
        // A damaged record is rebuilt here: the journal's re-key says which key seals from now on.
        const meta = await store.getMetadata(id).catch((err: unknown) => {
          if (err instanceof DamagedMetadataError) return undefined;
          throw err;
        });
        await store.putMetadata(id, { ...(meta ?? this.domainMetadata(pinnedRecord.body.pin.library, library)), sealKey: rekey.to });
      }
      const input = inputFromJournal(head);
      const from = snapshot ? snapshot.seq : input.seq;
      const existing = await store.read(id, from);
      const handle = this.run(writer, library, input, existing, snapshot ?? undefined, rekey?.to);
      // Resting, it stops first if it must: a cancel or a passed deadline the journal holds next, or
      // — where the journal ends — one waiting in the inbox, or the pinned deadline passed by now.
      if (RESTING_STATES.has(handle.state?.value ?? '')) {
        const stop = await stopEventFor(store, id, existing, input.pin, this.options.now?.() ?? new Date(), options.cancel);
        if (stop) {
          handle.send(stop);
          return handle;
        }
      }
      // A decision the journal already holds after the snapshot (recorded, then the run stopped) is read back as that decision;
      // else a decision waiting in the inbox is the person's: record it (the inbox is cleared once it is in the journal).
      const decided = existing.find((r) => r.kind !== 'invocation.rekeyed');
      if (handle.state?.value === 'awaitingApproval' && decided?.kind === 'approval.decided') {
        const b = (decided as JournalRecord<'approval.decided'>).body;
        handle.send({ type: 'approval.decided', decision: b.decision, by: b.by, ...(b.note === undefined ? {} : { note: b.note }) });
      } else if (handle.state?.value === 'awaitingApproval' && !(await this.deliverInbox(handle))) {
        // No decision anywhere: it stays awaiting approval, and this run stops there (approve and serve act on it).
        handle.rest();
      }
      // A suspended invocation is resumed by asking: it goes back to the state it suspended in.
      // So is one waiting on a durable sleep: its execute fires the timer if the time has come, else it rests again.
      // A hibernated one is woken: resuming it is the decision to go on (and one woken before, whose
      // journal has gone past its snapshot, reads those records back only once awake).
      const resting = handle.state?.value;
      // A cancel that could not stop it at rest (its journal goes on past the snapshot) wakes it: the run sees the cancel before its next step.
      if ((command === 'resume' || command === 'cancel') && (resting === 'suspended' || resting === 'awaitingTimer' || resting === 'hibernated')) handle.send({ type: 'resume' });
      return handle;
    } catch (err) {
      await writer.close().catch(() => undefined);
      throw err;
    }
  }

  /** Send the decision waiting in the inbox, if there is one; returns whether there was. */
  private async deliverInbox(handle: InvocationHandle): Promise<boolean> {
    const message = await this.options.store.peekInbox(handle.id);
    if (message?.type !== 'approval') return false;
    handle.on('record', (record: JournalRecord) => {
      // Cleared only while it still holds the approval: a cancel written meanwhile stays (the canceller asks again, too).
      if (record.kind === 'approval.decided') {
        void (async () => {
          if ((await this.options.store.peekInbox(handle.id))?.type === 'approval') await this.options.store.clearInbox(handle.id);
        })().catch(() => undefined);
      }
    });
    handle.send({ type: 'approval.decided', decision: message.decision, by: message.by, ...(message.note === undefined ? {} : { note: message.note }) });
    return true;
  }

  /** The journal starts with this invocation's own pin — and, with `tenant`, that tenant's (another's is refused as unknown, as a missing one). */
  private checkGenesis(id: string, first: JournalRecord | undefined, tenant?: string): void {
    this.checkTenant(id, first, tenant);
    const report = verifyRecords([first]);
    if (!report.ok) throw report.error!;
    const belongsTo = (first as JournalRecord<'invocation.pinned'>).body.invocation;
    if (belongsTo !== id) throw new ForeignJournalError(id, belongsTo);
  }

  /**
   * The journal starts with a pin of the call's tenant (tenant-of.ts callScope: `asked` is the
   * call's own tenant; a scoped runtime's scope always applies, and another tenant asked per call
   * is refused) — else it is refused as unknown, with the words a missing id gets.
   */
  private checkTenant(id: string, first: JournalRecord | undefined, asked: string | undefined): void {
    const { tenant, foreign } = callScope(this.options.tenant, asked);
    const unknown = () => new RuntimeUsageError('runtime.unknown_invocation', `no invocation ${id}${tenant === undefined ? '' : ` of tenant ${JSON.stringify(tenant)}`} in ${this.options.store.name}`);
    if (foreign || !first || first.kind !== 'invocation.pinned') throw unknown();
    if (tenant !== undefined && (first as JournalRecord<'invocation.pinned'>).body.tenant !== tenant) throw unknown();
  }

  /** A journal file named to a scoped runtime must be its tenant's: another's (or a missing one) is unknown, as an id is. */
  private checkFileTenant(file: string): void {
    const scope = this.options.tenant;
    if (scope !== undefined && tenantOfJournalFile(file) !== scope) throw new RuntimeUsageError('runtime.unknown_invocation', `no invocation journal ${file} of tenant ${JSON.stringify(scope)}`);
  }

  /**
   * The key in force (seal-key.ts) must be this runtime's signing key. Returns the key in force and
   * the one to seal with — different only when `rekey` asks to change it (the caller records the
   * change) — or undefined when no key is in force (any key seals). Throws SealKeyMismatchError,
   * having written nothing.
   */
  private checkSealKey(command: 'resume' | 'approve' | 'cancel', id: string, inForce: SealKeyInForce | undefined, rekey: boolean): { from: string; to: string } | undefined {
    return refuseOtherKey(command, id, inForce, this.options.signingKey?.keyId, rekey);
  }

  /** The key in force for `id`: its journal's last re-key, else the key its store metadata recorded at start (seal-key.ts). */
  private async sealKeyOf(id: string, snapshotSeq?: number): Promise<SealKeyInForce | undefined> {
    return keyInForce(this.options.store, id, snapshotSeq);
  }

  /**
   * Compare the pin with what this runtime offers — resolving the pinned library on the way (one of
   * this runtime's, one given, or the store's blob) — and return that library; throws
   * PinMismatchError naming every differing field.
   */
  private async checkPin(command: 'resume' | 'approve' | 'cancel' | 'replay', pinned: JournalRecord<'invocation.pinned'>, given: readonly Library[], withModel: boolean): Promise<Library> {
    const { invocation, pin } = pinned.body;
    const library = await this.pinnedLibrary(pin.library, given);
    const mismatches: PinMismatch[] = [];
    if (!library) mismatches.push(libraryMismatch(pin.library, this.options.libraries.map((l) => ({ name: l.name, digest: this.digests.get(l)! }))));
    else mismatches.push(...compareEvaluables(library, this.options.evaluables));
    const pack = this.policies().some((p) => p.id === pin.policy) ? undefined : await readPinnedPack(this.options.store, pin.policy, this.predicates);
    if (pack && 'policy' in pack) this.pinnedPacks.set(pin.policy, pack.policy);
    if (pack && 'mismatch' in pack) mismatches.push(pack.mismatch);
    else mismatches.push(...comparePolicy(pin.policy, this.policies().map((p) => p.id)));
    if (withModel) mismatches.push(...compareModel(pin.model, this.options.model ? { id: this.options.model.id, params: pinnedModelParams(this.options.model) } : undefined));
    mismatches.push(...compareFlags(pin.flags, BEHAVIOUR_FLAGS));
    mismatches.push(...compareLimits(pin.limits, [...Object.keys(DEFAULT_LIMITS), 'stepTimeoutMs']));
    // Which actuators spend: compared when the run goes on here with actuators that declare it; replay reads the pin alone.
    if (command !== 'replay' && hasFlag(pin, FLAG_DECLARED_SPEND) && this.declaredSpenders !== undefined) {
      mismatches.push(...compareSpenders(pin.spenders ?? [], this.declaredSpenders, library ? libraryActuators(library) : undefined));
    }
    if (mismatches.length > 0) throw new PinMismatchError(invocation, command, mismatches);
    return library!;
  }

  /** The pinned library: one of this runtime's, one given (a bundle's), or the store's blob — or undefined. */
  private async pinnedLibrary(digest: string, given: readonly Library[]): Promise<Library | undefined> {
    const known = this.options.libraries.find((l) => this.digests.get(l) === digest) ?? given.find((l) => libraryDigest(l) === digest);
    return known ?? readLibraryBlob(this.options.store, digest);
  }

  private policies(): AdmissionPolicy[] {
    return [this.options.policy ?? allowAll, ...(this.options.policies ?? []), ...this.pinnedPacks.values(), ...this.forkPolicies, allowAll];
  }

  /** Policies a fork was given as objects (fork.ts): known from then on, for the fork's run, resume and replay. */
  private readonly forkPolicies: AdmissionPolicy[] = [];

  private async attach(id: string, intent: string, tenant: string, pin: Pin): Promise<InvocationHandle> {
    const first = (await this.options.store.read(id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    const existing = first.body;
    if (existing.tenant !== tenant) {
      // Another tenant's invocation: say nothing of it — not its intent, not its pin.
      throw new RuntimeUsageError('runtime.id_conflict', `invocation id ${id} cannot be used for tenant ${JSON.stringify(tenant)}: start with another id (or none: the default id is derived from the intent)`);
    }
    if (existing.intent !== intent || canonicalize(existing.pin) !== canonicalize(pin)) {
      // Each differing field by name, never the whole pin (start-conflict.ts).
      throw new RuntimeUsageError('runtime.id_conflict', startConflictMessage(id, startDifferences(existing, { intent, pin })));
    }
    // The same start with another signing key: say so, as resume would (the key is not in the pin).
    const inForce = await this.sealKeyOf(id);
    const offered = this.options.signingKey?.keyId;
    if (inForce && inForce.keyId !== offered) throw new SealKeyMismatchError(id, 'start', inForce.keyId, offered, inForce.rekeyed);
    return this.resume(id);
  }

  private run(writer: JournalWriter, library: Library, input: InvocationInput, existing: JournalRecord[], snapshot: { seq: number; tail: string; data: unknown } | undefined, sealKey: string | undefined, model: Model | undefined = this.options.model): InvocationHandle {
    const start = snapshot ? { seq: snapshot.seq, tail: snapshot.tail } : { seq: input.seq, tail: input.tail };
    const handle = new InvocationHandle(input.invocation, this.pathOf(input.invocation));
    const recorder = new Recorder({ ...start, existing, writer, onRecord: (record, replayed) => handle.emitRecord(record, replayed), ...(sealKey === undefined ? {} : { sealKey }) });
    const policy = this.policyById(input.pin.policy);
    const store = this.options.store;
    // A cancel, once in the journal, has left the inbox (recorder.ts appends it at once, so it is durable by then);
    // so has anything else once the run is sealed (a decision a deadline overtook): nothing reads it any more.
    handle.on('record', (record: JournalRecord) => {
      if (record.kind === 'cancel.requested' || record.kind === 'invocation.sealed') void store.clearInbox(input.invocation).catch(() => undefined);
    });
    // A rule's warning (flag 12) raises an advisory beside the inbox's command slot: never a command.
    handle.on('record', advisoryRaiser(store, input.invocation, () => (this.options.now ? this.options.now().getTime() : Date.now())));
    let inboxLookedAt = Number.NEGATIVE_INFINITY;
    const services: EpochServices = {
      recorder: () => recorder,
      library,
      libraryDigest: input.pin.library,
      policy,
      observe: this.options.observe,
      evaluables: this.options.evaluables,
      model,
      dispatcher: this.dispatcher,
      signingKey: this.options.signingKey,
      sleep: this.options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      onActorError: (err) => handle.noteActorError(err),
      ...(this.options.refusalWaitMs === undefined ? {} : { refusalWaitMs: this.options.refusalWaitMs }),
      ...(this.dispatcher instanceof BullMqDispatcher ? { workerHint: this.dispatcher.workerHint } : {}),
      // Looked at before each step (not again within INBOX_LOOK_MS: a run of quick steps costs no read each) and as each epoch closes.
      inbox: async (where) => {
        const now = Date.now();
        if (where === 'step' && now - inboxLookedAt < INBOX_LOOK_MS) return undefined;
        inboxLookedAt = now;
        const message = await store.peekInbox(input.invocation).catch(() => undefined);
        // Asked to come to rest (a fork waits for it): hibernate at the next epoch boundary. The request stays until the fork takes over, or a resume clears it.
        if (message?.type === 'rest' && handle.state?.context?.hibernateRequested !== true) handle.hibernate();
        return message;
      },
      now: () => (this.options.now ? this.options.now().getTime() : Date.now()),
    };
    const actor = createInvocationActor(services, {
      input,
      ...(snapshot ? { snapshot: snapshot.data as never } : {}),
      ...(this.inspector ? { inspect: this.inspector } : {}),
    });
    // A durable sleep with a dispatcher that wakes sleepers (BullMQ: a delayed job) is woken through `serve`.
    const dispatcher = this.dispatcher;
    if (dispatcher?.scheduleWake) {
      handle.beforeSettle = async (result) => {
        if (result.status === 'waiting_timer' && result.wakeAt) await dispatcher.scheduleWake!(result.id, result.wakeAt);
      };
    }
    handle.attach(actor, this.options.store, writer, this.options.leaseTtlMs ?? 30_000);
    actor.start();
    return handle;
  }

  private writerOptions() {
    return { writer: this.writerId, ttlMs: this.options.leaseTtlMs ?? 30_000, ...(this.options.now ? { now: this.options.now } : { now: () => new Date() }) };
  }

  /** Put a blob whose digest is `digest` in the store (content-addressed, so once per runtime is enough); a failure is retried by the next start. */
  private putBlobOnce(digest: string, bytes: () => Uint8Array): Promise<void> {
    let stored = this.blobsStored.get(digest);
    if (!stored) {
      stored = (async () => {
        const filed = await this.options.store.putBlob(bytes());
        if (filed !== digest) throw new WeftError('runtime.blob_mismatch', 'permanent', `the store filed blob ${digest} under ${filed}`);
      })();
      stored.catch(() => this.blobsStored.delete(digest));
      this.blobsStored.set(digest, stored);
    }
    return stored;
  }

  private pickLibrary(name?: string): Library {
    const found = name === undefined ? this.options.libraries[0] : this.options.libraries.find((l) => l.name === name);
    if (!found) throw new RuntimeUsageError('runtime.unknown_library', `no library named ${name}; this runtime has ${this.options.libraries.map((l) => l.name).join(', ')}`);
    return found;
  }

  private policyById(id: string): AdmissionPolicy {
    const found = this.policies().find((p) => p.id === id);
    if (!found) throw new WeftError('runtime.policy_missing', 'permanent', `the invocation is pinned to policy ${id}, which this runtime does not have; pass it in createRuntime({ policies })`);
    return found;
  }

}

function parseJournalFile(path: string): JournalRecord[] {
  const report = readJournalBytes(readFileSync(path));
  if (!report.ok) throw report.error!;
  return report.records;
}

export function createRuntime(options: RuntimeOptions): Runtime {
  return new Runtime(options);
}

/** The dispatcher the options imply: BullMQ workers in the Redis mode unless asked otherwise, else in-process. */
function chooseDispatcher(options: ResolvedOptions): Dispatcher | undefined {
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

/** RuntimeOptions with the domain's parts filled in. */
export type ResolvedOptions = Omit<RuntimeOptions, 'libraries' | 'observe' | 'store'> & { store: JournalStore; libraries: readonly Library[]; observe: string };

/** Fill in what the domain supplies; explicit options win. */
function resolveDomain(options: RuntimeOptions): ResolvedOptions {
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

/**
 * The model parameters an invocation pins: those that shape replies. `baseUrl` is dropped (an
 * endpoint is where the model is, not which model it is); older journals that pinned it are
 * compared without it.
 */
export function pinnedModelParams(model: Model | undefined): Record<string, string | number | boolean | null> {
  const params: Record<string, string | number | boolean | null> = {};
  for (const [key, value] of Object.entries(model?.params ?? {})) if (!UNPINNED_MODEL_PARAMS.has(key)) params[key] = value;
  return params;
}
