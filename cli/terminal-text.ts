/**
 * Untrusted text on a terminal. An intent, a model's goal or fragment, an actuator's result or
 * failure message may hold escape sequences (ESC, the 8-bit CSI U+009B, OSC …) or bidi overrides
 * that would act on the terminal — retitle it, clear it, make a line read differently from what it
 * is. Everything a command prints that came from a journal goes through here first:
 *
 * - `inert(text)`: every control character (C0, DEL, C1 — tab and newline included) and every bidi
 *   embedding, override, isolate and mark written as a visible `\uXXXX`, the rest unchanged;
 * - `quoted(value, max)`: a value JSON-quoted and bounded (machines/untrusted-text.ts `quote`
 *   for strings), then made inert — for intents, args and results;
 * - `inertJson(text)`: a JSON document whose strings are made inert the same way (still valid JSON,
 *   the same value once parsed) — for `--json` output that may be shown on a terminal.
 */
import { quote, quoteValue } from '../machines/untrusted-text.js';
import { escapeActive, escapeChar } from './terminal-guard.js';

/** `text` with every character that could act on a terminal written as `\uXXXX` — terminal-guard.ts's set, and tab and newline too (one line per value). */
export function inert(text: string): string {
  return escapeActive(text).replace(/[\t\n]/g, escapeChar);
}

/** A value JSON-quoted (strings bounded to `max` characters, saying how long they were), made inert. */
export function quoted(value: unknown, max = 120): string {
  return inert(typeof value === 'string' ? quote(value, max) : quoteValue(value, max));
}

/** A JSON text with the characters JSON.stringify leaves raw (C1, bidi, separators) escaped too: the same value, inert on a terminal. */
export function inertJson(json: string): string {
  return inert(json);
}
