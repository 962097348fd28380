/**
 * `--tenant T` on the commands that read one invocation by id (`show`, `export`, `log`, `verify`,
 * `replay`; `resume` and `approve` check it in the runtime): an invocation of another tenant is
 * treated exactly as one that is not there — the command says what it says for a missing id, so a
 * tenant learns nothing of another's. Without `--tenant` a command serves every tenant (an
 * operator's view of the store).
 */
export { isTenants } from '../runtime/tenant-of.js';

export const tenantOption = { tenant: { type: 'string' } } as const;
export const tenantUsage = '[--tenant T]';
