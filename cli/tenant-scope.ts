/**
 * `--tenant T` on the commands that read one invocation by id (`show`, `export`, `log`, `verify`,
 * `replay`; `resume` and `approve` check it in the runtime): an invocation of another tenant is
 * treated exactly as one that is not there — the command says what it says for a missing id, so a
 * tenant learns nothing of another's. Without `--tenant` a command serves every tenant (an
 * operator's view of the store).
 */
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';

export const tenantOption = { tenant: { type: 'string' } } as const;
export const tenantUsage = '[--tenant T]';

/** Whether `id` is `tenant`'s: always true without a tenant; false for an id that is not there. */
export async function isTenants(store: Pick<JournalStore, 'read'>, id: string, tenant: string | undefined): Promise<boolean> {
  if (tenant === undefined) return true;
  const first = (await store.read(id, 0, 1).catch(() => []))[0] as JournalRecord<'invocation.pinned'> | undefined;
  return first?.kind === 'invocation.pinned' && first.body.tenant === tenant;
}
