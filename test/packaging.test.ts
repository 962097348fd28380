/**
 * The installed package and the demo's start:
 * - every file under examples/ that the README or docs/ name for a command (a policy pack, the
 *   helpdesk domain — not a .ts source, which ships compiled in dist/) is in package.json "files",
 *   so the documented `--policy examples/travel/policy-approval.json` works from an installed project;
 * - `npm start` builds only when a source changed (scripts/build-if-stale.mjs): run against a
 *   scratch project whose build counts its runs, it builds once, not again with nothing changed,
 *   and again once a source is touched.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { repoRoot } from './support/cli.js';

const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { files: string[]; scripts: Record<string, string> };

/** Whether `file` (relative to the repo) matches a "files" pattern: a path, a folder, or a `*` within one name. */
function shipped(file: string): boolean {
  const included = (pattern: string) => {
    const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`);
    return re.test(file);
  };
  return pkg.files.some((p) => !p.startsWith('!') && included(p)) && !pkg.files.some((p) => p.startsWith('!') && included(p.slice(1)));
}

describe('the package', () => {
  test('ships every examples/ file the README and docs name (not .ts sources: those ship compiled)', () => {
    const docs = ['README.md', ...readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const named = new Set<string>();
    for (const doc of docs) for (const m of readFileSync(path.join(repoRoot, doc), 'utf8').matchAll(/examples\/[A-Za-z0-9_./-]*[A-Za-z0-9_]/g)) named.add(m[0]);
    const files = [...named].filter((f) => !f.endsWith('.ts') && existsSync(path.join(repoRoot, f)) && !readdirSafe(path.join(repoRoot, f)));
    expect(files).toContain('examples/travel/policy-approval.json');
    expect(files.filter((f) => !shipped(f))).toEqual([]);
  });

  test('npm start and npm run bench build only when stale', () => {
    expect(pkg.scripts.start).toMatch(/^node scripts\/build-if-stale\.mjs && /);
    expect(pkg.scripts.bench).toMatch(/^node scripts\/build-if-stale\.mjs && /);
  });
});

function readdirSafe(entry: string): boolean {
  try {
    readdirSync(entry);
    return true;
  } catch {
    return false;
  }
}

describe('scripts/build-if-stale.mjs', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'weft-stale-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('builds once, not again with nothing changed, and again after a source changed', () => {
    mkdirSync(path.join(root, 'scripts'));
    mkdirSync(path.join(root, 'src'));
    mkdirSync(path.join(root, 'dist'));
    copyFileSync(path.join(repoRoot, 'scripts', 'build-if-stale.mjs'), path.join(root, 'scripts', 'build-if-stale.mjs'));
    writeFileSync(path.join(root, 'tsconfig.json'), JSON.stringify({ include: ['src', 'test'] }));
    writeFileSync(path.join(root, 'src', 'a.ts'), 'export const a = 1;\n');
    // The scratch build appends a line per run: the count of builds.
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'scratch', private: true, scripts: { build: `node -e "require('fs').appendFileSync('dist/builds','x')"` } }));
    const builds = () => (existsSync(path.join(root, 'dist', 'builds')) ? readFileSync(path.join(root, 'dist', 'builds'), 'utf8').length : 0);
    const start = () => execFileSync(process.execPath, [path.join(root, 'scripts', 'build-if-stale.mjs')], { cwd: root, stdio: 'pipe' });
    start();
    expect(builds()).toBe(1);
    start();
    expect(builds()).toBe(1);
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(root, 'src', 'a.ts'), later, later);
    start();
    expect(builds()).toBe(2);
  });
});
