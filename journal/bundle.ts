/**
 * The portable bundle (`weft export`): one JSON document that lets someone holding nothing else
 * verify — and, with the app's code, replay — an invocation: the journal file's exact text, the
 * method library it pinned (by digest), and the public key that sealed it.
 *
 *   { "format": "weft.bundle.v1", "invocation": id, "journal": "<JSONL text>",
 *     "libraries": { "<sha256 hex>": <library JSON> }, "publicKey": <weft.pub object> | null,
 *     "packs"?: { "<sha256 hex>": <policy pack JSON> },   (only when the journal or a parent pinned a policy pack)
 *     "lineage"?: [{ "invocation": <parent id>, "journal": "<JSONL text, up to the fork's boundary>" }, …] }
 *                                         (only for a fork: its parents' journals, bundle-lineage.ts)
 *
 * Invariants of a bundle that `parseBundle` accepts: exactly these fields (strict); every library
 * is filed under its own digest (`digestOf`, the one place a JSON value's digest is computed); a
 * carried key is consistent (its keyId is the SHA-256 of its public key). What a bundle does NOT
 * prove by itself: that its journal is intact, that it pins one of its libraries, that its key is
 * one you trust — the callers (`weft verify`, replay) check the journal, and only the reader of
 * the bundle can compare the key with one they trust.
 *
 * Pure: text in, values out; no I/O.
 */
import { z } from 'zod';
import { digestOf, isDigest } from './digest.js';
import { WeftError } from './errors.js';
import { keyIdOf } from './seal.js';

export const BUNDLE_FORMAT = 'weft.bundle.v1';
/** The format of a public key file (cli/keys.ts PUBLIC_FORMAT), which a bundle carries as is. */
const PUBLIC_KEY_FORMAT = 'weft.ed25519.public.v1';

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  invocation: string;
  /** The journal file's exact text (JSONL, every line newline-terminated). */
  journal: string;
  /** The pinned method library/libraries, by digest: each value is the library JSON whose digestOf(value) is its key. */
  libraries: Record<string, unknown>;
  /** The sealing public key: the same object a weft.pub file holds, or null when unsealed/unknown. */
  publicKey: { format: 'weft.ed25519.public.v1'; publicKey: string; keyId: string } | null;
  /** The policy pack the journal pinned (policy `pack:…#<digest>`), by digest, when it pinned one; absent otherwise. */
  packs?: Record<string, unknown>;
  /** A fork's parents' journals (nearest first), each up to the record its child names: what the fork's replay checks (bundle-lineage.ts). Absent otherwise. */
  lineage?: Array<{ invocation: string; journal: string }>;
}

/** A bundle is malformed, or its content does not match its digests. */
export class BundleError extends WeftError {
  constructor(readonly reason: string) {
    super('bundle.invalid', 'permanent', `invalid bundle: ${reason}; export it again from the workspace that holds the invocation (\`weft export <id>\`)`);
  }
}

const hex32 = z.string().regex(/^[0-9a-f]{64}$/, '64 lowercase hex characters');

const bundleSchema = z.strictObject({
  format: z.literal(BUNDLE_FORMAT),
  invocation: z.string().min(1),
  journal: z.string(),
  libraries: z.record(z.string(), z.json()),
  publicKey: z.strictObject({ format: z.literal(PUBLIC_KEY_FORMAT), publicKey: hex32, keyId: hex32 }).nullable(),
  packs: z.record(z.string(), z.json()).optional(),
  lineage: z.array(z.strictObject({ invocation: z.string().min(1), journal: z.string() })).optional(),
});

/** Assemble a bundle (libraries in digest order), checked as parseBundle checks one. Throws BundleError. */
export function buildBundle(parts: { invocation: string; journal: string; libraries: Record<string, unknown>; publicKey: Bundle['publicKey']; packs?: Record<string, unknown>; lineage?: Bundle['lineage'] }): Bundle {
  const libraries: Record<string, unknown> = {};
  for (const digest of Object.keys(parts.libraries).sort()) libraries[digest] = parts.libraries[digest];
  const bundle: Bundle = { format: BUNDLE_FORMAT, invocation: parts.invocation, journal: parts.journal, libraries, publicKey: parts.publicKey };
  if (parts.packs !== undefined && Object.keys(parts.packs).length > 0) bundle.packs = parts.packs;
  if (parts.lineage !== undefined && parts.lineage.length > 0) bundle.lineage = parts.lineage;
  return checkBundle(bundle);
}

/**
 * Parse and check a bundle's text: shape (strict), each library's digest, the key's keyId. Throws
 * BundleError saying what is wrong. Does NOT verify the journal chain (callers do).
 */
export function parseBundle(text: string): Bundle {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new BundleError(`not JSON (${(err as Error).message})`);
  }
  return checkBundle(value);
}

/**
 * True when the bytes look like a bundle: the first non-space byte is '{' and they parse as JSON
 * with format weft.bundle.v1. A journal's first line (`{"body":…`) is told apart without decoding
 * the rest; nothing else is checked (parseBundle does).
 */
export function looksLikeBundle(bytes: Uint8Array): boolean {
  let i = 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  if (bytes[i] !== 0x7b /* { */) return false;
  if (startsWith(bytes, i, JOURNAL_LINE_START)) return false; // a journal record: a bundle has no "body"
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return typeof value === 'object' && value !== null && (value as { format?: unknown }).format === BUNDLE_FORMAT;
  } catch {
    return false;
  }
}

const JOURNAL_LINE_START = Uint8Array.from('{"body":', (ch) => ch.charCodeAt(0));

function startsWith(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (bytes.length - at < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (bytes[at + k] !== prefix[k]) return false;
  return true;
}

function checkBundle(value: unknown): Bundle {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BundleError('not a JSON object');
  const format = (value as { format?: unknown }).format;
  if (format !== BUNDLE_FORMAT) throw new BundleError(`not a Weft bundle (format ${JSON.stringify(format) ?? 'missing'}, expected "${BUNDLE_FORMAT}")`);
  const shape = bundleSchema.safeParse(value);
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    throw new BundleError(`${issue.path.join('.') || 'bundle'}: ${issue.message}`);
  }
  const bundle = value as Bundle;
  for (const [digest, library] of Object.entries(bundle.libraries)) {
    if (!isDigest(digest)) throw new BundleError(`library key ${JSON.stringify(digest)} is not a SHA-256 digest (64 lowercase hex characters)`);
    let actual: string;
    try {
      actual = digestOf(library);
    } catch (err) {
      throw new BundleError(`library ${digest} cannot be digested (${(err as Error).message})`);
    }
    if (actual !== digest) throw new BundleError(`library ${digest} does not match its digest (its content hashes to ${actual}: edited or damaged)`);
  }
  for (const [digest, pack] of Object.entries(bundle.packs ?? {})) {
    if (!isDigest(digest)) throw new BundleError(`pack key ${JSON.stringify(digest)} is not a SHA-256 digest (64 lowercase hex characters)`);
    let actual: string;
    try {
      actual = digestOf(pack);
    } catch (err) {
      throw new BundleError(`pack ${digest} cannot be digested (${(err as Error).message})`);
    }
    if (actual !== digest) throw new BundleError(`pack ${digest} does not match its digest (its content hashes to ${actual}: edited or damaged)`);
  }
  const key = bundle.publicKey;
  if (key !== null && keyIdOf(key.publicKey) !== key.keyId) {
    throw new BundleError('publicKey is inconsistent: its keyId is not the SHA-256 of its publicKey (edited or damaged)');
  }
  return bundle;
}
