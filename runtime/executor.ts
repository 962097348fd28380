/**
 * The executor: the small core that every verb of the runtime (start.ts, resume.ts, approve.ts,
 * cancel-request.ts, fork-run.ts, replay-source.ts, verify.ts) takes instead of the whole `Runtime`.
 * It holds what `createRuntime(options)` resolved once — the options with the domain's parts filled
 * in, the store, the dispatcher, this process's writer id (its leases), the limits, each library's
 * digest, the policies known (given, read back from the store's rule-pack blobs, handed to a fork) —
 * and the few acts the verbs share:
 *
 * - `ready()`: before the first operation over a RedisStore it opened itself, the server must keep
 *   what it acknowledges (or the user said `relaxed`);
 * - `run(…)`: under the lease a JournalWriter holds, start the invocation's machine (a live run, a
 *   resume from a snapshot, a parent driven to `superseded`) and return its handle;
 * - `genesisOf(id)`: the invocation's pin record — the one runtime/open.ts read when the runtime
 *   was opened for it (`opened`), so a command reads its pin once;
 * - what a pin names, looked up: libraries by name or digest (`pickLibrary`, `pinnedLibrary`),
 *   policies by id (`policyById`), the key in force (`sealKeyOf`, `checkSealKey`), and the blobs a
 *   start or a fork files by digest (`putBlobOnce`).
 *
 * Refusals before anything is written (the journal is this id's and this tenant's; the pin is one
 * this runtime can run) are call-checks.ts. `Runtime` (runtime.ts) is the public face over this.
 */
import { hostname } from 'node:os';
import type { InspectionEvent, Observer } from 'xstate';
import type { Model } from '../actors/model/model.js';
import { WeftError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import { journalFileOf, type InvocationMetadata, type JournalStore } from '../journal/store.js';
import { checkRedisDurability, RedisStore } from '../stores/redis.js';
import { durabilityRefusal, relaxedDurabilityWarning } from '../stores/redis-durability.js';
import type { JournalWriter } from '../journal/writer.js';
import { marksForLibrary } from '../journal/redaction.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { readLibraryBlob } from '../htn/library/stored.js';
import { validateLibrary } from '../htn/library/validate.js';
import type { InvocationInput, InvocationLimits } from '../machines/context.js';
import { allowAll, type AdmissionPolicy } from '../machines/policy.js';
import { pinnedSpenders, spendDeclarationProblem, type PinnedSpender } from '../machines/spenders.js';
import type { PackPolicy } from '../policy/compile.js';
import { predicateRegistry, type PredicateRegistry } from '../policy/predicates.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import { BullMqDispatcher } from '../queue/bullmq.js';
import { advisoryRaiser } from './advisories.js';
import { INBOX_LOOK_MS } from './cancel.js';
import { createInvocationActor, type EpochServices } from './epoch-actors.js';
import { RuntimeUsageError } from './errors.js';
import { InvocationHandle } from './handle.js';
import { guardedObserver } from './inspection.js';
import { keyInForce, refuseOtherKey } from './key-in-force.js';
import { DEFAULT_LIMITS } from './limits.js';
import type { ReplayDeps } from './replay.js';
import { Recorder } from './recorder.js';
import { chooseDispatcher, resolveDomain, type ResolvedOptions, type RuntimeOptions } from './runtime-options.js';
import type { SealKeyInForce } from './seal-key.js';

/** Where a run starts from: a snapshot (its seq, the hash it ends at, the machine's persisted state). */
export interface RunSnapshot {
  seq: number;
  tail: string;
  data: unknown;
}

export class Executor {
  /** The options with the domain's parts filled in: what this runtime actually runs. */
  readonly options: ResolvedOptions;
  readonly dispatcher?: Dispatcher;
  /** Identifies this process in leases and record envelopes. */
  readonly writerId: string;
  readonly limits: InvocationLimits;
  /** Each library's digest, computed once: pinning and resuming look libraries up by it. */
  readonly digests = new Map<Library, string>();
  /** True when the runtime made its store from `redis` (and closes it). */
  readonly ownsStore: boolean;
  /** Policy packs read back from the store's blobs for invocations that pinned them (pack-blob.ts), by policy id. */
  readonly pinnedPacks = new Map<string, PackPolicy>();
  /** Policies a fork was given as objects (fork-run.ts): known from then on, for the fork's run, resume and replay. */
  readonly forkPolicies: AdmissionPolicy[] = [];
  readonly predicates: PredicateRegistry;
  /**
   * What this runtime's actuators declare they spend (flag 2; machines/spenders.ts) — pinned by
   * `start`, compared with the pin on resume — or undefined when it knows no actuators (its own
   * dispatcher, and a domain whose actuators come from a factory). Admission never reads it: it
   * reads the pin.
   */
  readonly declaredSpenders: readonly PinnedSpender[] | undefined;
  /** The runtime's inspection observer, unable to throw into a run (inspection.ts). */
  readonly inspector: Observer<InspectionEvent> | undefined;
  private readiness: Promise<void> | undefined;
  /** Blobs this runtime has put in the store (pinned libraries; the signing key's public half, by its key id), by digest. */
  private readonly blobsStored = new Map<string, Promise<void>>();

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

  get store(): JournalStore {
    return this.options.store;
  }

  /** How long a lease this runtime takes lives unless renewed (the options', else 30 s). */
  get leaseTtlMs(): number {
    return this.options.leaseTtlMs ?? 30_000;
  }

  /** The wall clock of envelopes and inbox messages (never hashed): the options' `now`, else the system's. */
  now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /**
   * Before the first operation of a runtime over a RedisStore it opened itself: the server must keep
   * what it acknowledges (AOF, appendfsync always, noeviction) — or the user said `relaxed`.
   */
  ready(): Promise<void> {
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

  /**
   * Run the invocation's machine under the lease `writer` holds: from `snapshot` (reading `existing`
   * records back, not re-doing them) or from its input, sealing with `sealKey`. Returns its handle at once.
   */
  run(writer: JournalWriter, library: Library, input: InvocationInput, existing: JournalRecord[], snapshot: RunSnapshot | undefined, sealKey: string | undefined, model: Model | undefined = this.options.model): InvocationHandle {
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
    handle.on('record', advisoryRaiser(store, input.invocation, () => this.now().getTime()));
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
      now: () => this.now().getTime(),
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
    handle.attach(actor, this.options.store, writer, this.leaseTtlMs);
    actor.start();
    return handle;
  }

  /** The options of every JournalWriter this runtime opens: its writer id, the lease's lifetime, the envelope clock. */
  writerOptions() {
    return { writer: this.writerId, ttlMs: this.leaseTtlMs, now: () => this.now() };
  }

  /** Put a blob whose digest is `digest` in the store (content-addressed, so once per runtime is enough); a failure is retried by the next start. */
  putBlobOnce(digest: string, bytes: () => Uint8Array): Promise<void> {
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

  /**
   * The store metadata's domain, library and the domain's redaction marks (seal-key.ts adds the key).
   * The marks are written for the library pinned: an operator's marks under its actuator too, since
   * a journal's dispatch names only the actuator (journal/redaction.ts marksForLibrary).
   */
  domainMetadata(digest: string, library: Library): Omit<InvocationMetadata, 'sealKey'> {
    const domain = this.options.domain;
    return { ...(domain ? { domain: domain.name } : {}), library: digest, ...(domain?.redact ? { redact: marksForLibrary(domain.redact, library) } : {}) };
  }

  /** The genesis record of `id` (undefined: none): the one `open` read, else read now. Checked by the caller (call-checks.ts checkGenesis). */
  async genesisOf(id: string): Promise<JournalRecord | undefined> {
    const opened = this.options.opened;
    if (opened?.id === id) return opened.pinned;
    return (await this.options.store.read(id, 0, 1))[0];
  }

  /** The journal file of an invocation whose tenant was checked already (Runtime.journalPath checks it for callers). */
  pathOf(id: string): string | undefined {
    return journalFileOf(this.options.store, id);
  }

  /** The library a start names (default: the first). */
  pickLibrary(name?: string): Library {
    const found = name === undefined ? this.options.libraries[0] : this.options.libraries.find((l) => l.name === name);
    if (!found) throw new RuntimeUsageError('runtime.unknown_library', `no library named ${name}; this runtime has ${this.options.libraries.map((l) => l.name).join(', ')}`);
    return found;
  }

  /** The pinned library: one of this runtime's, one given (a bundle's), or the store's blob — or undefined. */
  async pinnedLibrary(digest: string, given: readonly Library[]): Promise<Library | undefined> {
    const known = this.options.libraries.find((l) => this.digests.get(l) === digest) ?? given.find((l) => libraryDigest(l) === digest);
    return known ?? readLibraryBlob(this.options.store, digest);
  }

  /** Every policy this runtime knows: its own, older versions, policy packs read back for pins, those forks were given. */
  policies(): AdmissionPolicy[] {
    return [this.options.policy ?? allowAll, ...(this.options.policies ?? []), ...this.pinnedPacks.values(), ...this.forkPolicies, allowAll];
  }

  policyById(id: string): AdmissionPolicy {
    const found = this.policies().find((p) => p.id === id);
    if (!found) throw new WeftError('runtime.policy_missing', 'permanent', `the invocation is pinned to policy ${id}, which this runtime does not have; pass it in createRuntime({ policies })`);
    return found;
  }

  /** The key in force for `id`: its journal's last re-key, else the key its store metadata recorded at start (seal-key.ts). */
  sealKeyOf(id: string, snapshotSeq?: number): Promise<SealKeyInForce | undefined> {
    return keyInForce(this.options.store, id, snapshotSeq);
  }

  /**
   * The key in force (seal-key.ts) must be this runtime's signing key. Returns the key in force and
   * the one to seal with — different only when `rekey` asks to change it (the caller records the
   * change) — or undefined when no key is in force (any key seals). Throws SealKeyMismatchError,
   * having written nothing.
   */
  checkSealKey(command: 'resume' | 'approve' | 'cancel', id: string, inForce: SealKeyInForce | undefined, rekey: boolean): { from: string; to: string } | undefined {
    return refuseOtherKey(command, id, inForce, this.options.signingKey?.keyId, rekey);
  }

  /** What replay needs to re-run a journal pinned to `library` (its digest `digest`) here. */
  replayDeps(library: Library | undefined, digest: string): ReplayDeps {
    return {
      loadLibrary: async (asked: string) => {
        if (!library || asked !== digest) throw new RuntimeUsageError('runtime.library_missing', `replay asked for library ${asked}, which the journal did not pin`);
        return library;
      },
      policy: (id: string) => this.policyById(id),
      evaluables: this.options.evaluables,
      observe: this.options.observe,
      dispatcher: this.dispatcher,
    };
  }

  async close(): Promise<void> {
    await this.dispatcher?.close();
    if (this.ownsStore) await this.options.store.close();
  }
}
