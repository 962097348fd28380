/**
 * The runnable examples `weft run <example>` knows, by name. Each example builds a WeftApp over a
 * state directory (its simulated providers keep their state there) and a scripted model, and
 * states its default intent and pinned `asOf`, so `npm start` is the same demo on every machine.
 *
 * `weft replay <journal>` finds the example by the name of the method library the journal pinned,
 * since it needs the same policy, evaluables and actuator schemas to re-derive admissions.
 */
import type { Model } from '../actors/model/model.js';
import type { WeftApp } from '../runtime/app.js';

export interface ExampleHooks {
  /** Called inside a world-effect actuator after its effect is durable and before it returns. */
  afterEffect?(actuator: string, key: string): void;
}

export interface Example {
  name: string;
  description: string;
  /** The intent `weft run <example>` uses when none is given. */
  intent: string;
  /** The pinned "now" used when `--as-of` is not given. */
  asOf: string;
  /** The library name this example pins (how replay finds the example). */
  libraryName: string;
  create(stateDir: string, hooks?: ExampleHooks): { app: WeftApp; model: Model };
}

const loaders: Record<string, () => Promise<Example>> = {
  travel: async () => (await import('./travel/example.js')).travelExample,
};

export function exampleNames(): string[] {
  return Object.keys(loaders).sort();
}

export async function loadExample(name: string): Promise<Example> {
  const load = loaders[name];
  if (!load) throw new Error(`unknown example "${name}"; available: ${exampleNames().join(', ')}`);
  return load();
}

export async function exampleForLibrary(libraryName: string): Promise<Example | undefined> {
  for (const name of exampleNames()) {
    const example = await loadExample(name);
    if (example.libraryName === libraryName) return example;
  }
  return undefined;
}
