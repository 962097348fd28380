/**
 * The invocations whose rules warned — what `weft ls --warnings` shows: each invocation of the
 * listing (list.ts, same filters) that has advisories in its inbox (journal/advisory.ts), with them,
 * in journal order (rule, reason, epoch, subject). An invocation with none is left out. Reads only
 * the store's advisories beside the listing; a store that cannot give one invocation's reads as none
 * for it (the journal still holds each warning: `weft show` and `weft policy explain` read it there).
 */
import type { AdvisoryMessage } from '../journal/advisory.js';
import type { JournalStore } from '../journal/store.js';
import { listInvocations, type InvocationSummary } from './list.js';

export interface WarnedInvocation extends InvocationSummary {
  warnings: AdvisoryMessage[];
}

export async function listWarnings(store: JournalStore, filter: { tenant?: string; status?: string } = {}): Promise<WarnedInvocation[]> {
  const out: WarnedInvocation[] = [];
  for (const row of await listInvocations(store, filter)) {
    if (row.status === 'damaged') continue;
    const warnings = await store.advisories(row.id).catch(() => []);
    if (warnings.length > 0) out.push({ ...row, warnings });
  }
  return out;
}
