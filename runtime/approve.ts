/**
 * `runtime.approve(id, decision)` — the client side of a person's decision (`requestApproval`, which
 * the client's `approve` is): it validates and writes, and only then (unless `run: false`) hands over
 * to resume.ts to run.
 *
 * - Validates, writing nothing on a refusal: the invocation is this tenant's (another's is unknown),
 *   the decision is well-formed, the invocation has not ended, rests awaiting approval, has no cancel waiting in its inbox (a decision never
 *   replaces a cancel), and — when it is to go on here — this runtime's key is the key in force.
 * - Writes the decision to the invocation's inbox in the store (any process may write it; no lease).
 * - Then, unless `{ run: false }` (which leaves it to `serve` or a later `resume`: the handle returned
 *   is a finished one reporting `awaiting_approval`), resumes it here: the invocation continues and
 *   its journal records the decision.
 */
import { checkGenesis } from './call-checks.js';
import { RuntimeUsageError } from './errors.js';
import type { ClientCore } from './client-core.js';
import type { Executor } from './executor.js';
import { InvocationHandle } from './handle.js';
import { invocationStatus } from './list.js';
import { resumeInvocation } from './resume.js';

export interface ApprovalDecision {
  decision: 'approved' | 'rejected';
  by: string;
  note?: string;
}

export async function approveInvocation(ex: Executor, id: string, decision: ApprovalDecision, options: { run?: boolean; rekey?: boolean; tenant?: string } = {}): Promise<InvocationHandle> {
  // Continuing here seals with this runtime's key: a key the journal is not sealed by is refused before the inbox is written.
  await requestApproval(ex, id, decision, { ...(options.tenant === undefined ? {} : { tenant: options.tenant }), checkKey: options.run !== false && !options.rekey });
  if (options.run === false) return InvocationHandle.finished({ id, status: 'awaiting_approval', journal: ex.pathOf(id) });
  return resumeInvocation(ex, 'approve', id, { ...(options.rekey ? { rekey: true } : {}), ...(options.tenant === undefined ? {} : { tenant: options.tenant }) });
}

/**
 * Validate a decision and write it to the invocation's inbox — what `runtime.approve` does before
 * it runs, and all the client's `approve` does (`weft approve --leave-to-serve`). `checkKey`: the
 * caller goes on here, so this process's key must be the key in force.
 */
export async function requestApproval(core: ClientCore, id: string, decision: ApprovalDecision, options: { tenant?: string; checkKey?: boolean } = {}): Promise<void> {
  const store = core.store;
  // Another tenant's invocation is unknown here: nothing of it is read further, and its inbox is not written.
  checkGenesis(core, id, await core.genesisOf(id), options.tenant ?? core.options.tenant);
  checkDecision(decision);
  // An ended run keeps the snapshot of its last rest (none is taken of a sealed run): its journal says it ended.
  if ((await store.tail(id))?.kind === 'invocation.sealed') {
    throw new RuntimeUsageError('runtime.not_awaiting_approval', `invocation ${id} is not awaiting approval: it has ended (${await invocationStatus(store, id)}, sealed)`);
  }
  const snapshot = await store.getSnapshot(id);
  const value = (snapshot?.data as { value?: unknown } | undefined)?.value;
  if (value !== 'awaitingApproval') {
    throw new RuntimeUsageError('runtime.not_awaiting_approval', `invocation ${id} is not awaiting approval (its last snapshot is in ${JSON.stringify(value ?? 'no snapshot')})`);
  }
  // A cancel waiting in the inbox is never replaced by a decision.
  if ((await store.peekInbox(id).catch(() => undefined))?.type === 'cancel') {
    throw new RuntimeUsageError('runtime.cancel_pending', `invocation ${id} has a cancel waiting in its inbox: it ends cancelled when it is next taken up (weft resume ${id}, or weft serve); an approval cannot replace it`);
  }
  if (options.checkKey === true) core.checkSealKey('approve', id, await core.sealKeyOf(id), false);
  await store.putInbox(id, { type: 'approval', ...decision, at: core.now().getTime() });
}

/** A decision is `approved` or `rejected`, by a non-empty name, with an optional string note: anything else is refused before it is written. */
function checkDecision(decision: unknown): asserts decision is ApprovalDecision {
  const d = decision as Partial<ApprovalDecision> | null;
  const ok = typeof d === 'object' && d !== null && (d.decision === 'approved' || d.decision === 'rejected') && typeof d.by === 'string' && d.by.length > 0 && (d.note === undefined || typeof d.note === 'string');
  if (!ok) throw new RuntimeUsageError('runtime.bad_decision', `a decision is { decision: 'approved' | 'rejected', by: a non-empty name, note?: text }, got ${JSON.stringify(decision)?.slice(0, 120) ?? String(decision)}`);
}
