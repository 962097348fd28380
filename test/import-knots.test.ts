/**
 * The import graph's knots, kept untied: no two files of the runtime or the queue import each
 * other, directly or round a longer cycle (runtime.ts and serve.ts once did), and the queue never reaches up into the
 * runtime's domain (a worker runs an ActuatorDomain, actors/domain-context.ts). Type-only imports
 * count too: a cycle of types is still two files that cannot be read apart.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const root = join(import.meta.dirname, '..');
const folders = ['actors', 'cli', 'htn', 'journal', 'machines', 'mining', 'queue', 'runtime'];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const files = folders.flatMap((folder) => sourceFiles(join(root, folder)));
const name = (path: string) => relative(root, path).split('\\').join('/');

/** Each file's relative imports (static `import … from` and `export … from`), as repository paths. */
const graph = new Map<string, string[]>(
  files.map((path) => {
    const text = readFileSync(path, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const targets = [...text.matchAll(/(?:import|export)\s[^'";]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => name(resolve(dirname(path), m[1]!.replace(/\.js$/, '.ts'))));
    return [name(path), targets];
  }),
);

/** The first import cycle among the files `within` keeps, found by depth-first search, as the files round it. */
function firstCycle(within: (file: string) => boolean): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...stack.slice(stack.indexOf(file)), file];
    state.set(file, 'open');
    stack.push(file);
    for (const next of (graph.get(file) ?? []).filter(within)) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of [...graph.keys()].filter(within).sort()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('import knots', () => {
  test('the graph is read (the check below is not vacuous)', () => {
    expect(graph.get('runtime/runtime.ts')).toContain('runtime/serve.ts');
  });

  test('runtime/serve.ts does not import runtime/runtime.ts', () => {
    expect(graph.get('runtime/serve.ts')).not.toContain('runtime/runtime.ts');
  });

  // Among the runtime and the queue; the journal's records.ts and validate-fast.ts still share one.
  test('no runtime or queue files import each other round a cycle', () => {
    expect(firstCycle((file) => file.startsWith('runtime/') || file.startsWith('queue/'))).toBeUndefined();
  });

  test('queue/ does not reach up into runtime/domain.ts', () => {
    const reaching = [...graph].filter(([file, targets]) => file.startsWith('queue/') && targets.includes('runtime/domain.ts')).map(([file]) => file);
    expect(reaching).toEqual([]);
  });
});
