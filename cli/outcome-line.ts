/**
 * The `--json` line of a run's outcome — `{ id, status, reason, journal, fingerprint, publicKey }` —
 * built in this one place for run, resume, approve, cancel and fork (a command that says more —
 * cancel: what stays done; fork: its parent — adds its fields after these). `journal` names where
 * the journal is: its file for a file store, a Redis journal's reference (cli/journal-ref.ts) —
 * which `weft verify` and `weft log` read as they read a path — or null.
 */
import type { InvocationResult } from '../runtime/handle.js';
import { journalFileOf, type JournalStore } from '../journal/store.js';
import { redisJournalRef } from './journal-ref.js';
import type { Workspace } from './workspace.js';

export function outcomeLine(ws: Workspace, result: InvocationResult): { id: string; status: string; reason: string | null; journal: string | null; fingerprint: string | null; publicKey: string | null } {
  return {
    id: result.id,
    status: result.status,
    reason: result.reason ?? null,
    journal: journalFileOf(ws.store, result.id) ?? journalRefOf(ws.store, result.id),
    fingerprint: result.fingerprint ?? null,
    publicKey: ws.publicKeyFile,
  };
}

/** A Redis journal's reference (`redis://…#<prefix>/<id>`, cli/journal-ref.ts) when the store keeps no file; null otherwise. */
export function journalRefOf(store: JournalStore, id: string): string | null {
  const redis = store as { prefix?: unknown; name?: unknown };
  return typeof redis.prefix === 'string' && typeof redis.name === 'string' && /^rediss?:\/\//.test(redis.name) ? redisJournalRef(redis.name, redis.prefix, id) : null;
}
