/**
 * The node:crypto fast path for the seal's ed25519 signature (about 15× faster than the
 * @noble/curves reference). Importing this module installs it; Node entry points import it beside
 * sha256-node.ts. Ed25519 signatures are deterministic (RFC 8032), so it gives exactly the
 * reference's bytes — test/seal-node.test.ts proves it on random keys and fingerprints.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { installEd25519Signer, type Ed25519Signer } from './seal.js';

/** PKCS#8 DER header of an ed25519 private key, before its 32-byte seed. */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const keys = new Map<string, KeyObject>();

export const nodeEd25519Signer: Ed25519Signer = (message, secret) => {
  const id = Buffer.from(secret).toString('hex');
  let key = keys.get(id);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, secret]), format: 'der', type: 'pkcs8' });
    if (keys.size >= 16) keys.clear();
    keys.set(id, key);
  }
  const signature = sign(null, message, key);
  return new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength);
};

installEd25519Signer(nodeEd25519Signer);
