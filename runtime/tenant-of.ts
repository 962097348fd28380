/**
 * Whose an invocation is, read from its pin: what every scoped reader asks before it shows or acts
 * on an id — `--tenant T` on the CLI (cli/tenant-scope.ts), a serve scoped to one tenant
 * (serve.ts), a runtime scoped to one (`createRuntime({ tenant })`). An invocation of another
 * tenant is treated exactly as one that is not there.
 *
 * The scope of a call (`callScope`), the one rule every Runtime method that takes an id follows: a
 * runtime scoped to a tenant acts for that tenant only — a per-call `tenant` can never widen or
 * change it (another tenant named per call is refused as an unknown id, with the words a missing id
 * gets); an unscoped runtime (an operator's) may narrow a call to one tenant.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';

/** Whether `id` is `tenant`'s: always true without a tenant; false for an id that is not there, or cannot be read now. */
export async function isTenants(store: Pick<JournalStore, 'read'>, id: string, tenant: string | undefined): Promise<boolean> {
  if (tenant === undefined) return true;
  const first = (await store.read(id, 0, 1).catch(() => []))[0] as JournalRecord<'invocation.pinned'> | undefined;
  return first?.kind === 'invocation.pinned' && first.body.tenant === tenant;
}

/**
 * The tenant a call acts for, given the runtime's `scope` and the call's own `asked`: `tenant` is
 * the one the invocation must be pinned to (undefined: any); `foreign` when a scoped runtime was
 * asked for another tenant — the call is refused as unknown before anything of the id is read.
 */
export function callScope(scope: string | undefined, asked: string | undefined): { tenant: string | undefined; foreign: boolean } {
  if (scope === undefined) return { tenant: asked, foreign: false };
  return { tenant: scope, foreign: asked !== undefined && asked !== scope };
}

/**
 * The tenant a journal file's first line (its `invocation.pinned`) names, read synchronously up to
 * that line only; undefined when the file is missing, empty, or its first line is not a pin.
 */
export function tenantOfJournalFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const chunks: Buffer[] = [];
    const chunk = Buffer.alloc(64 * 1024);
    for (let pos = 0; pos < 64 * 1024 * 1024; ) {
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n === 0) break;
      const end = chunk.subarray(0, n).indexOf(0x0a);
      chunks.push(Buffer.from(chunk.subarray(0, end === -1 ? n : end)));
      if (end !== -1) break;
      pos += n;
    }
    return tenantOfPinLine(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The tenant a journal's first line names, when it is an `invocation.pinned` record; else undefined. */
export function tenantOfPinLine(line: string): string | undefined {
  try {
    const first = JSON.parse(line) as { kind?: unknown; body?: { tenant?: unknown } };
    return first?.kind === 'invocation.pinned' && typeof first.body?.tenant === 'string' ? first.body.tenant : undefined;
  } catch {
    return undefined;
  }
}
