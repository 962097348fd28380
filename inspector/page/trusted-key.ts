/**
 * Which public key the page checks seals against, and where it came from — said beside every verdict.
 *
 * In order of trust:
 * 1. A key the person dropped onto the page (a weft.pub): theirs, independent of this server. It is
 *    kept for the tab's session (sessionStorage) so every page of the viewer uses it, until forgotten.
 * 2. The key `weft inspect --public-key F` was started with (`/api/trusted-key`).
 * 3. Else the key the store itself holds under the seal's key id (`/api/keys/<keyId>`): it proves
 *    only that the journal was not changed since that key sealed it, not whose key it is — so it is
 *    labelled "from the store, not independent".
 *
 * A secret key file (weft.key) dropped here is refused and never kept: the page needs only public keys.
 *
 * A verdict says which of three levels of trust its key has (`Trust`), each with its colour and words
 * (verdict-view.ts): `given` — a key you gave (dropped, or --public-key): green, the seal shows who
 * sealed; `store` — the store's own key: amber, it shows the journal unchanged since that key sealed
 * it, not whose key it is; `bundle` — the key a dropped bundle carries (verify.ts): amber, it proves
 * only integrity, not authorship, since the key came in the same file as the journal.
 */
import { keyIdOf } from '../../journal/seal.js';
import { getJson } from './dom.js';
import type { TrustedKey } from './wire.js';

const SESSION_KEY = 'weft.trusted-key';
const PUBLIC_FORMAT = 'weft.ed25519.public.v1';
const SECRET_FORMAT = 'weft.ed25519.secret.v1';
/** Dispatched on `document` when the dropped key changes; pages verify again. */
export const KEY_CHANGED = 'weft-trusted-key';

/** How far a key is trusted (see the header). */
export type Trust = 'given' | 'store' | 'bundle';

/** A key with its level of trust, as the page's own code labels it (never as a server or a file claims it). */
export type RankedKey = TrustedKey & { trust: Trust };

/** The level of trust of `key`; a key no code of the page ranked is taken at the lowest a server's key can have (the store's). */
export function trustOf(key: TrustedKey): Trust {
  const trust = (key as Partial<RankedKey>).trust;
  return trust === 'given' || trust === 'bundle' ? trust : 'store';
}

export type KeyFile = { kind: 'key'; key: RankedKey } | { kind: 'refused'; problem: string } | { kind: 'not-a-key' };

/** Read a dropped file as a Weft key file: a public key, a refused one (secret, inconsistent), or not a key at all. */
export function parseKeyFile(bytes: Uint8Array, name: string): KeyFile {
  let data: { format?: unknown; publicKey?: unknown; keyId?: unknown };
  try {
    data = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as typeof data;
  } catch {
    return { kind: 'not-a-key' };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { kind: 'not-a-key' };
  if (data.format === SECRET_FORMAT) return { kind: 'refused', problem: `${name} is a secret key (weft.key): it was not kept. Drop the public half, weft.pub, beside it — never give a secret key to a page.` };
  if (data.format !== PUBLIC_FORMAT) return { kind: 'not-a-key' };
  const hex = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
  if (!hex(data.publicKey) || !hex(data.keyId)) return { kind: 'refused', problem: `${name} is not a valid weft.pub: "publicKey" and "keyId" must be 64 lowercase hex digits` };
  if (keyIdOf(data.publicKey as string) !== data.keyId) return { kind: 'refused', problem: `${name} is inconsistent: its "keyId" is not the SHA-256 of its "publicKey" (edited or damaged)` };
  return { kind: 'key', key: { publicKey: data.publicKey as string, keyId: data.keyId as string, label: `${name}, dropped onto this page (yours, independent of this server)`, trust: 'given' } satisfies RankedKey };
}

/** The key dropped onto the page this session, or null. */
export function droppedKey(): RankedKey | null {
  try {
    const text = sessionStorage.getItem(SESSION_KEY);
    if (text === null) return null;
    const key = JSON.parse(text) as TrustedKey;
    return typeof key.publicKey === 'string' && typeof key.keyId === 'string' && keyIdOf(key.publicKey) === key.keyId && typeof key.label === 'string' ? ranked(key, 'given') : null;
  } catch {
    return null;
  }
}

/** Keep `key` as the page's trusted key (null: forget it), and tell the pages. */
export function setDroppedKey(key: TrustedKey | null): void {
  try {
    if (key) sessionStorage.setItem(SESSION_KEY, JSON.stringify(key));
    else sessionStorage.removeItem(SESSION_KEY);
  } catch {
    /* storage off: the key still applies to this page until it is reloaded */
  }
  document.dispatchEvent(new CustomEvent(KEY_CHANGED, { detail: key }));
}

/**
 * The key to check a seal by `sealKeyId` against: dropped, else the viewer's `--public-key`, else
 * the store's own key for that id (labelled as not independent), else null.
 */
export async function keyForSeal(viewerKey: TrustedKey | null, sealKeyId: string | null): Promise<RankedKey | null> {
  const dropped = droppedKey();
  if (dropped) return dropped;
  if (viewerKey) return ranked(viewerKey, 'given');
  if (sealKeyId === null || !/^[0-9a-f]{64}$/.test(sealKeyId)) return null;
  try {
    const stored = await getJson<TrustedKey | null>(`/api/keys/${sealKeyId}`);
    return stored ? ranked(stored, 'store') : null;
  } catch {
    return null;
  }
}

/** `key` (its three fields, nothing else it came with) at the level of trust where the page found it. */
export function ranked(key: TrustedKey, trust: Trust): RankedKey {
  return { publicKey: key.publicKey, keyId: key.keyId, label: key.label, trust };
}

/** The key id the journal's seal names (its last line, when that is `invocation.sealed`), or null. */
export function sealKeyIdOf(bytes: Uint8Array): string | null {
  const text = new TextDecoder().decode(bytes).trimEnd();
  const last = text.slice(text.lastIndexOf('\n') + 1);
  try {
    const record = JSON.parse(last) as { kind?: unknown; body?: { keyId?: unknown } };
    return record.kind === 'invocation.sealed' && typeof record.body?.keyId === 'string' ? record.body.keyId : null;
  } catch {
    return null;
  }
}
