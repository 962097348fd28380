/**
 * `weft ls [--dir D] [--json]` — the invocations in a workspace: id, status, records, tenant,
 * intent. Status comes from the journal (sealed endings) and the latest snapshot (resting states).
 */
import path from 'node:path';
import { FileStore } from '../../journal/stores/file.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { DEFAULT_DIR, exampleForPin, openWorkspace } from '../workspace.js';

export const usage = 'ls [--dir D] [--json]                 list the invocations in a workspace';

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(argv, { dir: { type: 'string' }, json: { type: 'boolean' } }, { min: 0, max: 0 });
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('ls', usage, err);
    throw err;
  }
  const dir = path.resolve(args.strings.dir ?? DEFAULT_DIR);
  const store = new FileStore(dir);
  const ids = await store.list();
  if (ids.length === 0) {
    process.stdout.write(args.flags.json ? '[]\n' : `no invocations in ${dir}\n`);
    return 0;
  }
  const first = (await store.read(ids[0]!, 0, 1))[0]!;
  const example = await exampleForPin(store, (first.body as { pin: { library: string } }).pin.library);
  const ws = await openWorkspace(dir, example.name);
  const rows = await ws.runtime.list();
  if (args.flags.json) {
    process.stdout.write(JSON.stringify(rows) + '\n');
  } else {
    for (const r of rows) process.stdout.write(`${r.id}  ${r.status.padEnd(17)} ${String(r.records).padStart(4)} records  ${r.tenant}  ${JSON.stringify(r.intent)}\n`);
  }
  return 0;
}
