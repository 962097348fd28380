/**
 * `runtime.verify(source, publicKey?)`: verify a journal offline — its chain, every record's schema,
 * and the seal by `publicKey` — by id in this runtime's store or as a file. Nothing is run or
 * written. A scoped runtime verifies only its tenant's journals (another's is unknown, as an id is).
 */
import { readFileSync } from 'node:fs';
import { verifyRecords, type JournalReport } from '../journal/reader.js';
import type { PublicKey } from '../journal/seal.js';
import { readJournalBytes } from '../journal/verify-bytes.js';
import { checkFileTenant, checkTenant } from './call-checks.js';
import type { Executor } from './executor.js';

export async function verifySource(ex: Executor, source: string | { journalPath: string }, publicKey?: PublicKey): Promise<JournalReport> {
  if (typeof source !== 'string') {
    checkFileTenant(ex, source.journalPath);
    return readJournalBytes(readFileSync(source.journalPath), publicKey ? { publicKey } : {});
  }
  const records = await ex.store.read(source);
  if (ex.options.tenant !== undefined) checkTenant(ex, source, records[0], undefined);
  return verifyRecords(records, publicKey ? { publicKey } : {});
}
