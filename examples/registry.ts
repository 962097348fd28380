/**
 * The built-in domains, by name: what `weft run <name>` and `--domain <name>` load without a path.
 * A built-in is found for an existing invocation by the name of the library it pinned, so
 * `weft resume|approve|replay` need no `--domain` for one. Nothing in the runtime knows these names.
 */
import type { Domain } from '../runtime/domain.js';

const builtins: Record<string, () => Promise<Domain>> = {
  travel: async () => (await import('./travel/domain.js')).travelDomain,
};

export function builtinDomainNames(): string[] {
  return Object.keys(builtins).sort();
}

export async function loadBuiltinDomain(name: string): Promise<Domain | undefined> {
  const load = Object.hasOwn(builtins, name) ? builtins[name] : undefined;
  return load ? load() : undefined;
}

/** The built-in domain that has a library of this name, if any. */
export async function builtinDomainForLibrary(libraryName: string): Promise<Domain | undefined> {
  for (const name of builtinDomainNames()) {
    const domain = (await loadBuiltinDomain(name))!;
    if (domain.libraries.some((l) => l.name === libraryName)) return domain;
  }
  return undefined;
}
