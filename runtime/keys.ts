/**
 * Key files for sealing journals: reading, validating and writing them.
 *
 *   weft.key  {"format":"weft.ed25519.secret.v1","secretKey":hex,"publicKey":hex,"keyId":hex}  mode 0600
 *   weft.pub  {"format":"weft.ed25519.public.v1","publicKey":hex,"keyId":hex}
 *
 * Invariants: a loaded key is always consistent — keyId is the SHA-256 of the public key, and for a
 * secret key the public key is the one derived from the secret — or loading fails with a
 * KeyFileError that names the file and what is wrong. Writing never overwrites an existing key
 * file (exclusive create), and the secret file is created with mode 0600 from its first byte.
 *
 * Effects: file system, and node:crypto randomness in generateSigningKey only.
 */
import { constants, promises as fs } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { shellWord } from '../queue/shell-words.js';
import { bytesToHex, hexToBytes } from '../journal/digest.js';
import type { JournalStore } from '../journal/store.js';
import { keyIdOf, publicKeyOf, signingKeyFromSecret, type PublicKey, type SigningKey } from '../journal/seal.js';

export const SECRET_FORMAT = 'weft.ed25519.secret.v1';
export const PUBLIC_FORMAT = 'weft.ed25519.public.v1';
export const SECRET_FILE = 'weft.key';
export const PUBLIC_FILE = 'weft.pub';

/** A key file is missing, unreadable, malformed or inconsistent. */
export class KeyFileError extends Error {
  override readonly name = 'KeyFileError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`key file ${file}: ${reason}`);
  }
}

const HEX32 = /^[0-9a-f]{64}$/;

async function readJsonFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new KeyFileError(file, `cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new KeyFileError(file, 'not JSON (expected a key written by `weft keygen`)');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new KeyFileError(file, 'not a JSON object');
  return value as Record<string, unknown>;
}

function hexField(file: string, data: Record<string, unknown>, field: string): string {
  const value = data[field];
  if (typeof value !== 'string' || !HEX32.test(value)) throw new KeyFileError(file, `"${field}" must be 64 lowercase hex characters`);
  return value;
}

function checkKeyId(file: string, publicKey: string, keyId: string): void {
  if (keyIdOf(publicKey) !== keyId) {
    throw new KeyFileError(file, 'inconsistent: "keyId" is not the SHA-256 of "publicKey" (the file was edited or damaged)');
  }
}

function parseSecret(file: string, data: Record<string, unknown>): SigningKey {
  const secretKey = hexField(file, data, 'secretKey');
  const publicKey = hexField(file, data, 'publicKey');
  const keyId = hexField(file, data, 'keyId');
  checkKeyId(file, publicKey, keyId);
  const derived = signingKeyFromSecret(hexToBytes(secretKey));
  if (derived.publicKey !== publicKey) throw new KeyFileError(file, 'inconsistent: "publicKey" is not the public key of "secretKey"');
  return derived;
}

/**
 * Load a public key. A secret key file is accepted too (its public half is used), so an auditor
 * holding only the .pub file and an operator holding the .key file run the same command.
 */
export async function loadPublicKey(file: string): Promise<PublicKey> {
  const data = await readJsonFile(file);
  if (data.format === SECRET_FORMAT) return publicKeyOf(parseSecret(file, data));
  if (data.format !== PUBLIC_FORMAT) {
    throw new KeyFileError(file, `unknown format ${JSON.stringify(data.format)} (expected "${PUBLIC_FORMAT}")`);
  }
  const publicKey = hexField(file, data, 'publicKey');
  const keyId = hexField(file, data, 'keyId');
  checkKeyId(file, publicKey, keyId);
  return { publicKey, keyId };
}

/** Load a secret (signing) key. */
export async function loadSigningKey(file: string): Promise<SigningKey> {
  // A signing key that is not there: say how to make one (the public key beside it is made too).
  if (!(await exists(file))) {
    const dir = path.dirname(file);
    const made = path.join(dir, SECRET_FILE);
    throw new KeyFileError(file, `no such file: make a key pair with \`weft keygen --out ${shellWord(dir)}\`, which writes ${made} and its public key beside it${made === path.resolve(file) || made === file ? '' : `, and pass that file`} (or pass no --signing-key nor WEFT_SIGNING_KEY: a key is made on first use)`);
  }
  const data = await readJsonFile(file);
  if (data.format !== SECRET_FORMAT) {
    throw new KeyFileError(file, `unknown format ${JSON.stringify(data.format)} (expected "${SECRET_FORMAT}"; is this the public key?)`);
  }
  return parseSecret(file, data);
}

export function secretKeyJson(key: SigningKey): string {
  return JSON.stringify({ format: SECRET_FORMAT, secretKey: key.secretKey, publicKey: key.publicKey, keyId: key.keyId }, null, 2) + '\n';
}

export function publicKeyJson(key: PublicKey): string {
  return JSON.stringify({ format: PUBLIC_FORMAT, publicKey: key.publicKey, keyId: key.keyId }, null, 2) + '\n';
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch {
    return false;
  }
}

async function writeExclusive(file: string, text: string, mode: number): Promise<void> {
  const handle = await fs.open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  try {
    await handle.chmod(mode); // the umask may have widened nothing, but never trust it with a secret
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Write `key` as DIR/weft.key (0600) and DIR/weft.pub (0644). Refuses, writing nothing, when
 * either file already exists. Returns the two paths.
 */
export async function writeKeyPair(dir: string, key: SigningKey): Promise<{ secretFile: string; publicFile: string }> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const secretFile = path.join(dir, SECRET_FILE);
  const publicFile = path.join(dir, PUBLIC_FILE);
  for (const file of [secretFile, publicFile]) {
    if (await exists(file)) {
      throw new KeyFileError(file, 'already exists; refusing to overwrite a key (move it away or choose another --out directory)');
    }
  }
  try {
    await writeExclusive(secretFile, secretKeyJson(key), 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new KeyFileError(secretFile, 'already exists; refusing to overwrite a key');
    throw err;
  }
  try {
    await writeExclusive(publicFile, publicKeyJson(key), 0o644);
  } catch (err) {
    await fs.rm(secretFile, { force: true }); // all or nothing: never leave a secret without its public half
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new KeyFileError(publicFile, 'already exists; refusing to overwrite a key');
    throw err;
  }
  return { secretFile, publicFile };
}

/** A fresh ed25519 signing key from the operating system's randomness (write it with writeKeyPair). */
export function generateSigningKey(): SigningKey {
  return signingKeyFromSecret(randomBytes(32));
}

/**
 * The public key a store holds under `keyId` — a runtime puts its key's 32 raw bytes in the blob
 * area when it starts, and a blob's digest is the SHA-256 of its bytes, which is exactly the key id
 * — or undefined. Found keys are a convenience for tools, not a trust anchor: compare the id with
 * the key you trust.
 */
export async function publicKeyFromStore(store: Pick<JournalStore, 'getBlob'>, keyId: string): Promise<PublicKey | undefined> {
  const bytes = await store.getBlob(keyId).catch(() => undefined);
  if (!bytes || bytes.length !== 32) return undefined;
  const publicKey = bytesToHex(bytes);
  return keyIdOf(publicKey) === keyId ? { publicKey, keyId } : undefined;
}

/**
 * The key pair in `dir`, made now if there is none — safely when several processes ask at once:
 * the pair is written complete in a private folder first and the secret is then linked into
 * place (atomic: exactly one process wins); every other process loads the winner's key. The
 * public half is linked after it. `generated`: this call made the key.
 */
export async function ensureKeyPair(dir: string): Promise<{ key: SigningKey; secretFile: string; publicFile: string; generated: boolean }> {
  const secretFile = path.join(dir, SECRET_FILE);
  const publicFile = path.join(dir, PUBLIC_FILE);
  if (await exists(secretFile)) return { key: await loadSigningKey(secretFile), secretFile, publicFile, generated: false };
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const scratch = await fs.mkdtemp(path.join(dir, '.new-'));
  try {
    const made = await writeKeyPair(scratch, generateSigningKey());
    try {
      await fs.link(made.secretFile, secretFile);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return { key: await loadSigningKey(secretFile), secretFile, publicFile, generated: false }; // another process won
    }
    await fs.link(made.publicFile, publicFile).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    return { key: await loadSigningKey(secretFile), secretFile, publicFile, generated: true };
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

