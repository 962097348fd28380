/**
 * The executor: the small core that every verb of the runtime (start.ts, resume.ts, approve.ts,
 * cancel-request.ts, fork-run.ts, replay-source.ts, verify.ts) takes instead of the whole `Runtime`.
 * It is the client's core (client-core.ts: the store, the tenant scope, the clock, the writer id,
 * the libraries and their digests, the limits, what a start pins, the blobs it files, the key in
 * force) and what only a process that runs machines needs — the dispatcher, the policies known
 * (given, read back from the store's policy-pack blobs, handed to a fork), the inspection observer —
 * with the acts only it does:
 *
 * - `run(…)`: under the lease a JournalWriter holds, start the invocation's machine (a live run, a
 *   resume from a snapshot, a parent driven to `superseded`) and return its handle;
 * - what a pin names, looked up to run it: libraries by digest, also the store's blob
 *   (`pinnedLibrary`), policies by id (`policyById`), what replay needs (`replayDeps`).
 *
 * Refusals before anything is written (the journal is this id's and this tenant's; the pin is one
 * this runtime can run) are call-checks.ts. `Runtime` (runtime.ts) is the public face over this.
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { Model } from '../actors/model/model.js';
import { WeftError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import type { JournalWriter } from '../journal/writer.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { readLibraryBlob } from '../htn/library/stored.js';
import type { InvocationInput } from '../machines/context.js';
import { allowAll, type AdmissionPolicy } from '../machines/policy.js';
import type { PackPolicy } from '../policy/compile.js';
import { predicateRegistry, type PredicateRegistry } from '../policy/predicates.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import { BullMqDispatcher } from '../queue/bullmq.js';
import { advisoryRaiser } from './advisories.js';
import { ClientCore } from './client-core.js';
import { INBOX_LOOK_MS } from './cancel.js';
import { createInvocationActor, type EpochServices } from './epoch-actors.js';
import { RuntimeUsageError } from './errors.js';
import { InvocationHandle } from './handle.js';
import { guardedObserver } from './inspection.js';
import type { ReplayDeps } from './replay.js';
import { Recorder } from './recorder.js';
import { observeRun } from '../telemetry/observe-run.js';
import { chooseDispatcher, resolveDomain, type ResolvedOptions, type RuntimeOptions } from './runtime-options.js';

/** Where a run starts from: a snapshot (its seq, the hash it ends at, the machine's persisted state). */
export interface RunSnapshot {
  seq: number;
  tail: string;
  data: unknown;
}

export class Executor extends ClientCore {
  /** The options with the domain's parts filled in: what this runtime actually runs. */
  declare readonly options: ResolvedOptions;
  readonly dispatcher?: Dispatcher;
  /** Policy packs read back from the store's blobs for invocations that pinned them (pack-blob.ts), by policy id. */
  readonly pinnedPacks = new Map<string, PackPolicy>();
  /** Policies a fork was given as objects (fork-run.ts): known from then on, for the fork's run, resume and replay. */
  readonly forkPolicies: AdmissionPolicy[] = [];
  readonly predicates: PredicateRegistry;
  /** The runtime's inspection observer, unable to throw into a run (inspection.ts). */
  readonly inspector: Observer<InspectionEvent> | undefined;

  constructor(given: RuntimeOptions) {
    super(resolveDomain(given), given.store === undefined);
    const options = this.options;
    this.dispatcher = options.dispatcher ?? chooseDispatcher(options);
    this.inspector = options.inspect ? guardedObserver(options.inspect) : undefined;
    this.predicates = predicateRegistry(options.policyPredicates);
  }

  /** Whether the dispatcher gets a shadow result from `actuator` (what a shadow start pins: shadow-pin.ts). */
  override canShadow(actuator: string): boolean {
    return this.dispatcher?.canShadow?.(actuator) === true;
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
    // Metrics, and spans when a tracer provider is registered (telemetry/): they read records, never write one.
    observeRun(handle, {
      invocation: input.invocation,
      tenant: input.tenant,
      pin: input.pin,
      fresh: existing.length === 0 && snapshot === undefined,
      marks: async () => (await store.getMetadata(input.invocation))?.redact,
      ...(input.from === undefined ? {} : { forkOf: async () => ((await store.read(input.invocation, 0, 1))[0] as JournalRecord<'invocation.pinned'> | undefined)?.body.forkOf?.parent }),
      readOnly: (actuator) => library.operators.find((op) => op.actuator?.actuator === actuator)?.readOnly,
    });
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
