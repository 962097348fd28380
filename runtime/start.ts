/**
 * `runtime.start(intent, options?)`: pin, file and run a new invocation.
 *
 * It pins (library digest, runtime version and flags, model, seed, asOf, policy, limits, the
 * actuators that spend), files the library — and a policy pack policy (policy/) — and the signing
 * key's public half in the store's blobs by digest, puts the store's unhashed metadata (domain,
 * library, redaction marks, and the id of the key that will seal: seal-key.ts), writes
 * `invocation.pinned`, and runs the machine. Options default as `weft run` does (start-options.ts);
 * a malformed one is refused before anything is written. Starting an id that exists attaches to it
 * (a resume) — or fails clearly, naming what differs, if its tenant, intent, pin or sealing key do.
 */
import { canonicalBytes, canonicalize } from '../journal/canonical.js';
import { digestOf, hexToBytes } from '../journal/digest.js';
import type { JournalRecord, Pin } from '../journal/records.js';
import { JournalWriter } from '../journal/writer.js';
import type { PublicKey } from '../journal/seal.js';
import type { Library } from '../htn/library/schema.js';
import type { InvocationInput, InvocationLimits } from '../machines/context.js';
import { FLAG_DECLARED_SPEND } from '../machines/flags.js';
import { allowAll } from '../machines/policy.js';
import { isWellFormed, REFUSED_PREFIX_CHARS, toWellFormed, utf16Digest } from '../machines/untrusted-text.js';
import { isPackPolicy } from '../policy/compile.js';
import { packBytes } from '../policy/digest.js';
import { RuntimeUsageError, SealKeyMismatchError } from './errors.js';
import type { ClientCore } from './client-core.js';
import type { Executor } from './executor.js';
import type { InvocationHandle } from './handle.js';
import { pinnedModelParams } from './pin-check.js';
import { resumeInvocation } from './resume.js';
import { shadowPin } from './shadow-pin.js';
import { startConflictMessage, startDifferences } from './start-conflict.js';
import { resolveStartOptions, type StartOptions } from './start-options.js';
import { BEHAVIOUR_FLAGS, RUNTIME_VERSION } from './version.js';

/** The invocation id a start without `id` gets: a digest of tenant, intent, seed and asOf. */
export function defaultInvocationId(intent: string, opts: Pick<StartOptions, 'tenant' | 'seed' | 'asOf' | 'shadow'>): string {
  // An intent that is not well-formed Unicode cannot be canonicalized: its UTF-16 digest stands in.
  const named = isWellFormed(intent) ? intent : { wellFormed: toWellFormed(intent), utf16: utf16Digest(intent) };
  // A shadow run of the same intent is another invocation than the real one (a real run's id is unchanged).
  return `inv-${digestOf({ tenant: opts.tenant, intent: named, seed: String(opts.seed), asOf: opts.asOf, ...(opts.shadow === true ? { shadow: true } : {}) }).slice(0, 32)}`;
}

/** A start checked and pinned, before anything is written (`planStart`). */
interface PlannedStart {
  id: string;
  tenant: string;
  /** The intent as recorded: a prefix when it is over the pinned cap or not well-formed (then `intentCut` says so). */
  intent: string;
  intentCut?: { chars: number; digest: string };
  pin: Pin;
  /** The limits pinned (the run's input holds them too). */
  limits: InvocationLimits;
  library: Library;
  digest: string;
  /** The key that will seal it: its id is recorded in the store's metadata, its public half filed as a blob. */
  key: PublicKey;
}

/**
 * Start an invocation and run it here: pin it (`writeStart`), then run the machine under the lease
 * the start took — or, for an id that exists with the same pin, resume it.
 */
export async function startInvocation(ex: Executor, intent: string, options?: Partial<StartOptions>): Promise<InvocationHandle> {
  const planned = planStart(ex, intent, options);
  const writer = await writeStart(ex, planned);
  if (writer === undefined) return attach(ex, planned);
  const input: InvocationInput = { invocation: planned.id, tenant: planned.tenant, intent: planned.intent, pin: planned.pin, limits: planned.limits, seq: writer.seq, tail: writer.tail, ...(planned.intentCut ? { intentCut: planned.intentCut } : {}) };
  return ex.run(writer, planned.library, input, [], undefined, planned.key.keyId);
}

/**
 * Pin an invocation and leave it to an executor (the client's start): the same checks, blobs,
 * metadata and `invocation.pinned` as `startInvocation` writes, then the lease is released at once,
 * so `weft serve` — or any runtime's `resume(id)` — takes it up (the listing shows it `pending`).
 * Nothing runs here. Asked again for an id that exists with the same pin, it writes nothing
 * (`created: false`); a different intent, pin, tenant or key is refused, naming what differs.
 */
export async function pinInvocation(core: ClientCore, intent: string, options?: Partial<StartOptions>): Promise<{ id: string; created: boolean }> {
  const planned = planStart(core, intent, options);
  const writer = await writeStart(core, planned);
  if (writer === undefined) {
    await checkSameStart(core, planned);
    return { id: planned.id, created: false };
  }
  await writer.close();
  return { id: planned.id, created: true };
}

/** Check the options and build the pin: throws (RuntimeUsageError) having written nothing. */
function planStart(core: ClientCore, intent: string, options?: Partial<StartOptions>): PlannedStart {
  const scope = core.options.tenant;
  if (scope !== undefined && options?.tenant !== undefined && options.tenant !== scope) {
    throw new RuntimeUsageError('runtime.tenant_scope', `this runtime is scoped to tenant ${JSON.stringify(scope)} and cannot start an invocation for tenant ${JSON.stringify(options.tenant)}`);
  }
  const opts = resolveStartOptions(intent, scope !== undefined && options?.tenant === undefined ? { ...options, tenant: scope } : options, core.options.domain?.asOf);
  const library = core.pickLibrary(opts.library);
  // The key that will seal the journal is fixed now (recorded in the store's metadata), so a runtime without one cannot start.
  const key = core.options.signingKey;
  if (!key) throw new RuntimeUsageError('runtime.no_signing_key', 'runtime.start: this runtime has no signing key, and an invocation is sealed by the key it starts with: pass createRuntime({ signingKey }) (loadSigningKey(file), or generateSigningKey() + writeKeyPair(dir, key)); a client needs only its public half (loadPublicKey(file))');
  const digest = core.digests.get(library)!;
  const model = core.options.model;
  // A step timeout is pinned only when there is one: a run without pins what it pinned before.
  const { stepTimeoutMs: runtimeTimeout, ...limits } = core.limits;
  const stepTimeoutMs = opts.stepTimeoutMs ?? runtimeTimeout ?? 0;
  const pinnedLimits: InvocationLimits = { ...limits, ...(stepTimeoutMs > 0 ? { stepTimeoutMs } : {}) };
  const pin: Pin = {
    library: digest,
    runtime: RUNTIME_VERSION,
    flags: [...BEHAVIOUR_FLAGS],
    model: { id: model?.id ?? 'none', params: pinnedModelParams(model) },
    seed: String(opts.seed),
    asOf: new Date(opts.asOf).toISOString(),
    policy: (core.options.policy ?? allowAll).id,
    limits: { ...pinnedLimits },
    // Which actuators spend (flag 2), fixed for the invocation's life; none known: none declared (every world effect counts).
    ...(BEHAVIOUR_FLAGS.includes(FLAG_DECLARED_SPEND) ? { spenders: [...(core.declaredSpenders ?? [])] } : {}),
    // A shadow run, and whether its world effects have shadow results (shadow-pin.ts); absent on a real run.
    ...(opts.shadow === true ? { shadow: shadowPin(library, core) } : {}),
    ...(opts.deadline === undefined ? {} : { deadline: String(opts.deadline) }),
  };
  const id = opts.id ?? defaultInvocationId(intent, opts);
  // An intent over the pinned cap (or not well-formed) is recorded as a prefix with its size and digest; the run then fails, sealed, before any model call.
  const cut = intent.length > core.limits.maxIntentChars || !isWellFormed(intent);
  const recordedIntent = cut ? toWellFormed(intent.slice(0, Math.min(REFUSED_PREFIX_CHARS, core.limits.maxIntentChars))) : intent;
  return { id, tenant: opts.tenant, intent: recordedIntent, ...(cut ? { intentCut: { chars: intent.length, digest: utf16Digest(intent) } } : {}), pin, limits: pinnedLimits, library, digest, key };
}

/**
 * File the library, a policy pack and the public key by digest, put the store's metadata (a new
 * id's only) and write `invocation.pinned` under a new lease: the writer holding it — or undefined
 * when the id exists already (created, or being run by another process).
 */
async function writeStart(core: ClientCore, planned: PlannedStart): Promise<JournalWriter | undefined> {
  await core.ready();
  const { id, library, digest, key } = planned;
  await core.putBlobOnce(digest, () => canonicalBytes(library));
  // A policy pack is filed by its digest too, so any process resumes or replays under the pinned rules with no file.
  const policy = core.options.policy;
  if (isPackPolicy(policy)) await core.putBlobOnce(policy.digest, () => packBytes(policy.pack));
  // The public key, by its id (a blob's digest is its key id), so that any process finds the key a journal was sealed with.
  await core.putBlobOnce(key.keyId, () => hexToBytes(key.publicKey));
  // Which domain, library and sealing key it is, in the store beside the journal (unhashed): any
  // process finds its domain by it, and a resume with another key is refused (seal-key.ts).
  if ((await core.store.length(id)) === 0) await core.store.putMetadata(id, { ...core.domainMetadata(digest, library), sealKey: key.keyId });
  try {
    return await JournalWriter.create(core.store, { invocation: id, tenant: planned.tenant, intent: planned.intent, pin: planned.pin, ...(planned.intentCut ? { intentCut: planned.intentCut } : {}) }, core.writerOptions());
  } catch (err) {
    // An id that exists is attached to — or refused clearly when its intent or pin differ; anything else is this start's own failure.
    if ((await core.store.length(id).catch(() => 0)) > 0) return undefined;
    throw err;
  }
}

/** The same start asked again: resume the invocation that exists — unless its tenant, intent, pin or sealing key differ (refused, naming what). */
async function attach(ex: Executor, planned: PlannedStart): Promise<InvocationHandle> {
  await checkSameStart(ex, planned);
  return resumeInvocation(ex, 'resume', planned.id);
}

/** An id that exists must be this very start: same tenant, intent, pin and sealing key — else refused, naming what differs. */
async function checkSameStart(core: ClientCore, planned: PlannedStart): Promise<void> {
  const { id, tenant, intent, pin } = planned;
  const first = (await core.genesisOf(id)) as JournalRecord<'invocation.pinned'>;
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
  const inForce = await core.sealKeyOf(id);
  const offered = core.options.signingKey?.keyId;
  if (inForce && inForce.keyId !== offered) throw new SealKeyMismatchError(id, 'start', inForce.keyId, offered, inForce.rekeyed);
}
