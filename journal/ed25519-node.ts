/**
 * The node:crypto fast path for the seal's ed25519 signature (about 15× faster than the
 * @noble/curves reference) and for deriving a public key from its secret (the reference's first
 * derivation builds its precomputed tables: ~60 ms of every command's start). Importing this module
 * installs both; Node entry points import it beside sha256-node.ts. Ed25519 keys and signatures are
 * deterministic (RFC 8032), so it gives exactly the reference's bytes — test/seal-node.test.ts proves
 * it on random keys and fingerprints. Verification stays with the reference, so a seal is judged by
 * the same code in Node and in a browser.
 */
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { installEd25519PublicKey, installEd25519Signer, type Ed25519PublicKeyDeriver, type Ed25519Signer } from './seal.js';

/** PKCS#8 DER header of an ed25519 private key, before its 32-byte seed. */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const keys = new Map<string, KeyObject>();

/** The private key object for a 32-byte secret (the last few are kept). */
function privateKeyOf(secret: Uint8Array): KeyObject {
  const id = Buffer.from(secret).toString('hex');
  let key = keys.get(id);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, secret]), format: 'der', type: 'pkcs8' });
    if (keys.size >= 16) keys.clear();
    keys.set(id, key);
  }
  return key;
}

export const nodeEd25519Signer: Ed25519Signer = (message, secret) => {
  const signature = sign(null, message, privateKeyOf(secret));
  return new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength);
};

/** The raw public key: the last 32 bytes of its SPKI DER encoding. */
export const nodeEd25519PublicKey: Ed25519PublicKeyDeriver = (secret) => {
  const der = createPublicKey(privateKeyOf(secret)).export({ format: 'der', type: 'spki' });
  return new Uint8Array(der.subarray(der.length - 32));
};

installEd25519Signer(nodeEd25519Signer);
installEd25519PublicKey(nodeEd25519PublicKey);
