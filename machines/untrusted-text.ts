/**
 * Untrusted text (intents, model replies, their args) is always recordable and never quoted at
 * full size. Pure helpers:
 *
 * - `quote(text)`: a bounded, JSON-quoted prefix for reasons and error messages, with the length
 *   of what was left out — a rejection never copies a megabyte back into the journal.
 * - `utf16Digest(text)`: the SHA-256 of the text's UTF-16LE code units, which — unlike UTF-8 —
 *   keeps a lone surrogate distinct from its replacement, so a refused reply's digest names
 *   exactly what came.
 * - `keepable(text, cap)`: what a reply may be recorded as: itself when it is well-formed and
 *   within the cap, else a bounded well-formed prefix with why, its length and its digest.
 * - `unsafeCharacter(text)`: a control or bidi-override character, which has no place in an arg.
 */
import { sha256Hex } from '../journal/digest.js';

export const QUOTE_CHARS = 60;
/** How much of a refused reply the journal keeps. */
export const REFUSED_PREFIX_CHARS = 256;

export function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

export function toWellFormed(text: string): string {
  return (text as unknown as { toWellFormed(): string }).toWellFormed();
}

/** A bounded JSON-quoted prefix of `text`, e.g. `"aaaa…" (8388608 chars)`. */
export function quote(text: string, max = QUOTE_CHARS): string {
  if (text.length <= max) return JSON.stringify(toWellFormed(text));
  return `${JSON.stringify(toWellFormed(text.slice(0, max)) + '…')} (${text.length} chars)`;
}

/** SHA-256 (hex) of the UTF-16LE code units of `text`. */
export function utf16Digest(text: string): string {
  const bytes = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    bytes[2 * i] = unit & 0xff;
    bytes[2 * i + 1] = unit >> 8;
  }
  return sha256Hex(bytes);
}

export type Keepable = { ok: true; text: string } | { ok: false; text: string; refused: { code: 'reply.not_well_formed' | 'reply.too_large'; chars: number; digest: string } };

/** What a reply may be recorded as (see the header). */
export function keepable(text: string, cap: number): Keepable {
  const code = !isWellFormed(text) ? 'reply.not_well_formed' : text.length > cap ? 'reply.too_large' : undefined;
  if (!code) return { ok: true, text };
  return { ok: false, text: toWellFormed(text.slice(0, REFUSED_PREFIX_CHARS)), refused: { code, chars: text.length, digest: utf16Digest(text) } };
}

/** Why a recorded refusal was refused, for the model's feedback and the journal's rejection. */
export function refusalReason(refused: { code: string; chars: number; digest: string }, cap: number): string {
  if (refused.code === 'reply.not_well_formed') {
    return `the reply is not well-formed Unicode (it holds a lone UTF-16 surrogate; raw reply sha256 ${refused.digest.slice(0, 16)}…); reply with plain JSON text`;
  }
  return `the reply is ${refused.chars} characters, over the pinned cap of ${cap} (raw reply sha256 ${refused.digest.slice(0, 16)}…); reply with one short JSON object`;
}

// C0/C1 controls (tab, newline and carriage return included: an arg is a name or a number), and
// the bidi embeddings, overrides and isolates that make text read differently from what it is.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** The first control or bidi-override character in `text`, as `U+XXXX`, or undefined. */
export function unsafeCharacter(text: string): string | undefined {
  const match = UNSAFE.exec(text);
  return match ? `U+${match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}` : undefined;
}

/** `text` cut to at most `max` characters, ending in `…` when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `text` cut to at most `max` characters, saying how long it was when cut (for error messages). */
export function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}

/** A value as a reason shows it: numbers as they are, anything else JSON-quoted and clipped. */
export function quoteValue(value: unknown, max = QUOTE_CHARS): string {
  if (typeof value === 'number') return String(value);
  if (value === undefined) return 'missing';
  return clip(JSON.stringify(value) ?? String(value), max);
}
