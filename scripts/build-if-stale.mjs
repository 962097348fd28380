#!/usr/bin/env node
/**
 * Build dist/ only when a source changed since the last build: what `npm start` and `npm run bench`
 * run first, so the demo starts at once when dist/ is up to date (a full `npm run build` typechecks
 * every file even when nothing changed).
 *
 * Stale means: dist/.build-stamp is missing, or a file the build reads — any file under the folders
 * tsconfig.json includes (and inspector/page, the viewer's own compile), tsconfig*.json,
 * package.json — is newer than it. Then `npm run -s build` runs and, once it succeeded, the stamp is
 * written. Plain Node, no dependency: it runs before anything is compiled. Tests are not built.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const stamp = path.join(root, 'dist', '.build-stamp');

/** The newest modification time under `entry` (a file or a folder), in ms; 0 when it is not there. */
function newest(entry) {
  let stat;
  try {
    stat = statSync(entry);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs; // a file removed or added changes its folder
  for (const name of readdirSync(entry)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    latest = Math.max(latest, newest(path.join(entry, name)));
  }
  return latest;
}

/** What the build reads: tsconfig.json's include (tests excepted), the viewer's page, the configs. */
function buildInputs() {
  const include = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8')).include ?? [];
  const configs = readdirSync(root).filter((name) => /^tsconfig.*\.json$/.test(name));
  return [...include.filter((entry) => entry !== 'test' && entry !== 'vitest.config.ts'), 'inspector/page', ...configs, 'package.json'].map((entry) => path.join(root, entry));
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = buildInputs().find((entry) => newest(entry) > built);
if (changed === undefined) process.exit(0);
const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '-s', 'build'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
