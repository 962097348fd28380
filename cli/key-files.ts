/**
 * The signing key files a command seals with — what is genuinely this host's: `--signing-key FILE`,
 * else `WEFT_SIGNING_KEY` (a key file made by `weft keygen`), else a key made on first use, 0600 —
 * the workspace's own (`<dir>/keys/`: the key travels with the journals) or, with Redis, the user's
 * (`userKeysDir()`: the same wherever weft runs on this host). Which key is IN FORCE for an
 * invocation is the store's to say (runtime/key-in-force.ts); this file only finds files.
 */
import { homedir } from 'node:os';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { SigningKey } from '../journal/seal.js';
import { ensureKeyPair, loadSigningKey, PUBLIC_FILE, SECRET_FILE } from '../runtime/keys.js';

/**
 * Where a user's own signing key lives: `$WEFT_HOME/keys`, else `$XDG_CONFIG_HOME/weft/keys`, else
 * `~/.config/weft/keys`. In the Redis mode the store is not a folder, so a key kept in the folder a
 * command ran from (`./.weft/keys`) would make a resume from another folder seal with another key;
 * the user's key is the same wherever they run weft on this host.
 */
export function userKeysDir(): string {
  const home = process.env.WEFT_HOME || path.join(process.env.XDG_CONFIG_HOME || path.join(homedir(), '.config'), 'weft');
  return path.join(path.resolve(home), 'keys');
}

export interface KeyChoice {
  key: SigningKey | undefined;
  publicKeyFile: string;
  /** The folder the key is in, and whether it was made now. */
  keysDir: string;
  generated: boolean;
}

/**
 * The signing key: `--signing-key FILE` (`file`), else `WEFT_SIGNING_KEY` (a key file made by
 * `weft keygen`) — what several hosts sharing a Redis store use so that one key seals every
 * journal — else a key made on first use (written 0600): with a workspace on disk, the
 * workspace's own (`<dir>/keys`: the key travels with the journals); with Redis, the user's
 * (`userKeysDir()`). `recorded`: the key id the store records for the invocation being resumed —
 * a key of the workspace or the user's that has it is chosen (invocations started before keys
 * moved to the user's folder). `generate: false` makes no key (resuming an invocation whose store
 * records its key: a fresh key could only be refused). `generated` says a key was made now.
 */
export async function workspaceKey(dir: string, options: { file?: string | undefined; generate?: boolean; redis?: boolean; recorded?: string | undefined } = {}): Promise<KeyChoice> {
  const given = options.file ?? (process.env.WEFT_SIGNING_KEY || undefined);
  if (given) {
    const file = path.resolve(given);
    const publicKeyFile = file.endsWith('.key') ? `${file.slice(0, -'.key'.length)}.pub` : `${file}.pub`;
    return { key: await loadSigningKey(file), publicKeyFile, keysDir: path.dirname(file), generated: false };
  }
  const workspaceKeys = path.join(dir, 'keys');
  const ownKeys = options.redis ? userKeysDir() : workspaceKeys;
  // Each key file is read (and its key derived) once, however many of the choices below look at it.
  const loaded = new Map<string, Promise<SigningKey>>();
  const load = (file: string) => {
    let key = loaded.get(file);
    if (!key) loaded.set(file, (key = loadSigningKey(file)));
    return key;
  };
  if (options.recorded !== undefined) {
    for (const keysDir of options.redis ? [ownKeys, workspaceKeys] : [ownKeys]) {
      const secretFile = path.join(keysDir, SECRET_FILE);
      if (!existsSync(secretFile)) continue;
      const key = await load(secretFile);
      if (key.keyId === options.recorded) return { key, publicKeyFile: path.join(keysDir, PUBLIC_FILE), keysDir, generated: false };
    }
  }
  const ownSecret = path.join(ownKeys, SECRET_FILE);
  if (options.generate === false) {
    // The runtime refuses a key other than the recorded one, naming both: hand it the key there is.
    const key = existsSync(ownSecret) ? await load(ownSecret) : undefined;
    return { key, publicKeyFile: path.join(ownKeys, PUBLIC_FILE), keysDir: ownKeys, generated: false };
  }
  // Read already (it did not have the recorded id): it is the key there is, as ensureKeyPair would read it again.
  const read = loaded.get(ownSecret);
  if (read) return { key: await read, publicKeyFile: path.join(ownKeys, PUBLIC_FILE), keysDir: ownKeys, generated: false };
  const { key, publicFile, generated } = await ensureKeyPair(ownKeys);
  return { key, publicKeyFile: publicFile, keysDir: ownKeys, generated };
}

/** What a command says on stderr when it made the key that journals in Redis — which other hosts may resume — are sealed by. */
export function generatedKeyNotice(keysDir: string): string {
  const file = path.join(keysDir, SECRET_FILE);
  return `weft: generated your signing key in ${keysDir} (no --signing-key or WEFT_SIGNING_KEY was given); it seals the invocations you start in Redis, ` +
    `and the store records its key id, so another host that resumes or approves them must be given it: copy ${file} there and pass --signing-key FILE (or set WEFT_SIGNING_KEY)\n`;
}
