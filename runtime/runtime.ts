/**
 * `createRuntime(options)` — Weft's library API. One options type for every mode: the embedded
 * default is a FileStore and the in-process dispatcher; the distributed mode passes other values
 * (a Redis store, a BullMQ dispatcher) to the same options.
 *
 * - `start(intent, opts)` pins (library digest, runtime version and flags, model, seed, asOf,
 *   policy, limits), writes `invocation.pinned`, and runs the machine. Starting an id that exists
 *   attaches to it — or fails clearly if its intent or pin differ.
 * - `resume(id)` re-opens an invocation from its latest snapshot (or from the start) and the
 *   journal's tail: the records after the snapshot are read back, not re-done, then it runs live.
 * - `approve(id, decision)` records a person's decision on a hibernated epoch and continues.
 * - `replay(id | journal)` re-runs the machine over a journal without calling anything, re-deriving
 *   every decomposition; any difference stops with ReplayDivergenceError.
 */
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { createActor, type InspectionEvent, type Observer } from 'xstate';
import type { Actuator } from '../actors/actuator.js';
import type { Model } from '../actors/model/model.js';
import { canonicalBytes, canonicalize } from '../journal/canonical.js';
import { digestOf } from '../journal/digest.js';
import { WeftError } from '../journal/errors.js';
import { verifyRecords, type JournalReport } from '../journal/reader.js';
import { readJournalBytes } from '../journal/verify-bytes.js';
import type { JournalRecord, Pin } from '../journal/records.js';
import type { PublicKey, SigningKey } from '../journal/seal.js';
import type { JournalStore } from '../journal/store.js';
import { JournalWriter } from '../journal/writer.js';
import type { EvaluableRegistry } from '../htn/library/evaluables.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import type { InvocationInput, InvocationLimits } from '../machines/context.js';
import { invocationMachine } from '../machines/invocation-machine.js';
import { allowAll, type AdmissionPolicy } from '../machines/policy.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import { InProcessDispatcher } from '../queue/in-process.js';
import { epochActors } from './epoch-actors.js';
import { DEFAULT_LIMITS, inputFromPinned } from './limits.js';
import { RuntimeUsageError } from './errors.js';
import { InvocationHandle, type InvocationStatus } from './handle.js';
import { Recorder } from './recorder.js';
import { replayJournal, type ReplayResult } from './replay.js';

export const RUNTIME_VERSION = 'weft@0.1.0';
/** Numbered behaviour flags this runtime applies; recorded in the pin (replay follows the journal's). */
export const BEHAVIOUR_FLAGS: number[] = [];


export interface RuntimeOptions {
  store: JournalStore;
  /** Method libraries this runtime can pin; `start` picks one by name (default: the first). */
  libraries: Library[];
  /** Actuators for the default in-process dispatcher. */
  actuators?: Actuator[];
  /** Overrides the in-process dispatcher (e.g. BullMQ). */
  dispatcher?: Dispatcher;
  /** Name of the read-only `state` actuator observed at the start of every epoch. */
  observe: string;
  model?: Model;
  policy?: AdmissionPolicy;
  /** Older policy versions, for resuming and replaying invocations pinned to them. */
  policies?: AdmissionPolicy[];
  evaluables?: EvaluableRegistry;
  signingKey?: SigningKey;
  limits?: Partial<InvocationLimits>;
  /** An XState inspection observer (e.g. `createBrowserInspector().inspect` or `createSkyInspector`). */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Identifies this process in leases and record envelopes. */
  writer?: string;
  /** Wall clock for envelopes only (never hashed). */
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

export interface StartOptions {
  tenant: string;
  seed: string | number;
  /** The invocation's pinned "now" (ISO 8601). */
  asOf: string;
  id?: string;
  /** Name of the library to pin (default: the first of `libraries`). */
  library?: string;
}

export interface InvocationSummary {
  id: string;
  tenant: string;
  intent: string;
  records: number;
  status: InvocationStatus | 'running';
}

export class Runtime {
  private readonly dispatcher?: Dispatcher;
  private readonly writerId: string;
  private readonly limits: InvocationLimits;
  /** Each library's digest, computed once: pinning and resuming look libraries up by it. */
  private readonly digests = new Map<Library, string>();

  constructor(readonly options: RuntimeOptions) {
    if (options.libraries.length === 0) throw new RuntimeUsageError('runtime.no_library', 'createRuntime needs at least one method library');
    for (const library of options.libraries) {
      validateLibrary(library);
      this.digests.set(library, libraryDigest(library));
    }
    this.dispatcher = options.dispatcher ?? (options.actuators ? new InProcessDispatcher(options.actuators) : undefined);
    this.writerId = options.writer ?? `${hostname()}:${process.pid}`;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  get store(): JournalStore {
    return this.options.store;
  }

  /** The invocation id a start without `id` gets: a digest of tenant, intent, seed and asOf. */
  static defaultId(intent: string, opts: Pick<StartOptions, 'tenant' | 'seed' | 'asOf'>): string {
    return `inv-${digestOf({ tenant: opts.tenant, intent, seed: String(opts.seed), asOf: opts.asOf }).slice(0, 32)}`;
  }

  async start(intent: string, opts: StartOptions): Promise<InvocationHandle> {
    const library = this.pickLibrary(opts.library);
    const digest = this.digests.get(library)!;
    const stored = await this.options.store.putBlob(canonicalBytes(library));
    if (stored !== digest) throw new WeftError('runtime.blob_mismatch', 'permanent', `the store filed library ${digest} under ${stored}`);
    const model = this.options.model;
    const pin: Pin = {
      library: digest,
      runtime: RUNTIME_VERSION,
      flags: BEHAVIOUR_FLAGS,
      model: { id: model?.id ?? 'none', params: model?.params ?? {} },
      seed: String(opts.seed),
      asOf: new Date(opts.asOf).toISOString(),
      policy: (this.options.policy ?? allowAll).id,
      limits: { ...this.limits },
    };
    const id = opts.id ?? Runtime.defaultId(intent, opts);
    if ((await this.options.store.length(id)) > 0) return this.attach(id, intent, opts.tenant, pin);
    const writer = await JournalWriter.create(this.options.store, { invocation: id, tenant: opts.tenant, intent, pin }, this.writerOptions());
    const input: InvocationInput = { invocation: id, tenant: opts.tenant, intent, pin, limits: this.limits, seq: writer.seq, tail: writer.tail };
    return this.run(writer, library, input, [], undefined);
  }

  /**
   * Continue an invocation from its latest snapshot and the journal after it. A journal whose
   * final record is torn (a crash mid-write) is refused with TornTailError; move that record aside
   * explicitly first (`store.quarantineTornTail(lease)`, or `weft resume --quarantine-torn`).
   */
  async resume(id: string, options: { snapshot?: unknown; at?: { seq: number; tail: string } } = {}): Promise<InvocationHandle> {
    const store = this.options.store;
    const first = (await store.read(id, 0, 1))[0];
    if (!first || first.kind !== 'invocation.pinned') throw new RuntimeUsageError('runtime.unknown_invocation', `no invocation ${id} in ${store.name}`);
    const pinned = (first as JournalRecord<'invocation.pinned'>).body;
    const stored = await store.getSnapshot(id);
    const snapshot =
      options.snapshot !== undefined && options.at
        ? { ...options.at, data: options.snapshot }
        : stored
          ? { seq: stored.seq, tail: stored.hash, data: stored.data }
          : undefined;
    const tail = await store.tail(id);
    if (tail?.kind === 'invocation.sealed') {
      const seal = (tail as JournalRecord<'invocation.sealed'>).body;
      return InvocationHandle.finished({ id, status: await this.finalStatus(id), fingerprint: seal.fingerprint, records: tail.seq + 1, journal: this.journalPath(id) });
    }
    const writer = await JournalWriter.open(store, id, this.writerOptions());
    try {
      const library = await this.loadPinnedLibrary(pinned.pin.library);
      const from = snapshot ? snapshot.seq : 1;
      const existing = await store.read(id, from);
      const input = inputFromPinned(first as JournalRecord<'invocation.pinned'>);
      return this.run(writer, library, input, existing, snapshot ?? undefined);
    } catch (err) {
      await writer.close().catch(() => undefined);
      throw err;
    }
  }

  /** Record a person's decision on an epoch awaiting approval, and continue the invocation. */
  async approve(id: string, decision: { decision: 'approved' | 'rejected'; by: string; note?: string }): Promise<InvocationHandle> {
    const snapshot = await this.options.store.getSnapshot(id);
    const value = (snapshot?.data as { value?: unknown } | undefined)?.value;
    if (value !== 'awaitingApproval') {
      throw new RuntimeUsageError('runtime.not_awaiting_approval', `invocation ${id} is not awaiting approval (its last snapshot is in ${JSON.stringify(value ?? 'no snapshot')})`);
    }
    const handle = await this.resume(id);
    handle.send({ type: 'approval.decided', ...decision });
    return handle;
  }

  /** Re-run an invocation over its journal without calling anything; see replay.ts. */
  async replay(source: string | { journalPath: string }): Promise<ReplayResult> {
    const records = typeof source === 'string' ? await this.options.store.read(source) : parseJournalFile(source.journalPath);
    return replayJournal(records, {
      loadLibrary: (digest: string) => this.loadPinnedLibrary(digest),
      policy: (id: string) => this.policyById(id),
      evaluables: this.options.evaluables,
      observe: this.options.observe,
      dispatcher: this.dispatcher,
      inspect: this.options.inspect,
    });
  }

  /** Verify a journal (by id or file) offline: chain, schemas, and the seal by `publicKey`. */
  async verify(source: string | { journalPath: string }, publicKey?: PublicKey): Promise<JournalReport> {
    if (typeof source !== 'string') return readJournalBytes(readFileSync(source.journalPath), publicKey ? { publicKey } : {});
    return verifyRecords(await this.options.store.read(source), publicKey ? { publicKey } : {});
  }

  async list(): Promise<InvocationSummary[]> {
    const out: InvocationSummary[] = [];
    for (const id of await this.options.store.list()) {
      const first = (await this.options.store.read(id, 0, 1))[0] as JournalRecord<'invocation.pinned'> | undefined;
      out.push({ id, tenant: first?.body.tenant ?? '?', intent: first?.body.intent ?? '?', records: await this.options.store.length(id), status: await this.finalStatus(id) });
    }
    return out;
  }

  /** Where the store keeps this invocation's journal file, when it is a file store. */
  journalPath(id: string): string | undefined {
    const store = this.options.store as { journalPath?: (id: string) => string };
    return typeof store.journalPath === 'function' ? store.journalPath(id) : undefined;
  }

  async close(): Promise<void> {
    await this.dispatcher?.close();
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  private async attach(id: string, intent: string, tenant: string, pin: Pin): Promise<InvocationHandle> {
    const first = (await this.options.store.read(id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    const existing = first.body;
    if (existing.intent !== intent || existing.tenant !== tenant || canonicalize(existing.pin) !== canonicalize(pin)) {
      throw new RuntimeUsageError(
        'runtime.id_conflict',
        `invocation ${id} already exists with a different intent or pin (pinned: ${canonicalize({ intent: existing.intent, tenant: existing.tenant, pin: existing.pin })}); ` +
          `start with another id, or resume ${id} as it is`,
      );
    }
    return this.resume(id);
  }

  private run(writer: JournalWriter, library: Library, input: InvocationInput, existing: JournalRecord[], snapshot: { seq: number; tail: string; data: unknown } | undefined): InvocationHandle {
    const start = snapshot ? { seq: snapshot.seq, tail: snapshot.tail } : { seq: input.seq, tail: input.tail };
    const handle = new InvocationHandle(input.invocation, this.journalPath(input.invocation));
    const recorder = new Recorder({ ...start, existing, writer, onRecord: (record, replayed) => handle.emitRecord(record, replayed) });
    const policy = this.policyById(input.pin.policy);
    const actors = epochActors({
      recorder: () => recorder,
      library,
      libraryDigest: input.pin.library,
      policy,
      observe: this.options.observe,
      evaluables: this.options.evaluables,
      model: this.options.model,
      dispatcher: this.dispatcher,
      signingKey: this.options.signingKey,
      sleep: this.options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    });
    const machine = invocationMachine.provide({ actors });
    const actor = createActor(machine, {
      input,
      ...(snapshot ? { snapshot: snapshot.data as never } : {}),
      ...(this.options.inspect ? { inspect: this.options.inspect as Observer<InspectionEvent> } : {}),
    });
    handle.attach(actor, this.options.store, writer);
    actor.start();
    return handle;
  }

  private writerOptions() {
    return { writer: this.writerId, ...(this.options.now ? { now: this.options.now } : { now: () => new Date() }) };
  }

  private pickLibrary(name?: string): Library {
    const found = name === undefined ? this.options.libraries[0] : this.options.libraries.find((l) => l.name === name);
    if (!found) throw new RuntimeUsageError('runtime.unknown_library', `no library named ${name}; this runtime has ${this.options.libraries.map((l) => l.name).join(', ')}`);
    return found;
  }

  private async loadPinnedLibrary(digest: string): Promise<Library> {
    const known = this.options.libraries.find((l) => this.digests.get(l) === digest);
    if (known) return known;
    const bytes = await this.options.store.getBlob(digest);
    if (!bytes) {
      throw new WeftError('runtime.library_missing', 'permanent', `the pinned method library ${digest} is neither registered with this runtime nor in the store's blob area`);
    }
    return validateLibrary(JSON.parse(new TextDecoder().decode(bytes)));
  }

  private policyById(id: string): AdmissionPolicy {
    const all = [this.options.policy ?? allowAll, ...(this.options.policies ?? []), allowAll];
    const found = all.find((p) => p.id === id);
    if (!found) throw new WeftError('runtime.policy_missing', 'permanent', `the invocation is pinned to policy ${id}, which this runtime does not have; pass it in createRuntime({ policies })`);
    return found;
  }

  private async finalStatus(id: string): Promise<InvocationStatus | 'running'> {
    const length = await this.options.store.length(id);
    if (length === 0) return 'running';
    const last = await this.options.store.read(id, Math.max(0, length - 2));
    const kinds = last.map((r) => r.kind);
    if (kinds.includes('invocation.completed')) return 'completed';
    if (kinds.includes('invocation.failed')) return 'failed';
    if (kinds.includes('invocation.handed_off')) return 'handed_off';
    const snapshot = await this.options.store.getSnapshot(id);
    const value = (snapshot?.data as { value?: unknown } | undefined)?.value;
    if (value === 'awaitingApproval') return 'awaiting_approval';
    if (value === 'hibernated') return 'hibernated';
    return 'running';
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
