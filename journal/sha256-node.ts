/**
 * The node:crypto fast path for SHA-256. Importing this module installs it; Node entry points
 * (stores, CLI, runtime, benchmarks) import it, the browser viewer does not. It computes the
 * same bytes as the @noble/hashes reference (test/digest.test.ts proves it on random inputs).
 */
import { createHash } from 'node:crypto';
import { installSha256, type Sha256 } from './digest.js';

export const nodeSha256: Sha256 = (bytes) => {
  const out = createHash('sha256').update(bytes).digest();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
};

installSha256(nodeSha256, 'node:crypto');
