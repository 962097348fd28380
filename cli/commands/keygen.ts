/**
 * `weft keygen --out DIR` — create an ed25519 key pair for sealing journals: DIR/weft.key (the
 * secret, mode 0600) and DIR/weft.pub (the public key an auditor passes to `weft verify`).
 *
 * Randomness: 32 bytes from node:crypto `randomBytes` (the OS CSPRNG). Never overwrites a key.
 * Exit codes: 0 written, 1 refused (a key already exists) or write failed, 2 usage error.
 */
import { randomBytes } from 'node:crypto';
import { signingKeyFromSecret } from '../../journal/seal.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { KeyFileError, writeKeyPair } from '../../runtime/keys.js';
import { EXIT } from '../exit-codes.js';

export const usage = 'keygen --out DIR                     create DIR/weft.key (secret, 0600) and DIR/weft.pub';

export async function run(argv: string[]): Promise<number> {
  let dir: string;
  try {
    const args = parseCommandArgs(argv, { out: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' } }, { min: 0, max: 0 });
    if (args.flags.help) {
      process.stdout.write(`usage: weft ${usage}\n`);
      return EXIT.done;
    }
    if (!args.strings.out) throw new UsageError('--out DIR is required');
    dir = args.strings.out;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('keygen', usage, err);
    throw err;
  }
  const key = signingKeyFromSecret(new Uint8Array(randomBytes(32)));
  try {
    const { secretFile, publicFile } = await writeKeyPair(dir, key);
    process.stdout.write(
      `wrote ${secretFile} (secret, mode 0600: keep it private)\n` +
        `wrote ${publicFile} (public: give it to auditors for weft verify --public-key)\n` +
        `key id ${key.keyId}\n`,
    );
    return EXIT.done;
  } catch (err) {
    if (err instanceof KeyFileError) {
      process.stderr.write(`weft keygen: ${err.message}\n`);
      return EXIT.failed;
    }
    process.stderr.write(`weft keygen: cannot write keys to ${dir}: ${(err as Error).message}\n`);
    return EXIT.failed;
  }
}
