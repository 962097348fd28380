/**
 * Which key seals: `--signing-key FILE` (a key made by `weft keygen`) on `run`, `resume` and
 * `approve`, else `WEFT_SIGNING_KEY`, else the workspace's own (`<dir>/keys/weft.key`, made on
 * first use) — see workspaceKey in key-files.ts. The store records the id of the key an
 * invocation starts with (its metadata, unhashed: runtime/seal-key.ts), so a resume elsewhere must
 * be given the same key; `--rekey` (resume, approve) changes it on purpose instead, and the journal
 * records the change.
 */
import type { OptionSpec } from './args.js';

export const signingKeyOptions: OptionSpec = { 'signing-key': { type: 'string' } };
export const signingKeyUsage = '[--signing-key FILE]';

/** `--rekey`: seal with this command's key although the journal was sealed by another (recorded). */
export const rekeyOptions: OptionSpec = { rekey: { type: 'boolean' } };
export const rekeyUsage = '[--rekey]';
