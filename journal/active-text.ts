/**
 * The characters of untrusted text that act on a reader instead of being read — the C0 controls
 * (but tab and newline), DEL, the C1 controls (the 8-bit CSI U+009B among them), the bidi marks,
 * embeddings, overrides and isolates (U+061C, U+200E/U+200F, U+202A–U+202E, U+2066–U+2069) and the
 * line and paragraph separators — and one way to show them: each written as a visible `\uXXXX`.
 *
 * A journal carries text from people, models and actuators (intents, goals, args, results,
 * reasons, notes). On a terminal such a character can retitle or clear it; on a page a bidi
 * override makes "evil" read "live". Both readers of a journal escape the same set with this one
 * function: the CLI's stream guard (cli/terminal-guard.ts) and the viewer's DOM helper
 * (inspector/page/dom.ts) — the viewer's page imports it from here, the lowest room both may use.
 * Pure: no I/O, the same answer in Node and in a browser.
 */

/** C0 except \t and \n; DEL; C1; the Arabic letter mark; LRM, RLM; LS, PS; LRE…RLO; LRI…PDI. */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A character written as a visible `\uXXXX` (also its JSON escape, so a JSON text stays JSON). */
export const escapeChar = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Whether `text` holds a character `escapeActive` would write as an escape. */
export function hasActive(text: string): boolean {
  ACTIVE.lastIndex = 0;
  return ACTIVE.test(text);
}

/** `text` with every active character (see the header) written as `\uXXXX`; tab and newline kept, the rest unchanged. */
export function escapeActive(text: string): string {
  return text.replace(ACTIVE, escapeChar);
}
