/**
 * The seal: an ed25519 signature (@noble/curves) over a journal's fingerprint, the hash of the
 * last record before `invocation.sealed`. The signed message is domain-separated
 * ("weft.seal.v1:" + fingerprint) so a Weft signature can never be replayed as another protocol's.
 *
 * Keys are raw 32-byte ed25519 keys written as hex; a key's id is the full SHA-256 of its public
 * key bytes. Signing is deterministic (RFC 8032), so the same key and fingerprint give the same
 * signature — which keeps sealed journals byte-identical across runs.
 *
 * Pure: key generation takes its randomness from the caller (CLI: node:crypto).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes, sha256Hex } from './digest.js';

export interface SigningKey {
  /** 32-byte ed25519 secret key, hex. */
  secretKey: string;
  publicKey: string;
  keyId: string;
}

export interface PublicKey {
  publicKey: string;
  keyId: string;
}

const encoder = new TextEncoder();

function sealMessage(fingerprint: string): Uint8Array {
  return encoder.encode(`weft.seal.v1:${fingerprint}`);
}

/** The id of a public key: SHA-256 of its 32 raw bytes, hex. */
export function keyIdOf(publicKeyHex: string): string {
  return sha256Hex(hexToBytes(publicKeyHex));
}

/** Build a signing key from 32 secret bytes (the caller supplies the randomness). */
export function signingKeyFromSecret(secret: Uint8Array): SigningKey {
  if (secret.length !== 32) throw new Error(`an ed25519 secret key is 32 bytes, got ${secret.length}`);
  const publicKey = bytesToHex(publicKeyDeriver(secret));
  return { secretKey: bytesToHex(secret), publicKey, keyId: keyIdOf(publicKey) };
}

export function publicKeyOf(key: SigningKey): PublicKey {
  return { publicKey: key.publicKey, keyId: key.keyId };
}

/** An ed25519 signer: (message, 32-byte secret) → 64-byte signature. Ed25519 is deterministic, so every correct one gives the same bytes. */
export type Ed25519Signer = (message: Uint8Array, secret: Uint8Array) => Uint8Array;

let signer: Ed25519Signer = (message, secret) => ed25519.sign(message, secret);

/** An ed25519 public key derivation: 32-byte secret → 32-byte public key. Deterministic, so every correct one agrees. */
export type Ed25519PublicKeyDeriver = (secret: Uint8Array) => Uint8Array;

/** The reference derivation, for tests that prove an installed one gives the same bytes. */
export const referenceEd25519PublicKey: Ed25519PublicKeyDeriver = (secret) => ed25519.getPublicKey(secret);

let publicKeyDeriver: Ed25519PublicKeyDeriver = referenceEd25519PublicKey;

/** Replace the reference public-key derivation by a faster one (ed25519-node.ts: node:crypto). */
export function installEd25519PublicKey(impl: Ed25519PublicKeyDeriver): void {
  publicKeyDeriver = impl;
}

/** Replace the reference signer (@noble/curves) by a faster one (ed25519-node.ts: node:crypto). */
export function installEd25519Signer(impl: Ed25519Signer): void {
  signer = impl;
}

/** The reference signer, for tests that prove an installed one gives the same bytes. */
export const referenceEd25519Signer: Ed25519Signer = (message, secret) => ed25519.sign(message, secret);

/** Sign a fingerprint; returns the 64-byte signature as hex. */
export function signFingerprint(key: SigningKey, fingerprint: string): string {
  return bytesToHex(signer(sealMessage(fingerprint), hexToBytes(key.secretKey)));
}

/** True when `signature` is `key`'s signature over `fingerprint`. Never throws on malformed input. */
export function verifySeal(key: PublicKey, fingerprint: string, signature: string): boolean {
  try {
    return ed25519.verify(hexToBytes(signature), sealMessage(fingerprint), hexToBytes(key.publicKey));
  } catch {
    return false;
  }
}
