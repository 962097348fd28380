/**
 * What every verb that takes an id checks before it writes anything, so a refusal changes nothing:
 *
 * - the journal starts with this invocation's own pin (`checkGenesis`) — and with a pin of the
 *   call's tenant: another tenant's invocation is refused as unknown, with the very words a missing
 *   id gets, so one tenant learns nothing of another's (`checkTenant`; a journal file named to a
 *   scoped runtime, `checkFileTenant`);
 * - the pin is one this runtime can run (`checkPin`, over pin-check.ts): the pinned library resolved
 *   on the way (one of this runtime's, one given in a bundle, or the store's blob), and every
 *   differing field named in one PinMismatchError.
 */
import { verifyRecords } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import type { Library } from '../htn/library/schema.js';
import { FLAG_DECLARED_SPEND, hasFlag } from '../machines/flags.js';
import { ForeignJournalError, InvocationNotFoundError, PinMismatchError } from './errors.js';
import type { ClientCore } from './client-core.js';
import type { Executor } from './executor.js';
import { DEFAULT_LIMITS } from './limits.js';
import { readPinnedPack } from './pack-blob.js';
import { compareEvaluables, compareFlags, compareLimits, compareModel, comparePolicy, compareSpenders, libraryActuators, libraryMismatch, pinnedModelParams, type PinMismatch } from './pin-check.js';
import { callScope, tenantOfJournalFile } from './tenant-of.js';
import { BEHAVIOUR_FLAGS } from './version.js';

/** The journal starts with this invocation's own pin — and, with `tenant`, that tenant's (another's is refused as unknown, as a missing one). */
export function checkGenesis(ex: ClientCore, id: string, first: JournalRecord | undefined, tenant?: string): void {
  checkTenant(ex, id, first, tenant);
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
export function checkTenant(ex: ClientCore, id: string, first: JournalRecord | undefined, asked: string | undefined): void {
  const { tenant, foreign } = callScope(ex.options.tenant, asked);
  const unknown = () => new InvocationNotFoundError(id, ex.store.name, tenant);
  if (foreign || !first || first.kind !== 'invocation.pinned') throw unknown();
  if (tenant !== undefined && (first as JournalRecord<'invocation.pinned'>).body.tenant !== tenant) throw unknown();
}

/** A journal file named to a scoped runtime must be its tenant's: another's (or a missing one) is unknown, as an id is. */
export function checkFileTenant(ex: ClientCore, file: string): void {
  const scope = ex.options.tenant;
  if (scope !== undefined && tenantOfJournalFile(file) !== scope) throw new InvocationNotFoundError(`journal ${file}`, ex.store.name, scope);
}

/**
 * Compare the pin with what this runtime offers — resolving the pinned library on the way (one of
 * this runtime's, one given, or the store's blob) — and return that library; throws
 * PinMismatchError naming every differing field. A policy pack the pin names is read back from the
 * store's blob and known to the executor from then on.
 */
export async function checkPin(ex: Executor, command: 'resume' | 'approve' | 'cancel' | 'replay', pinned: JournalRecord<'invocation.pinned'>, given: readonly Library[], withModel: boolean): Promise<Library> {
  const { invocation, pin } = pinned.body;
  const options = ex.options;
  const library = await ex.pinnedLibrary(pin.library, given);
  const mismatches: PinMismatch[] = [];
  if (!library) mismatches.push(libraryMismatch(pin.library, options.libraries.map((l) => ({ name: l.name, digest: ex.digests.get(l)! }))));
  else mismatches.push(...compareEvaluables(library, options.evaluables));
  const pack = ex.policies().some((p) => p.id === pin.policy) ? undefined : await readPinnedPack(ex.store, pin.policy, ex.predicates);
  if (pack && 'policy' in pack) ex.pinnedPacks.set(pin.policy, pack.policy);
  if (pack && 'mismatch' in pack) mismatches.push(pack.mismatch);
  else mismatches.push(...comparePolicy(pin.policy, ex.policies().map((p) => p.id)));
  if (withModel) mismatches.push(...compareModel(pin.model, options.model ? { id: options.model.id, params: pinnedModelParams(options.model) } : undefined));
  mismatches.push(...compareFlags(pin.flags, BEHAVIOUR_FLAGS));
  mismatches.push(...compareLimits(pin.limits, [...Object.keys(DEFAULT_LIMITS), 'stepTimeoutMs']));
  // Which actuators spend: compared when the run goes on here with actuators that declare it; replay reads the pin alone.
  if (command !== 'replay' && hasFlag(pin, FLAG_DECLARED_SPEND) && ex.declaredSpenders !== undefined) {
    mismatches.push(...compareSpenders(pin.spenders ?? [], ex.declaredSpenders, library ? libraryActuators(library) : undefined));
  }
  if (mismatches.length > 0) throw new PinMismatchError(invocation, command, mismatches);
  return library!;
}
