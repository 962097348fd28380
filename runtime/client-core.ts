/**
 * What the client and the executor share: the part of a runtime that validates and writes, and
 * never runs a machine. The executor (executor.ts) extends it with the dispatcher, the policies it
 * can run and the machine's run under a lease; the client (client/) is this alone.
 *
 * It holds the store, the tenant scope, the wall clock of envelopes and inbox messages, this
 * process's writer id (the lease a start holds while it writes the pin), the libraries with their
 * digests, and the pin's inputs that come from the code a runtime is given — the model's id and
 * parameters, the policy's id, the limits, which actuators spend and which give a shadow result
 * (read from what the actuators declare: none is ever run here), the key id that will seal. With
 * those it pins a start (start.ts `writeStart`), writes a decision or a cancel to an inbox
 * (approve.ts, cancel-request.ts), and answers what a verb checks first (call-checks.ts).
 *
 * Nothing here dispatches an effect or calls a model: a client process needs no actuator to run,
 * no model endpoint to reach, and no secret key (the public half says which key will seal).
 */
import type { Actuator } from '../actors/actuator.js';
import type { Model } from '../actors/model/model.js';
import { WeftError } from '../journal/errors.js';
import { marksForLibrary } from '../journal/redaction.js';
import type { JournalRecord } from '../journal/records.js';
import type { PublicKey } from '../journal/seal.js';
import { journalFileOf, type InvocationMetadata, type JournalStore } from '../journal/store.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import type { InvocationLimits } from '../machines/context.js';
import { allowAll, type AdmissionPolicy } from '../machines/policy.js';
import { pinnedSpenders, spendDeclarationProblem, type PinnedSpender } from '../machines/spenders.js';
import { checkRedisDurability, RedisStore } from '../stores/redis.js';
import { durabilityRefusal, relaxedDurabilityWarning } from '../stores/redis-durability.js';
import type { Domain } from './domain.js';
import { RuntimeUsageError } from './errors.js';
import { hostname } from 'node:os';
import { keyInForce, refuseOtherKey } from './key-in-force.js';
import { DEFAULT_LIMITS } from './limits.js';
import type { SealKeyInForce } from './seal-key.js';

/** What the core reads of the options (RuntimeOptions resolved — runtime-options.ts — or the client's). */
export interface CoreOptions {
  store: JournalStore;
  tenant?: string;
  libraries: readonly Library[];
  domain?: Domain;
  /** Read for what they declare (which spend, which give a shadow result); never run by the core. */
  actuators?: readonly Actuator[];
  /** Pinned by id and parameters; never called by the core. */
  model?: Model;
  policy?: AdmissionPolicy;
  /** The key that will seal what is started: its id is recorded, its public half filed. A client needs only the public half. */
  signingKey?: PublicKey;
  limits?: Partial<InvocationLimits>;
  durability?: 'strict' | 'relaxed';
  writer?: string;
  leaseTtlMs?: number;
  now?: () => Date;
  opened?: { id: string; pinned: JournalRecord<'invocation.pinned'> };
}

export class ClientCore {
  readonly options: CoreOptions;
  /** Identifies this process in leases and record envelopes. */
  readonly writerId: string;
  readonly limits: InvocationLimits;
  /** Each library's digest, computed once: pinning and resuming look libraries up by it. */
  readonly digests = new Map<Library, string>();
  /** True when the runtime made its store itself (from `redis`), and so checks its durability and closes it. */
  readonly ownsStore: boolean;
  /**
   * What the actuators declare they spend (flag 2; machines/spenders.ts) — pinned by a start,
   * compared with the pin on resume — or undefined when none are known (a dispatcher of the
   * executor's own, a domain whose actuators come from a factory it was not given). Admission never
   * reads it: it reads the pin.
   */
  readonly declaredSpenders: readonly PinnedSpender[] | undefined;
  private readiness: Promise<void> | undefined;
  /** Blobs this process has put in the store (pinned libraries, policy packs, the public key by its id), by digest. */
  private readonly blobsStored = new Map<string, Promise<void>>();

  constructor(options: CoreOptions, ownsStore: boolean) {
    this.options = options;
    this.ownsStore = ownsStore;
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
    this.writerId = options.writer ?? `${hostname()}:${process.pid}`;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  get store(): JournalStore {
    return this.options.store;
  }

  /** How long a lease this process takes lives unless renewed (the options', else 30 s). */
  get leaseTtlMs(): number {
    return this.options.leaseTtlMs ?? 30_000;
  }

  /** The wall clock of envelopes and inbox messages (never hashed): the options' `now`, else the system's. */
  now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Whether `actuator` gives a shadow result (pinned by a shadow start: shadow-pin.ts) — from what the actuators declare. The executor asks its dispatcher. */
  canShadow(actuator: string): boolean {
    return typeof this.options.actuators?.find((a) => a.name === actuator)?.shadow === 'function';
  }

  /**
   * Before the first operation over a RedisStore it opened itself: the server must keep what it
   * acknowledges (AOF, appendfsync always, noeviction) — or the user said `relaxed`.
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

  /** The options of every JournalWriter this process opens: its writer id, the lease's lifetime, the envelope clock. */
  writerOptions() {
    return { writer: this.writerId, ttlMs: this.leaseTtlMs, now: () => this.now() };
  }

  /** Put a blob whose digest is `digest` in the store (content-addressed, so once per process is enough); a failure is retried by the next start. */
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
}
