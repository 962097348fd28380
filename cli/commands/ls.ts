/**
 * `weft ls [--dir D] [--json]` — the invocations in a workspace: id, status, records, tenant,
 * intent. Needs no domain: status comes from the journal (sealed endings) and the latest snapshot
 * (resting states). A damaged journal (torn, foreign, unreadable) is listed as `damaged` with what
 * is wrong and the command that repairs or sets it aside; it never hides the others.
 */
import { FileStore } from '../../journal/stores/file.js';
import { listInvocations } from '../../runtime/list.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { workspaceDir } from '../workspace.js';

export const usage = 'ls [--dir D] [--json]                 list the invocations in a workspace (no domain needed)';

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(argv, { dir: { type: 'string' }, json: { type: 'boolean' } }, { min: 0, max: 0 });
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('ls', usage, err);
    throw err;
  }
  const dir = workspaceDir(args.strings.dir);
  const rows = await listInvocations(new FileStore(dir));
  if (args.flags.json) {
    process.stdout.write(JSON.stringify(rows) + '\n');
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write(`no invocations in ${dir}\n`);
    return 0;
  }
  for (const r of rows) {
    process.stdout.write(`${r.id}  ${r.status.padEnd(17)} ${String(r.records).padStart(4)} records  ${r.tenant}  ${JSON.stringify(r.intent.length > 80 ? `${r.intent.slice(0, 79)}…` : r.intent)}\n`);
    if (r.problem) process.stdout.write(`    ${r.problem}; ${r.fix}\n`);
  }
  return 0;
}
