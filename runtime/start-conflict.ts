/**
 * A start under an id that already names another invocation: what differs, said field by field.
 *
 * The same intent, tenant, seed and `asOf` give the same default id, so `weft run` again attaches
 * to the run it already made; a start with another library, seed, policy, model or intent under
 * that id is refused (runtime.id_conflict). The refusal names each differing field with both values,
 * shortened (a digest to 12 characters, a long text cut), and says the way on: another `--id`, or
 * another `--seed` (which gives another default id). It never prints the whole pin.
 *
 * Pure: canonical comparison only.
 */
import { canonicalize } from '../journal/canonical.js';
import type { Pin } from '../journal/records.js';

/** One field that differs: its name (`pin.library`, `intent`, `limits.maxEpochs`…) and both values, shortened. */
export interface StartDifference {
  field: string;
  existing: string;
  offered: string;
}

const DIGEST = /^[0-9a-f]{64}$/;

/** A value as a refusal shows it: a digest (alone, or at the end of a policy id) to 12 characters, anything over 60 characters cut. */
function brief(value: unknown): string {
  if (value === undefined) return '(none)';
  const text = typeof value === 'string' ? value : canonicalize(value);
  const shortDigests = text.replace(/[0-9a-f]{64}/g, (d) => `${d.slice(0, 12)}…`);
  const shown = typeof value === 'string' && !DIGEST.test(value) ? JSON.stringify(shortDigests) : shortDigests;
  return shown.length > 60 ? `${shown.slice(0, 59)}…` : shown;
}

/** The fields in which the invocation that exists and the start offered differ, in a stable order. */
export function startDifferences(existing: { intent: string; pin: Pin }, offered: { intent: string; pin: Pin }): StartDifference[] {
  const out: StartDifference[] = [];
  if (existing.intent !== offered.intent) out.push({ field: 'intent', existing: brief(existing.intent), offered: brief(offered.intent) });
  const a = existing.pin as Record<string, unknown>;
  const b = offered.pin as Record<string, unknown>;
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (canonicalize(a[key] ?? null) === canonicalize(b[key] ?? null)) continue;
    const inner = (x: unknown) => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined);
    const [ia, ib] = [inner(a[key]), inner(b[key])];
    if (key === 'limits' && ia && ib) {
      for (const sub of [...new Set([...Object.keys(ia), ...Object.keys(ib)])].sort()) {
        if (canonicalize(ia[sub] ?? null) !== canonicalize(ib[sub] ?? null)) out.push({ field: `limits.${sub}`, existing: brief(ia[sub]), offered: brief(ib[sub]) });
      }
      continue;
    }
    out.push({ field: key, existing: brief(a[key]), offered: brief(b[key]) });
  }
  return out;
}

/** The refusal's message: each differing field, then what to do. */
export function startConflictMessage(id: string, differences: readonly StartDifference[]): string {
  const listed = differences.map((d) => `${d.field} is ${d.existing} there, ${d.offered} here`).join('; ');
  return (
    `invocation ${id} already exists with a different intent or pin: ${listed || 'its record differs'}. ` +
    `Use another --id or --seed to start with another id, or resume ${id} as it is (the default id derives from the intent, tenant, seed and asOf)`
  );
}
