/**
 * The determinism boundary, checked: code on the replay side (journal core, HTN engine, machines)
 * never reads the clock, randomness or the environment, never touches the file system or the
 * network, and never imports the effect side. A grep, deliberately simple: if it fires, move the
 * effect out to a store, the CLI, or an injected dependency.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

const root = join(import.meta.dirname, '..');

/** Folders whose code must be pure, and the files inside them that are the sanctioned edge. */
const pureFolders = ['journal', 'htn', 'machines', 'mining', 'policy'];
const edgeFiles = new Set(['journal/sha256-node.ts', 'journal/ed25519-node.ts', 'journal/index.ts']);
const edgeFolders = ['stores/'];
/** Pure files outside the pure folders, held to the same rules (the viewer's page imports them). */
const pureExtraFiles = ['runtime/describe-epoch.ts'];

const forbidden: Array<[RegExp, string]> = [
  [/\bDate\.now\s*\(/, 'Date.now()'],
  [/\bnew Date\s*\(\s*\)/, 'new Date() (the current time)'],
  [/\bMath\.random\s*\(/, 'Math.random()'],
  [/\bprocess\.(env|argv|hrtime|cwd)\b/, 'process state'],
  [/\bperformance\.now\s*\(/, 'performance.now()'],
  [/from\s+['"](node:)?(fs|fs\/promises|net|http|https|child_process|os|dgram|worker_threads)['"]/, 'an I/O module'],
  [/from\s+['"](ioredis|bullmq)['"]/, 'an I/O library'],
  [/(from\s+|import\s*\(\s*)['"]@opentelemetry\//, 'OpenTelemetry (spans live on the effect side: telemetry/)'],
  [/from\s+['"][./]+\/(cli|queue|runtime|actors|inspector|bench|examples|redis|telemetry)\//, 'the effect side'],
  [/from\s+['"]\.\/stores\//, 'a store implementation'],
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const name of entries) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const pureFiles = pureFolders
  .flatMap((folder) => sourceFiles(join(root, folder)))
  .map((path) => relative(root, path).split('\\').join('/'))
  .filter((path) => !edgeFiles.has(path) && !edgeFolders.some((folder) => path.startsWith(folder)))
  .concat(pureExtraFiles);

describe('determinism boundary', () => {
  test('there is pure code to check', () => {
    expect(pureFiles.length).toBeGreaterThan(5);
  });

  test.each(pureFiles)('%s uses no clock, randomness, environment or I/O', (file) => {
    const text = readFileSync(join(root, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    const hits = forbidden.filter(([pattern]) => pattern.test(text)).map(([, what]) => what);
    expect(hits, `${file} reaches for ${hits.join(', ')}`).toEqual([]);
  });
});

/**
 * The viewer's page (inspector/page/, compiled for the browser) imports only its own modules, the
 * pure folders (never a store or a Node fast path) and the three vendored packages the import map
 * names — so what verifies a journal in the browser is the pure code the CLI runs, and nothing
 * with I/O can reach the page.
 */
describe('the viewer page imports only pure modules', () => {
  const pageFiles = sourceFiles(join(root, 'inspector', 'page')).map((path) => relative(root, path).split('\\').join('/'));
  const vendored = /^(zod|@noble\/hashes|@noble\/curves)(\/|$)/;

  test('there is a page to check', () => {
    expect(pageFiles.length).toBeGreaterThan(3);
  });

  test.each(pageFiles)('%s', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const specifiers = [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
    const bad = specifiers.filter((spec) => {
      if (vendored.test(spec)) return false;
      if (!spec.startsWith('.')) return true; // node:, or any other package
      const target = join(root, 'inspector', 'page', spec).replace(/\.js$/, '.ts');
      const rel = relative(root, target).split('\\').join('/');
      if (rel.startsWith('inspector/page/')) return false;
      return !pureFiles.includes(rel);
    });
    expect(bad, `${file} imports ${bad.join(', ')}, which is not pure: the page may import only inspector/page/, the pure folders (${pureFolders.join(', ')}) and ${pureExtraFiles.join(', ')}`).toEqual([]);
  });
});
