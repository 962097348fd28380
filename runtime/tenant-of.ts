/**
 * Whose an invocation is, read from its pin: what every scoped reader asks before it shows or acts
 * on an id — `--tenant T` on the CLI (cli/tenant-scope.ts), a serve scoped to one tenant
 * (serve.ts). An invocation of another tenant is treated exactly as one that is not there.
 */
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';

/** Whether `id` is `tenant`'s: always true without a tenant; false for an id that is not there, or cannot be read now. */
export async function isTenants(store: Pick<JournalStore, 'read'>, id: string, tenant: string | undefined): Promise<boolean> {
  if (tenant === undefined) return true;
  const first = (await store.read(id, 0, 1).catch(() => []))[0] as JournalRecord<'invocation.pinned'> | undefined;
  return first?.kind === 'invocation.pinned' && first.body.tenant === tenant;
}
