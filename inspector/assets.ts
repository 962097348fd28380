/**
 * The files the page loads, all from this installed package — nothing from a CDN or the internet:
 *
 *   /assets/inspector/page/<name>.js   the page's modules (dist/inspector/page/, built by tsc)
 *   /assets/journal/<name>.js          the pure journal modules the page verifies with (dist/journal/)
 *   /assets/runtime/describe-epoch.js  the pure modules of the runtime the page imports (PAGE_PURE_MODULES),
 *   /assets/machines/sleep.js          named one by one: time travel describes epochs with epochsOf
 *   /vendor/<package>/<path>.js        zod, @noble/hashes, @noble/curves, as installed (their ES modules)
 *
 * A request names a file by a path of plain segments ending in `.js`; anything else (`..`, a
 * folder, another extension, another package) is not found. Only the pure journal modules are
 * imported by the page (verify-bytes.ts and what it imports); the Node fast paths beside them
 * (sha256-node.js, ed25519-node.js) are never loaded by it.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/, the folder above this module's (dist/inspector/). */
const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const VENDORED = ['zod', '@noble/hashes', '@noble/curves'] as const;
const vendorRoots = new Map<string, string>();

/** The installed package's folder (its main module sits at its root for all three). */
function vendorRoot(name: string): string {
  let root = vendorRoots.get(name);
  if (root === undefined) {
    root = path.dirname(fileURLToPath(import.meta.resolve(name)));
    vendorRoots.set(name, root);
  }
  return root;
}

/** Files outside journal/ that the page imports, by their URL path: each pure, and named here alone. */
const PAGE_PURE_MODULES = new Map<string, string>([
  ['/assets/runtime/describe-epoch.js', path.join(DIST, 'runtime', 'describe-epoch.js')],
  ['/assets/machines/sleep.js', path.join(DIST, 'machines', 'sleep.js')],
]);

const SAFE_PATH = /^(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*\/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.js$/;

/** The file a URL path names, or undefined when it names none of the served files. */
export function assetFile(urlPath: string): string | undefined {
  const pure = PAGE_PURE_MODULES.get(urlPath);
  if (pure !== undefined) return pure;
  for (const [prefix, folder] of [
    ['/assets/inspector/page/', path.join(DIST, 'inspector', 'page')],
    ['/assets/journal/', path.join(DIST, 'journal')],
  ] as const) {
    if (urlPath.startsWith(prefix)) return inside(folder, urlPath.slice(prefix.length));
  }
  for (const name of VENDORED) {
    const prefix = `/vendor/${name}/`;
    if (urlPath.startsWith(prefix)) return inside(vendorRoot(name), urlPath.slice(prefix.length));
  }
  return undefined;
}

function inside(folder: string, rest: string): string | undefined {
  if (!SAFE_PATH.test(rest) || rest.split('/').some((segment) => segment === '..' || segment === '.')) return undefined;
  const file = path.join(folder, rest);
  return file.startsWith(folder + path.sep) ? file : undefined;
}

/** The file's bytes, or undefined when it does not exist. */
export async function readAsset(file: string): Promise<Buffer | undefined> {
  try {
    return await fs.readFile(file);
  } catch {
    return undefined;
  }
}
