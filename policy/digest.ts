/**
 * A policy pack's identity. Its digest is the SHA-256 of its canonical JSON (RFC 8785, the journal's
 * one canonical module), so key order and white space in the file do not matter and any change of
 * meaning does. The policy id an invocation pins names the pack and its digest:
 *
 *     pack:<name>@<version>#<64-hex digest>
 *
 * Why the digest in the id, and not a new pin field: the id is already pinned, compared on resume
 * (pin-check.ts) and written on every `admission.decided` and `epoch.certified`, so each decision
 * names the exact rules it was taken under, and an older runtime that does not know packs refuses
 * such a journal as a policy it does not have — never replays it under other rules. The predicates
 * a pack references are named (`name@version`) inside its rules, so inside its digest: the pin
 * records them exactly as a library's digest records its evaluables.
 *
 * Pure.
 */
import { canonicalBytes } from '../journal/canonical.js';
import { digestOf } from '../journal/digest.js';
import type { RulePack } from './schema.js';

const PACK_ID = /^pack:([A-Za-z0-9][A-Za-z0-9._-]{0,99})@([A-Za-z0-9][A-Za-z0-9._-]{0,31})#([0-9a-f]{64})$/;

/** The pack's digest: SHA-256 over its canonical JSON. */
export function packDigest(pack: RulePack): string {
  return digestOf(pack);
}

/** The bytes a store files the pack under (the blob whose SHA-256 is its digest). */
export function packBytes(pack: RulePack): Uint8Array {
  return canonicalBytes(pack);
}

/** The policy id a pack compiles to: `pack:<name>@<version>#<digest>`. */
export function packPolicyId(pack: Pick<RulePack, 'name' | 'version'>, digest: string): string {
  return `pack:${pack.name}@${pack.version}#${digest}`;
}

/** The parts of a pack's policy id, or undefined for any other policy id (`spend-approval@3`). */
export function parsePackPolicyId(id: string): { name: string; version: string; digest: string } | undefined {
  const m = PACK_ID.exec(id);
  return m ? { name: m[1]!, version: m[2]!, digest: m[3]! } : undefined;
}
