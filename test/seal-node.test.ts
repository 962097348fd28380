/**
 * The node:crypto ed25519 signer and public-key derivation give exactly the @noble/curves reference's
 * signatures and keys (ed25519 is deterministic), on random keys and fingerprints — so installing
 * them changes no seal's bytes.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { nodeEd25519PublicKey, nodeEd25519Signer } from '../journal/ed25519-node.js';
import { referenceEd25519PublicKey, referenceEd25519Signer, signFingerprint, signingKeyFromSecret, verifySeal, publicKeyOf } from '../journal/seal.js';

describe('the node:crypto ed25519 signer', () => {
  test('signs and derives public keys exactly as the reference, and its seals verify', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 0, maxLength: 200 }), (secret, message) => {
        expect(Buffer.from(nodeEd25519Signer(message, secret)).toString('hex')).toBe(Buffer.from(referenceEd25519Signer(message, secret)).toString('hex'));
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (secret) => {
        expect(Buffer.from(nodeEd25519PublicKey(secret)).toString('hex')).toBe(Buffer.from(referenceEd25519PublicKey(secret)).toString('hex'));
      }),
      { numRuns: 200 },
    );
    const key = signingKeyFromSecret(new Uint8Array(32).fill(5));
    const fingerprint = 'ab'.repeat(32);
    expect(verifySeal(publicKeyOf(key), fingerprint, signFingerprint(key, fingerprint))).toBe(true);
  });
});
