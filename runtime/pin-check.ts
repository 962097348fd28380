/**
 * The pin is law: before an invocation is resumed, approved or replayed, what this runtime offers
 * is compared with what the invocation pinned, field by field, and any difference refuses the call
 * before a lease is taken or a record written — so the invocation stays resumable with the right
 * parts.
 *
 * What is compared (what decides a journal's content):
 * - `library`: the pinned digest must be one this runtime can load (a library of its domain, or
 *   the exact bytes from the store's blob area or a bundle);
 * - `evaluables`: every `name@version` the pinned library references must be registered;
 * - `policy`: the pinned policy id (`name@version`) must be one of the runtime's policies — or a
 *   policy pack's (`pack:<name>@<version>#<digest>`), read back from the store's blob under that
 *   digest and compiled against the runtime's policy predicates (runtime/pack-blob.ts): a missing
 *   blob, other bytes under the digest or an unregistered predicate is a mismatch;
 * - `model.id` and `model.params` (temperature, seed, … — never the endpoint: `baseUrl` was pinned by
 *   older runtimes and is ignored) — compared for resume and approve; replay calls no model;
 * - `flags` (behaviour versions) and `limits`: not compared with the caller's settings but APPLIED
 *   from the pin; a flag or limit this runtime does not implement is refused, naming it;
 * - `spenders` (under flag 2: the actuators that declare `spends`, with their arg) — compared for
 *   resume and approve when the runtime knows its actuators, so an edit of `spends` is refused for
 *   an invocation that started before it rather than silently changing what it admits — over the
 *   actuators the pinned library can dispatch (a spending actuator added for a newer library does
 *   not stop an older invocation from resuming); replay needs no actuators and reads the pinned list;
 *
 * The key that seals is not in the pin (the fingerprint does not depend on it): see seal-key.ts.
 *
 * Pure: no I/O; the runtime gathers the offer and throws PinMismatchError with the list.
 */
import type { Model } from '../actors/model/model.js';
import { canonicalize } from '../journal/canonical.js';
import type { Pin } from '../journal/records.js';
import type { EvaluableRegistry } from '../htn/library/evaluables.js';
import type { Library } from '../htn/library/schema.js';
import { describeSpenders, type PinnedSpender } from '../machines/spenders.js';

export interface PinMismatch {
  /** The pin's field, e.g. `model.id`, `library`, `policy`. */
  field: string;
  pinned: string;
  offered: string;
  /** What to pass instead. */
  fix: string;
}

/** Model parameters older runtimes pinned that do not shape replies (endpoints move). */
export const UNPINNED_MODEL_PARAMS: ReadonlySet<string> = new Set(['baseUrl']);

/**
 * The model parameters an invocation pins: those that shape replies. `baseUrl` is dropped (an
 * endpoint is where the model is, not which model it is); older journals that pinned it are
 * compared without it.
 */
export function pinnedModelParams(model: Model | undefined): Record<string, string | number | boolean | null> {
  const params: Record<string, string | number | boolean | null> = {};
  for (const [key, value] of Object.entries(model?.params ?? {})) if (!UNPINNED_MODEL_PARAMS.has(key)) params[key] = value;
  return params;
}

/** The model a CLI command would name: `--model-url URL --model NAME` for an OpenAI-compatible id. */
export function modelFlagsFor(modelId: string): string {
  const openai = /^openai-compatible:(.+)$/.exec(modelId);
  if (openai) return `--model-url <its endpoint> --model ${openai[1]}`;
  if (modelId.startsWith('scripted:')) return `no --model-url/--model (the domain's own scripted model ${modelId})`;
  if (modelId === 'none') return 'no model';
  return `a model whose id is ${modelId}`;
}

export function compareModel(pinned: Pin['model'], offered: { id: string; params: Record<string, unknown> } | undefined): PinMismatch[] {
  const out: PinMismatch[] = [];
  const offeredId = offered?.id ?? 'none';
  if (pinned.id !== offeredId) {
    out.push({ field: 'model.id', pinned: pinned.id, offered: offeredId, fix: `resume with the pinned model: createRuntime({ model }) with id ${pinned.id}; from the CLI, ${modelFlagsFor(pinned.id)}` });
    return out;
  }
  const params = offered?.params ?? {};
  const keys = [...new Set([...Object.keys(pinned.params), ...Object.keys(params)])].filter((k) => !UNPINNED_MODEL_PARAMS.has(k)).sort();
  for (const key of keys) {
    const a = pinned.params[key] === undefined ? 'absent' : canonicalize(pinned.params[key]);
    const b = params[key] === undefined ? 'absent' : canonicalize(params[key]);
    if (a !== b) out.push({ field: `model.params.${key}`, pinned: a, offered: b, fix: `configure the model with ${key} ${a} (it shapes the replies the journal records)` });
  }
  return out;
}

export function comparePolicy(pinned: string, offered: readonly string[]): PinMismatch[] {
  if (offered.includes(pinned)) return [];
  return [{ field: 'policy', pinned, offered: offered.join(', ') || 'none', fix: `use a domain that still has policy ${pinned} (keep old versions in defineDomain({ policies }))` }];
}

export function compareFlags(pinned: readonly number[], known: readonly number[]): PinMismatch[] {
  const unknown = pinned.filter((f) => !known.includes(f));
  if (unknown.length === 0) return [];
  return [{ field: 'flags', pinned: pinned.join(', '), offered: known.join(', ') || 'none', fix: `behaviour flag(s) ${unknown.join(', ')} come from a newer weft; resume or replay with that version` }];
}

export function compareLimits(pinned: Record<string, number> | undefined, known: readonly string[]): PinMismatch[] {
  const unknown = Object.keys(pinned ?? {}).filter((k) => !known.includes(k)).sort();
  if (unknown.length === 0) return [];
  return [{ field: 'limits', pinned: unknown.join(', '), offered: known.join(', '), fix: `limit(s) ${unknown.join(', ')} come from a newer weft; resume or replay with that version` }];
}

/** Every actuator a library can dispatch: its operators' actuators and their declared compensations. */
export function libraryActuators(library: Library): Set<string> {
  const names = new Set<string>();
  for (const op of library.operators) {
    if (op.actuator) names.add(op.actuator.actuator);
    if (op.compensate) names.add(op.compensate.actuator);
  }
  return names;
}

/**
 * Which actuators spend (flag 2): the pinned list against what this runtime's actuators declare —
 * over the actuators the pinned library can dispatch (`within`), when given: an actuator it never
 * binds can never be a step of the invocation, so declaring that it spends (a domain that gained a
 * spending actuator with a new library version, say) changes nothing the invocation admits.
 */
export function compareSpenders(pinnedAll: readonly PinnedSpender[], offeredAll: readonly PinnedSpender[], within?: ReadonlySet<string>): PinMismatch[] {
  const pinned = within ? pinnedAll.filter((s) => within.has(s.actuator)) : pinnedAll;
  const offered = within ? offeredAll.filter((s) => within.has(s.actuator)) : offeredAll;
  if (canonicalize(pinned) === canonicalize(offered)) return [];
  const a = describeSpenders(pinned);
  const b = describeSpenders(offered);
  const asPinned = pinned.length === 0 ? 'no spends on any actuator' : `exactly ${pinned.map((s) => `${s.actuator} spends: '${s.arg}'`).join(', ')}`;
  const fix = `resume with actuators declaring ${asPinned}, as when it started; a changed spends declaration applies to new invocations only`;
  return [{ field: 'spenders', pinned: a, offered: b, fix }];
}

/** The pinned library's evaluables this registry lacks (each as `name@version`). */
export function compareEvaluables(library: Library, registry: EvaluableRegistry | undefined): PinMismatch[] {
  const missing: string[] = [];
  for (const ref of library.evaluables) {
    try {
      if (!registry) throw new Error('no registry');
      registry.resolve(ref.name, ref.version);
    } catch {
      missing.push(`${ref.name}@${ref.version}`);
    }
  }
  if (missing.length === 0) return [];
  return [{ field: 'evaluables', pinned: missing.join(', '), offered: 'not registered', fix: `register ${missing.join(', ')} in the domain's evaluables (defineDomain({ evaluables }))` }];
}

/** The library field when the pinned digest cannot be loaded from anywhere. */
export function libraryMismatch(pinned: string, offered: ReadonlyArray<{ name: string; digest: string }>): PinMismatch {
  return {
    field: 'library',
    pinned,
    offered: offered.map((l) => `${l.name} ${l.digest}`).join(', ') || 'none',
    fix: `use the domain version that has library ${pinned} (keep old versions in defineDomain({ libraries })), or replay from a store or bundle that holds it`,
  };
}
