/**
 * Finding a domain from what a user types: `--domain <name | path | package>` (or `weft run`'s
 * first positional). A built-in name (`travel`) loads the built-in; a path (`./my-domain.js`,
 * `/abs/dir`, anything that starts with `.` or `/` or names an existing file) is imported from the
 * current folder; anything else is a package resolved from the current folder's node_modules.
 * The module's default export (or its `domain` export) must be made by `defineDomain`.
 *
 * What a loaded domain is recorded as (`ref`, workspace metadata, never hashed) is what loads it
 * again from any folder: the built-in name, the module's absolute path, or the package name with
 * the folder it was resolved from.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { builtinDomainNames, loadBuiltinDomain } from '../examples/registry.js';
import { isDomain, type Domain } from '../runtime/domain.js';

/** How to load a domain again, from any folder: recorded in the workspace when an invocation starts. */
export type DomainRef = { builtin: string } | { file: string } | { package: string; from: string };

export interface LoadedDomain {
  domain: Domain;
  ref: DomainRef;
}

/**
 * The domain cannot be found, loaded, or is not a domain: the message says what to pass instead.
 * The command line names something that is not there: exit code 2. `code` is what `--json`
 * reports as `refused`.
 */
export class DomainLoadError extends Error {
  override readonly name = 'DomainLoadError';
  constructor(
    message: string,
    readonly code: 'domain.not_found' | 'domain.load_failed' | 'domain.not_a_domain' | 'invocation.not_found' = 'domain.not_found',
  ) {
    super(message);
  }
}

const looksLikePath = (spec: string) => spec.startsWith('.') || spec.startsWith('/') || /\.(m?js|cjs)$/.test(spec) || path.isAbsolute(spec);

/** Load a domain recorded earlier (see DomainRef). */
export async function loadDomainRef(ref: DomainRef): Promise<LoadedDomain> {
  if ('builtin' in ref) return builtin(ref.builtin);
  if ('file' in ref) return fromFile(ref.file, ref.file);
  return fromPackage(ref.package, ref.from);
}

/** Describe a ref the way a user would pass it to --domain. */
export function domainFlag(ref: DomainRef): string {
  return 'builtin' in ref ? ref.builtin : 'file' in ref ? ref.file : ref.package;
}

export async function loadDomain(spec: string, cwd: string = process.cwd()): Promise<LoadedDomain> {
  if (!looksLikePath(spec) && builtinDomainNames().includes(spec)) return builtin(spec);
  const candidate = path.resolve(cwd, spec);
  if (looksLikePath(spec) || existsSync(candidate)) return fromFile(candidate, spec);
  return fromPackage(spec, cwd);
}

async function builtin(name: string): Promise<LoadedDomain> {
  const domain = await loadBuiltinDomain(name);
  if (!domain) throw new DomainLoadError(`no built-in domain named ${name} (built-ins: ${builtinDomainNames().join(', ')}); pass --domain <path to your domain module>`);
  return { domain, ref: { builtin: name } };
}

async function fromFile(file: string, spec: string): Promise<LoadedDomain> {
  if (!existsSync(file)) throw new DomainLoadError(`domain module ${spec} not found (looked at ${file}); pass the path of a .js module whose default export is defineDomain({...})`);
  const entry = statSync(file).isDirectory() ? entryOfFolder(file, spec) : file;
  return { domain: await importDomain(entry, spec), ref: { file: entry } };
}

async function fromPackage(name: string, from: string): Promise<LoadedDomain> {
  const entry = resolvePackage(name, from);
  if (!entry) {
    throw new DomainLoadError(
      `no domain named ${JSON.stringify(name)}: it is not a built-in (${builtinDomainNames().join(', ')}), not a file, and no package of that name is installed under ${from}; ` +
        `pass a path (./my-domain.js) or install the package`,
    );
  }
  return { domain: await importDomain(entry, name), ref: { package: name, from: path.resolve(from) } };
}

/** A folder's entry: its package.json (exports, then main), else index.js / index.mjs. */
function entryOfFolder(dir: string, spec: string): string {
  const manifest = path.join(dir, 'package.json');
  if (existsSync(manifest)) {
    const entry = packageEntry(dir, JSON.parse(readFileSync(manifest, 'utf8')) as PackageJson);
    if (entry) return entry;
  }
  for (const name of ['index.js', 'index.mjs']) if (existsSync(path.join(dir, name))) return path.join(dir, name);
  throw new DomainLoadError(`domain ${spec} is a folder without a package.json entry or an index.js; pass the built .js module (TypeScript must be compiled first)`);
}

interface PackageJson {
  exports?: unknown;
  main?: string;
}

/** The ESM entry a package exposes for `import` (exports "." with import/node/default, or main). */
function packageEntry(dir: string, pkg: PackageJson): string | undefined {
  const pick = (value: unknown): string | undefined => {
    if (typeof value === 'string') return value;
    if (value && typeof value === 'object') {
      const v = value as Record<string, unknown>;
      if ('.' in v) return pick(v['.']);
      for (const condition of ['import', 'node', 'default']) if (condition in v) return pick(v[condition]);
    }
    return undefined;
  };
  const relative = pick(pkg.exports) ?? pkg.main ?? (existsSync(path.join(dir, 'index.js')) ? 'index.js' : undefined);
  return relative === undefined ? undefined : path.resolve(dir, relative);
}

function resolvePackage(name: string, from: string): string | undefined {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const folder = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(folder, 'package.json'))) return packageEntry(folder, JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as PackageJson);
    if (path.dirname(dir) === dir) return undefined;
  }
}

async function importDomain(file: string, spec: string): Promise<Domain> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const at = err instanceof SyntaxError ? syntaxErrorAt(err, file) : undefined;
    const what = at ? `a syntax error at ${at}` : `${(err as Error).name ?? 'Error'}`;
    throw new DomainLoadError(`cannot load domain module ${spec} (${file}): ${what}: ${(err as Error).message}; fix it (or pass the built .js module)`, 'domain.load_failed');
  }
  const candidate = isDomain(mod.default) ? mod.default : isDomain(mod.domain) ? mod.domain : undefined;
  if (!candidate) {
    throw new DomainLoadError(`${spec} does not export a domain: its default export must be defineDomain({ name, libraries, actuators, observe, policy, … }) from 'weft'`, 'domain.not_a_domain');
  }
  return candidate;
}

/**
 * Where a SyntaxError met while importing `file` (or a module it imports) is: `path:line`. A
 * CommonJS module's stack names it; an ES module's does not (Node keeps it in the message it prints
 * for an uncaught error only), so the import is tried again in a child Node, whose uncaught error
 * prints `file:///path:line` first. Nothing runs there: a module graph with a syntax error is
 * refused before any of its code is evaluated.
 */
function syntaxErrorAt(err: SyntaxError, file: string): string | undefined {
  const inStack = /(?:^|[\s(])(?:file:\/\/)?(\/[^\s():]+):(\d+)/m.exec(err.stack ?? '');
  if (inStack) return `${inStack[1]}:${inStack[2]}`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', 'await import(process.argv[1])', pathToFileURL(file).href], { encoding: 'utf8', timeout: 10_000 });
  const first = /^(file:\/\/\S+):(\d+)$/m.exec(child.stderr ?? '');
  if (!first) return undefined;
  try {
    return `${fileURLToPath(first[1]!)}:${first[2]}`;
  } catch {
    return undefined;
  }
}
