/**
 * A seeded PRNG with named streams. Every stream is a pure function of (seed, scope, stream name)
 * — SHA-256 in counter mode — so an actuator's "random" choices, and the runtime's retry jitter,
 * are the same on every run with the same pin, and adding a new stream never shifts an old one.
 *
 * Pure: no Math.random, no clock.
 */
import { canonicalBytes } from '../journal/canonical.js';
import { sha256 } from '../journal/digest.js';

export interface RandomStream {
  /** A float in [0, 1) with 53 random bits. */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
}

export interface Random {
  stream(name: string): RandomStream;
}

export function createRandom(seed: string, scope: string): Random {
  const streams = new Map<string, RandomStream>();
  return {
    stream(name: string): RandomStream {
      let stream = streams.get(name);
      if (!stream) {
        stream = createStream(seed, scope, name);
        streams.set(name, stream);
      }
      return stream;
    },
  };
}

function createStream(seed: string, scope: string, name: string): RandomStream {
  let counter = 0;
  let block: Uint8Array = new Uint8Array(0);
  let offset = 0;
  const nextBytes = (n: number): Uint8Array => {
    if (offset + n > block.length) {
      block = sha256(canonicalBytes({ seed, scope, stream: name, counter: counter++ }));
      offset = 0;
    }
    const out = block.subarray(offset, offset + n);
    offset += n;
    return out;
  };
  const next = (): number => {
    const b = nextBytes(8);
    // 53 bits: 21 from the first word, 32 from the second.
    const hi = ((b[0]! << 13) | (b[1]! << 5) | (b[2]! >>> 3)) & 0x1fffff;
    const lo = ((b[4]! << 24) | (b[5]! << 16) | (b[6]! << 8) | b[7]!) >>> 0;
    return (hi * 2 ** 32 + lo) / 2 ** 53;
  };
  return {
    next,
    int(n: number): number {
      if (!Number.isInteger(n) || n <= 0) throw new RangeError(`int(n) needs a positive integer, got ${n}`);
      return Math.floor(next() * n);
    },
  };
}
