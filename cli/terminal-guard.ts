/**
 * The last line of defence for a terminal: every string a command writes to stdout or stderr
 * passes through `guardText`, which writes each character that could act on a terminal — C0
 * controls other than tab and newline, DEL, the C1 controls (the 8-bit CSI U+009B among them),
 * the bidi embeddings, overrides, isolates and marks, the line and paragraph separators — as a
 * visible `\uXXXX`. Text from an intent, a model or an actuator reaches many lines (progress,
 * refusals, `ls`, hints); guarding the streams once means no line of any command, now or later,
 * can retitle, clear or reorder a terminal, whatever a command forgot to quote.
 *
 * - In a JSON line the replacement is the JSON escape of the same character, so the line still
 *   parses to the same value (JSON.stringify already escapes C0; this adds C1 and bidi).
 * - Only the exact styles `weft log` draws with on a terminal (dim, red, and their resets) pass.
 * - Buffers pass unchanged: a command that writes bytes (`weft export`'s bundle) writes a Buffer.
 */

import { escapeActive, hasActive } from '../journal/active-text.js';

// The characters that act on a reader, and their escape: one set for the terminal and the viewer's page.
export { escapeActive, escapeChar } from '../journal/active-text.js';
// The styles this CLI itself draws (cli/commands/log.ts), kept whole.
const OWN_STYLE = /(\x1b\[(?:2|22|31|39)m)/;

/** `text` with every character that could act on a terminal written as `\uXXXX`, the CLI's own styles kept. */
export function guardText(text: string): string {
  if (!hasActive(text)) return text;
  // split with a capturing group: odd parts are the CLI's own styles, even parts are guarded.
  return text
    .split(OWN_STYLE)
    .map((part, i) => (i % 2 === 1 ? part : escapeActive(part)))
    .join('');
}

/** Make every string written to `stream` pass through guardText (idempotent per stream). */
export function guardStream(stream: NodeJS.WriteStream): void {
  const guarded = stream as NodeJS.WriteStream & { weftGuarded?: boolean };
  if (guarded.weftGuarded) return;
  guarded.weftGuarded = true;
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => write(typeof chunk === 'string' ? guardText(chunk) : chunk, ...rest)) as typeof stream.write;
}
