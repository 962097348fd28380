/**
 * Following a run from the CLI: print progress lines while it runs, then its outcome — as text
 * for a person, or as one JSON object `{ id, status, reason, journal, fingerprint, publicKey }`
 * for a script — and refusals (a pin mismatch, a foreign journal, a domain that cannot be found)
 * the same way, with the invocation's unchanged status. Shared by run, resume and approve.
 */
import path from 'node:path';
import { isWeftError } from '../journal/errors.js';
import { FileStore } from '../journal/stores/file.js';
import { bounded } from '../machines/untrusted-text.js';
import { journalFileOf, type JournalStore } from '../journal/store.js';

import type { InvocationHandle, InvocationResult } from '../runtime/handle.js';
import { invocationStatus } from '../runtime/list.js';
import { UsageError } from './args.js';
import { DomainLoadError } from './domain-loader.js';
import { progressLine } from './progress.js';
import type { Workspace } from './workspace.js';

export async function followRun(handle: InvocationHandle, print: boolean): Promise<InvocationResult> {
  if (print) {
    handle.on('record', (record, replayed) => {
      const line = progressLine(record, replayed);
      if (line) process.stdout.write(`${line}\n`);
    });
  }
  return handle.done;
}

export function printOutcome(ws: Workspace, result: InvocationResult, json: boolean): number {
  const journal = journalFileOf(ws.store, result.id) ?? null;
  if (json) {
    process.stdout.write(
      JSON.stringify({ id: result.id, status: result.status, reason: result.reason ?? null, journal, fingerprint: result.fingerprint ?? null, publicKey: ws.publicKeyFile }) + '\n',
    );
  } else {
    const lines = [``, `invocation  ${result.id}`, `status      ${result.status}${result.reason ? ` — ${result.reason}` : ''}`];
    if (result.fingerprint) lines.push(`fingerprint ${result.fingerprint}`);
    lines.push(`journal     ${journal}`, `public key  ${ws.publicKeyFile}`);
    if (result.status === 'awaiting_approval') lines.push(``, `approve with: weft approve ${result.id} --by <you> [--reject] --dir ${ws.dir}`);
    else if (result.status === 'suspended') lines.push(``, `suspended (${result.suspension?.class ?? 'runtime'}); next: ${result.suspension?.fix ?? `weft resume ${result.id}`} --dir ${ws.dir}`);
    else if (result.status === 'hibernated') lines.push(``, `resume with: weft resume ${result.id} --dir ${ws.dir}`);
    else lines.push(``, `audit with:  weft verify ${journal} --public-key ${ws.publicKeyFile}`, `replay with: weft replay ${journal}`);
    process.stdout.write(lines.join('\n') + '\n');
  }
  if (result.status === 'suspended' && result.error !== undefined && process.env.WEFT_DEBUG) process.stderr.write(`${(result.error as Error)?.stack ?? String(result.error)}\n`);
  return result.status === 'failed' || result.status === 'suspended' ? 1 : 0;
}

/**
 * A command that stopped before its run could report: a refusal (a pin mismatch, a foreign
 * journal, a domain that cannot be found) or an error outside the run (the store unreachable).
 * Say why and what to do, and (with --json) print the invocation's line anyway, with its status
 * as the store now shows it — a script always gets its line. Exit code 2 for a command line to
 * fix, 1 otherwise; `WEFT_DEBUG=1` adds the stack of an error that is not a refusal.
 */
export async function printRefusal(command: string, id: string, where: string | JournalStore | null, err: unknown, json: boolean, note?: string): Promise<number> {
  const refusal = err instanceof UsageError || err instanceof DomainLoadError || isWeftError(err);
  const text = err instanceof Error ? err.message : String(err);
  const message = bounded(text, 2000) + (note && isWeftError(err) && err.code === 'pin.mismatch' ? ` (${note})` : '');
  if (!refusal && process.env.WEFT_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  if (json) {
    // `where` is null when the store itself could not be opened: nothing can be said of the invocation.
    const store = typeof where === 'string' ? new FileStore(where) : where;
    const status = store && (await store.length(id).catch(() => 0)) > 0 ? await invocationStatus(store, id).catch(() => null) : null;
    const journal = typeof where === 'string' ? path.join(where, 'invocations', id, 'journal.jsonl') : store ? (journalFileOf(store, id) ?? null) : null;
    process.stdout.write(JSON.stringify({ id, status, reason: message, journal, fingerprint: null, publicKey: null, refused: isWeftError(err) ? err.code : refusal ? 'usage' : 'error' }) + '\n');
  }
  process.stderr.write(`weft ${command}: ${message}\n`);
  return err instanceof UsageError ? 2 : 1;
}
