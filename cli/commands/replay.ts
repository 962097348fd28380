/**
 * `weft replay <journal.jsonl | id> [--dir D] [--json]` — re-run an invocation over its journal
 * without calling the model or any actuator, re-deriving every decomposition over the pinned
 * library (read from the store's blob area beside the journal). Exit 0 when the replay reproduces
 * the journal (same records, same fingerprint); exit 1 with the divergence, naming the record.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { WeftError } from '../../journal/errors.js';
import { FileStore } from '../../journal/stores/file.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { DEFAULT_DIR, exampleForPin, openWorkspace } from '../workspace.js';
import { readJournal, readJournalFile } from './verify.js';

export const usage = 'replay <journal.jsonl | id> [--dir D] [--json]\n                                       replay a run from its journal, calling nothing; report any divergence';

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(argv, { dir: { type: 'string' }, json: { type: 'boolean' } }, { min: 1, max: 1 });
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('replay', usage, err);
    throw err;
  }
  const target = args.positionals[0]!;
  const isFile = existsSync(target) && target.endsWith('.jsonl');
  const journalPath = isFile ? path.resolve(target) : path.join(path.resolve(args.strings.dir ?? DEFAULT_DIR), 'invocations', target, 'journal.jsonl');
  // A file store keeps journals at <dir>/invocations/<id>/journal.jsonl; its blobs are at <dir>/blobs.
  const dir = args.strings.dir ? path.resolve(args.strings.dir) : path.resolve(path.dirname(journalPath), '..', '..');
  const report = readJournal(await readJournalFile(journalPath), undefined);
  if (!report.ok) return fail(args.flags.json === true, report.error!.message);
  const example = await exampleForPin(new FileStore(dir), report.pin!.library);
  const ws = await openWorkspace(dir, example.name);
  try {
    const result = await ws.runtime.replay({ journalPath });
    const out = { id: result.id, status: result.status, journal: journalPath, fingerprint: result.fingerprint, publicKey: ws.publicKeyFile, records: result.records, identical: true };
    if (args.flags.json === true) process.stdout.write(JSON.stringify(out) + '\n');
    else process.stdout.write(`replayed ${result.records} records of ${result.id} without calling anything: identical to the journal\nstatus      ${result.status}\nfingerprint ${result.fingerprint}\n`);
    return 0;
  } catch (err) {
    if (err instanceof WeftError) return fail(args.flags.json === true, err.message);
    throw err;
  }
}

function fail(json: boolean, message: string): number {
  if (json) process.stdout.write(JSON.stringify({ identical: false, error: message }) + '\n');
  else process.stderr.write(`weft replay: ${message}\n`);
  return 1;
}
