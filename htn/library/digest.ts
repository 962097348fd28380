/**
 * The library digest: SHA-256 over the canonical JSON (RFC 8785) of the validated library data,
 * via `digestOf` — the one place a JSON value's digest is computed in Weft. Because evaluable
 * predicates are referenced by name AND version inside the data, bumping an evaluable's version
 * changes the digest; an invocation pins the digest and replays on exactly that version.
 */
import { digestOf } from '../../journal/digest.js';
import type { Library } from './schema.js';

/** 64 lowercase hex characters identifying this exact library version. */
export function libraryDigest(library: Library): string {
  return digestOf(library);
}
