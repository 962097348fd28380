/**
 * The compiled library (dist/, what the `weft` command runs), imported by Node itself rather than
 * through vitest's transform: the in-process stand-ins for a command (./inspector.ts,
 * ./commands-here.ts and what uses it) run the very modules the command runs, and a user domain written for the tests
 * (./strict-travel.ts, ./private-travel.ts) imports dist/ — one copy of the library in play, loaded
 * once per worker, with no transform to pay for (a few seconds of CPU per file otherwise).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const distDir = path.resolve(import.meta.dirname, '..', '..', 'dist');

/** Node's own import(), out of reach of the transform that rewrites the test's import() calls (./native-import.cjs). */
const nativeImport = createRequire(import.meta.url)('./native-import.cjs') as (url: string) => Promise<unknown>;

/** A module of dist/ by its path there (`cli/workspace.js`); its type is the caller's `typeof import('../../dist/…')`. */
export async function fromDist<T>(file: string): Promise<T> {
  return (await nativeImport(pathToFileURL(path.join(distDir, file)).href)) as T;
}
