/**
 * `--tenant T` on the commands that read one invocation by id (`show`, `export`, `log`, `verify`,
 * `replay`; `resume`, `approve`, `cancel` and `fork` check it in the runtime): an invocation of
 * another tenant is treated exactly as one that is not there — the command says what it says for a
 * missing id, so a tenant learns nothing of another's. `log` and `verify` given a file (a journal,
 * or a bundle from `weft export`) read its pin's tenant: another tenant's file is answered as a
 * missing file. Without `--tenant` a command serves every tenant (an operator's view of the store).
 *
 * `--tenant` is self-declared: it scopes what a command does, it does not prove who asks. Between
 * tenants that do not trust each other the boundary is the store's access (README, "Tenants").
 */
import { readFileSync } from 'node:fs';
import { tenantOfJournalFile, tenantOfPinLine } from '../runtime/tenant-of.js';

export { isTenants } from '../runtime/tenant-of.js';

export const tenantOption = { tenant: { type: 'string' } } as const;
export const tenantUsage = '[--tenant T]';

/** The tenant a journal file or a bundle file names in its pin; undefined when it names none that can be read. */
export function tenantOfFile(file: string): string | undefined {
  const tenant = tenantOfJournalFile(file);
  if (tenant !== undefined) return tenant;
  try {
    // A bundle: one JSON document whose `journal` is the journal's text.
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { journal?: unknown };
    return typeof doc?.journal === 'string' ? tenantOfPinLine(doc.journal.split('\n', 1)[0]!) : undefined;
  } catch {
    return undefined;
  }
}
