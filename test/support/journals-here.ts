/**
 * What the commands that make keys, read, verify and export journals decide, in the test's own
 * process, by their own functions (dist/, through ./commands-here.ts) — for tests whose subject is
 * which key seals and verifies, or a sample of journals to check, rather than the command's
 * arguments or printed output (those keep their `weft` child processes, ./cli.ts):
 *
 * - `keyPair(dir)`: a fresh key pair as `weft keygen --out DIR` writes it; `keyPairIn(dir)`: the
 *   workspace's own pair (made on first use), as the commands make it;
 * - `verifyJournal(journal, how)`: the exit code and lines `weft verify JOURNAL [--public-key FILE |
 *   --no-signature]` gives a journal file or a stored journal's bytes (cli/commands/verify.ts);
 * - `verifyBundle(file, keyFile)`: `weft verify <bundle> --public-key F --json`'s exit code and JSON,
 *   the bundle checked by the command's own check (journal/bundle-check.ts);
 * - `storedJournal(url, prefix, id)`: a Redis journal written out as `weft export` writes it;
 * - `exportAs(dir, id)`: what `weft export ID --dir D` prints (the bundle, one JSON line).
 */
import { randomBytes } from 'node:crypto';
import { commandModules } from './commands-here.js';
import { fromDist } from './dist.js';

export interface KeyFiles {
  /** DIR/weft.key */
  key: string;
  /** DIR/weft.pub */
  pub: string;
  keyId: string;
}

/** The pair `weft keygen --out DIR` writes: a fresh key from the OS CSPRNG, never over another. */
export async function keyPair(dir: string): Promise<KeyFiles> {
  const { writeKeyPair, signingKeyFromSecret } = await commandModules();
  const key = signingKeyFromSecret(new Uint8Array(randomBytes(32)));
  const { secretFile, publicFile } = await writeKeyPair(dir, key);
  return { key: secretFile, pub: publicFile, keyId: key.keyId };
}

/** The key pair in `dir` (made there if there is none, as the commands make a workspace's); the secret key's file. */
export async function keyPairIn(dir: string): Promise<string> {
  const { ensureKeyPair } = await commandModules();
  return (await ensureKeyPair(dir)).secretFile;
}

/**
 * What `weft verify JOURNAL [--public-key FILE | --no-signature]` decides: its exit code (0 verified,
 * 1 not intact, 3 sealed by another key, 4 seal not checked) and the lines it prints. `journal` is a
 * journal file (streamed, as the command streams one), or a stored journal's bytes.
 */
export async function verifyJournal(journal: string | Uint8Array, how: { publicKey: string } | { noSignature: true }): Promise<{ code: number; lines: string[] }> {
  const m = await commandModules();
  const { verifyJournalFile, verifyExitCode, verifyLines } = m.commands.verify;
  const key = 'publicKey' in how ? await m.loadPublicKey(how.publicKey) : undefined;
  const report = typeof journal === 'string' ? await verifyJournalFile(journal, key) : m.verifyJournalInMemory(journal, key);
  const context = { signature: 'publicKey' in how ? { by: 'file' as const, file: how.publicKey, key: key! } : { by: 'none' as const, skipped: true }, input: 'journal' as const };
  return { code: verifyExitCode(report, context), lines: verifyLines(report, context) };
}

/** `weft verify <bundle file> --public-key <keyFile> --json` in this process: its exit code and JSON (a file that is not a bundle, or not a valid one, throws). */
export async function verifyBundle(file: string, keyFile: string): Promise<{ code: number; json: Record<string, unknown> }> {
  const m = await commandModules();
  const bytes = await m.readJournalFile(file);
  if (!m.looksLikeBundle(bytes)) throw new Error(`${file} is not a bundle`);
  const checked = m.checkBytes(bytes, { file: keyFile, key: await m.loadPublicKey(keyFile) }, false);
  if ('invalidBundle' in checked) throw new Error(`${file}: ${checked.invalidBundle}`);
  return { code: m.commands.verify.verifyExitCode(checked.report, checked.context), json: m.commands.verify.reportJson(checked.report, checked.context) as unknown as Record<string, unknown> };
}

/** Invocation `id`'s journal in the Redis store at `url` under `prefix`, written out as `weft export` and `weft verify <id> --redis` read it (undefined when there is none). */
export async function storedJournal(url: string, prefix: string, id: string): Promise<Uint8Array | undefined> {
  const m = await commandModules();
  const { RedisStore } = await fromDist<typeof import('../../dist/stores/redis.js')>('stores/redis.js');
  const store = await RedisStore.open({ redis: url, prefix });
  try {
    return await m.storedJournalLines(store, id);
  } finally {
    await store.close();
  }
}

/** What `weft export <id> --dir D` prints for a run in a workspace on disk: its bundle, by the command's own function, as one line. */
export async function exportAs(dir: string, id: string): Promise<string> {
  const m = await commandModules();
  return JSON.stringify(await m.commands.export.exportBundle(dir, id)) + '\n';
}
