/**
 * Following a run from the CLI: print progress lines while it runs, then its outcome — as text
 * for a person, or as one JSON object `{ id, status, journal, fingerprint, publicKey }` for a
 * script. Shared by run, resume and approve.
 */
import type { InvocationHandle, InvocationResult } from '../runtime/handle.js';
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
  const journal = ws.runtime.journalPath(result.id) ?? null;
  if (json) {
    process.stdout.write(
      JSON.stringify({ id: result.id, status: result.status, journal, fingerprint: result.fingerprint ?? null, publicKey: ws.publicKeyFile, ...(result.reason ? { reason: result.reason } : {}) }) + '\n',
    );
  } else {
    const lines = [``, `invocation  ${result.id}`, `status      ${result.status}${result.reason ? ` — ${result.reason}` : ''}`];
    if (result.fingerprint) lines.push(`fingerprint ${result.fingerprint}`);
    lines.push(`journal     ${journal}`, `public key  ${ws.publicKeyFile}`);
    if (result.status === 'awaiting_approval') lines.push(``, `approve with: weft approve ${result.id} --by <you> [--reject] --dir ${ws.dir}`);
    else if (result.status === 'hibernated') lines.push(``, `resume with: weft resume ${result.id} --dir ${ws.dir}`);
    else lines.push(``, `audit with:  weft verify ${journal} --public-key ${ws.publicKeyFile}`, `replay with: weft replay ${journal}`);
    process.stdout.write(lines.join('\n') + '\n');
  }
  return result.status === 'failed' ? 1 : 0;
}
