/**
 * The viewer serves only the page's modules, the pure journal modules and three vendored packages,
 * by plain `.js` paths: nothing else on the disk is reachable through it (a `..`, an encoded dot, a
 * folder, another extension, another package), and the import map's bare specifiers resolve to files
 * that exist.
 */
import { existsSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { assetFile } from '../inspector/assets.js';
import { IMPORT_MAP } from '../inspector/shell.js';

describe('inspector assets', () => {
  test('the page, the journal modules and the vendored packages are served', () => {
    expect(assetFile('/assets/journal/verify-bytes.js')).toMatch(/journal\/verify-bytes\.js$/);
    expect(assetFile('/assets/inspector/page/list.js')).toMatch(/inspector\/page\/list\.js$/);
    expect(existsSync(assetFile('/vendor/@noble/curves/ed25519.js')!)).toBe(true);
    expect(existsSync(assetFile('/vendor/@noble/hashes/sha2.js')!)).toBe(true);
    expect(existsSync(assetFile('/vendor/zod/v4/classic/external.js')!)).toBe(true);
  });

  test.each([
    '/assets/journal/../cli/main.js',
    '/assets/journal/./verify-bytes.js',
    '/assets/journal/%2e%2e/cli/main.js',
    '/assets/journal/',
    '/assets/journal/verify-bytes.ts',
    '/assets/journal/verify-bytes.js.map',
    '/assets/cli/main.js',
    '/vendor/ioredis/built/index.js',
    '/vendor/zod/package.json',
    '/vendor/zod/../../package.json',
    '/vendor/@noble/curves/.hidden.js',
    '/etc/passwd',
  ])('%s is not served', (path) => {
    expect(assetFile(path)).toBeUndefined();
  });

  test('every bare specifier of the import map points at a served prefix of an existing package', () => {
    const { imports } = JSON.parse(IMPORT_MAP) as { imports: Record<string, string> };
    expect(Object.keys(imports).sort()).toEqual(['@noble/curves/', '@noble/hashes/', 'zod']);
    expect(existsSync(assetFile(imports.zod!)!)).toBe(true);
    expect(existsSync(assetFile(`${imports['@noble/hashes/']}utils.js`)!)).toBe(true);
  });
});

describe('the list page shell', () => {
  test('preloads exactly the modules the list page imports at once (so its table waits for no second round trip)', async () => {
    const { readFileSync } = await import('node:fs');
    const { pageShell } = await import('../inspector/shell.js');
    const source = readFileSync(new URL('../inspector/page/list.ts', import.meta.url), 'utf8');
    const staticImports = [...source.matchAll(/^import (?!type )[^'"]*from '\.\/([a-z-]+)\.js';/gm)].map((m) => m[1]).sort();
    const preloaded = [...pageShell('list', 'x').matchAll(/rel="modulepreload" href="\/assets\/inspector\/page\/([a-z-]+)\.js"/g)].map((m) => m[1]).sort();
    expect(preloaded).toEqual(staticImports);
    expect(staticImports.length).toBeGreaterThan(0);
  });
});
