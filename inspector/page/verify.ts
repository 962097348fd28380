/**
 * Verification in the browser: a journal's bytes checked by the same pure code `weft verify` runs
 * (journal/verify-bytes.ts — every record's shape, position, chain link, hash and body schema, then
 * the seal's ed25519 signature), here on the @noble reference implementations of SHA-256 and
 * ed25519 (the Node fast paths, sha256-node.ts and ed25519-node.ts, are never loaded by the page).
 * The server's word is not taken for any of it: the page gets the journal's raw lines and the key.
 */
import { BundleError, looksLikeBundle, parseBundle, type Bundle } from '../../journal/bundle.js';
import { verifyJournalBytes } from '../../journal/verify-bytes.js';
import { ranked } from './trusted-key.js';
import type { TrustedKey } from './wire.js';

export type Verdict =
  /** Chain intact and sealed by the trusted key. */
  | { kind: 'verified'; fingerprint: string; keyId: string; records: number; key: TrustedKey }
  /** Chain intact, but there is no trusted key to check the seal against (or the journal is not sealed yet). */
  | { kind: 'chain-only'; fingerprint: string | null; sealed: boolean; keyId: string | null; records: number }
  /** The first record that does not hold, by seq. */
  | { kind: 'failed'; seq: number; problem: string; sealMismatch: boolean };

/**
 * What the page shows for a journal: its own verdict, or — for a journal the server redacted
 * (inspector/redact.ts), whose bytes no longer hash as they were sealed — the server's verdict on
 * the stored bytes, shown as the server's (the page cannot check it itself).
 */
export type ShownVerdict = Verdict | { kind: 'server'; verdict: Verdict };

/** The server's verdict as `/api/invocations/<id>/verdict` sends it, checked for shape (a malformed one reads as a failure). */
export function serverVerdict(value: unknown): ShownVerdict {
  const v = (value as { verdict?: Partial<Verdict> & { kind?: unknown } } | null)?.verdict;
  const ok = typeof v === 'object' && v !== null && (v.kind === 'verified' || v.kind === 'chain-only' || v.kind === 'failed');
  if (!ok) return { kind: 'server', verdict: failed(0, "the server's verdict could not be read", false) };
  // The server checks a seal only against the key it was started with (--public-key): a key given.
  const verdict = v as Verdict;
  return { kind: 'server', verdict: verdict.kind === 'verified' ? { ...verdict, key: ranked(verdict.key, 'given') } : verdict };
}

/**
 * The chain first, without a key: a journal that is not sealed yet (running, waiting for approval)
 * is intact, not failed. Only a sealed one is then checked against the trusted key.
 */
export function verifyInPage(bytes: Uint8Array, key: TrustedKey | null): Verdict {
  const chain = verifyJournalBytes(bytes);
  if (!chain.ok) return failed(chain.error?.seq ?? chain.count, chain.error?.problem, false);
  if (!key || !chain.sealed) return { kind: 'chain-only', fingerprint: chain.fingerprint ?? null, sealed: chain.sealed, keyId: chain.keyId ?? null, records: chain.count };
  const sealed = verifyJournalBytes(bytes, { publicKey: { publicKey: key.publicKey, keyId: key.keyId } });
  if (!sealed.ok) return failed(sealed.error?.seq ?? sealed.count, sealed.error?.problem, sealed.sealMismatch === true);
  return { kind: 'verified', fingerprint: sealed.fingerprint!, keyId: sealed.keyId!, records: sealed.count, key };
}

function failed(seq: number, problem: string | undefined, sealMismatch: boolean): Verdict {
  return { kind: 'failed', seq, problem: problem ?? 'the journal does not verify', sealMismatch };
}

/** A file a person dropped on the page: a journal, or a bundle written by `weft export`. */
export interface FileVerdict {
  input: 'journal' | 'bundle';
  verdict: Verdict;
  /** The invocation the journal belongs to, when its first record could be read. */
  invocation: string | null;
  /** A bundle that cannot be read, or whose journal is not the bundle's invocation's. */
  problem: string | null;
  /** The journal's bytes (a bundle's journal), to draw the run from (offline-run.ts); null when the bundle cannot be read. */
  journal: Uint8Array | null;
  /** The bundle as read (its lineage, its libraries), or null for a journal file or an unreadable bundle. */
  bundle: Bundle | null;
}

/**
 * Verify a dropped file with no server data. A bundle's journal is checked against the trusted key
 * when there is one, else against the key the bundle carries — labelled as such: a key that travels
 * with the journal proves only that the journal was not changed after sealing by that key, not who
 * holds it. Only a key you gave (`given`: dropped, or the viewer's --public-key) is a trusted key
 * here: the store's key for another journal says nothing of a file (`offlineKey`).
 */
export function verifyFile(bytes: Uint8Array, trusted: TrustedKey | null): FileVerdict {
  if (!looksLikeBundle(bytes)) {
    const verdict = verifyInPage(bytes, trusted);
    return { input: 'journal', verdict, invocation: verifyJournalBytes(bytes).invocation ?? null, problem: null, journal: bytes, bundle: null };
  }
  let bundle: Bundle;
  try {
    bundle = parseBundle(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    const problem = err instanceof BundleError ? err.message : 'invalid bundle: not valid UTF-8';
    return { input: 'bundle', verdict: failed(0, problem, false), invocation: null, problem, journal: null, bundle: null };
  }
  const carried = bundle.publicKey
    ? ranked({ publicKey: bundle.publicKey.publicKey, keyId: bundle.publicKey.keyId, label: 'the key carried in the bundle — from the file, not independent: compare its id with a key you trust' }, 'bundle')
    : null;
  const journal = new TextEncoder().encode(bundle.journal);
  const verdict = verifyInPage(journal, trusted ?? carried);
  const invocation = verifyJournalBytes(journal).invocation ?? null;
  const problem = invocation !== null && invocation !== bundle.invocation ? `the bundle is for invocation ${bundle.invocation}, but its journal is the journal of ${invocation}` : null;
  return { input: 'bundle', verdict, invocation, problem, journal, bundle };
}

/**
 * The key a dropped file's seal is checked against: a key you gave, ranked so; a key the page
 * ranked otherwise (the store's own, found for the journal the page shows) is not one for a file.
 * A key no code of the page ranked came from `/api/trusted-key`, the viewer's --public-key: given.
 */
export function offlineKey(key: TrustedKey | null): TrustedKey | null {
  if (key === null) return null;
  const trust = (key as { trust?: unknown }).trust;
  if (trust === undefined || trust === 'given') return ranked(key, 'given');
  return null;
}
