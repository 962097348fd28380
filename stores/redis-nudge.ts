/**
 * The Redis store's nudge: after each durable append, a PUBLISH on `<prefix>:appended` carrying only
 * the invocation id and the journal's new length — a hint that there is something to read, never
 * the records themselves. A listener (the viewer, `weft inspect`) reads the journal by seq from its
 * own last seq, so a nudge lost, late or repeated costs nothing but a read.
 */

export interface Nudge {
  id: string;
  length: number;
}

/** The channel a store with key prefix `prefix` publishes its nudges on. */
export function nudgeChannel(prefix: string): string {
  return `${prefix}:appended`;
}

export function encodeNudge(nudge: Nudge): string {
  return JSON.stringify({ id: nudge.id, length: nudge.length });
}

/** A nudge read back, or undefined for a message that is not one (ignored by listeners). */
export function decodeNudge(message: string): Nudge | undefined {
  try {
    const value = JSON.parse(message) as { id?: unknown; length?: unknown };
    if (typeof value.id !== 'string' || typeof value.length !== 'number' || !Number.isSafeInteger(value.length) || value.length < 0) return undefined;
    return { id: value.id, length: value.length };
  } catch {
    return undefined;
  }
}
