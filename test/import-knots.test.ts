/**
 * The house's floors, checked on the import graph: every product file (each .ts outside test/,
 * bench/, node_modules/ and dist/) imports only files of its own room or of rooms on floors below
 * its own, and no files import each other round a circle. A room is a top-level folder or a file at
 * the root (or a file named apart from its folder); `floors` below lists them once, ground first.
 * Every import counts, type-only and `import()` too: a circle of types is still two files that
 * cannot be read apart, and a lazy import is still an arrow. The imports are read by TypeScript's
 * own pre-processor, so a string that looks like a comment cannot hide one.
 *
 * A failure names each arrow that runs back up (the file, the file it imports, and both floors) and
 * each circle (its files and the arrows that tie them): move the code down to the floor of the
 * room that needs it, or pass it in from above. A new top-level folder needs its floor here.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';

/**
 * The floors, ground first, as the import graph stands today. A room
 * imports only rooms on floors below its own; rooms that share a floor do not import each other.
 */
const floors: string[][] = [
  ['redis/'], //          the Redis connection policy: reconnect, give up, what of a URL may be printed
  ['journal/'], //        the journal's pure format: records, canonical encoding, chain, seal, verify, bundle
  ['htn/'],
  ['machines/'],
  ['actors/', 'mining/', 'policy/'],
  ['stores/'], //         where journals are kept: file, Redis, memory
  ['telemetry/'], //      OpenTelemetry spans and Prometheus metrics from records, on the effect side only
  ['queue/'],
  ['runtime/'],
  ['client/'], //         the client: start, approve, cancel, list, describe — writes pins and inbox messages, runs nothing
  ['examples/'], //       the built-in domains, which the CLI and the viewer load by name
  ['index.ts', 'inspector/'],
  ['cli/'],
  ['examples/demo.ts'], // `npm start`: the demo drives the CLI's own printing
];

/** Not product: folders of their own, and the root's tool configuration (vitest.config.ts). */
const notProduct = new Set(['test', 'bench', 'node_modules', 'dist']);
const isToolConfig = (name: string) => /\.config\.ts$/.test(name);

type Graph = Map<string, string[]>;

/** The room of a file: the longest entry of `floors` that names it or a folder it is in. */
function roomOf(file: string, rooms: readonly string[]): string | undefined {
  const fits = rooms.filter((room) => (room.endsWith('/') ? file.startsWith(room) : file === room));
  return fits.sort((a, b) => b.length - a.length)[0];
}

/** Each arrow that runs back up or sideways between rooms, as a line naming both files and floors. */
function arrowsBackUp(graph: Graph, houseFloors: readonly string[][]): string[] {
  const floorOf = new Map(houseFloors.flatMap((rooms, index) => rooms.map((room) => [room, index + 1] as const)));
  const rooms = [...floorOf.keys()];
  const faults: string[] = [];
  for (const [file, targets] of graph) {
    const from = roomOf(file, rooms);
    if (from === undefined) continue; // reported by `roomless`
    for (const target of targets) {
      const to = roomOf(target, rooms);
      if (to === undefined || to === from) continue;
      const [up, down] = [floorOf.get(from)!, floorOf.get(to)!];
      if (down >= up) faults.push(`${file} -> ${target} (${from} on floor ${up} imports ${to} on floor ${down})`);
    }
  }
  return faults.sort();
}

/** The files of the graph that no floor holds. */
function roomless(graph: Graph, houseFloors: readonly string[][]): string[] {
  const rooms = houseFloors.flat();
  return [...graph.keys()].filter((file) => roomOf(file, rooms) === undefined).sort();
}

/**
 * Every circle of the graph (a strongly connected set of two files or more, or a file importing
 * itself), each as its files and the arrows between them — Tarjan's algorithm, files in sorted order
 * so the report is stable. A circle whose files all lie in `allowed` is left out.
 */
function circles(graph: Graph, allowed: ReadonlySet<string> = new Set()): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
    } while (member !== file);
    if (members.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(members.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return found
    .filter((members) => !members.every((file) => allowed.has(file)))
    .map((members) => {
      const ties = members.flatMap((file) => (graph.get(file) ?? []).filter((target) => members.includes(target)).map((target) => `${file} -> ${target}`));
      return `${members.join(', ')} (${ties.join('; ')})`;
    })
    .sort();
}

const root = join(import.meta.dirname, '..');
const name = (path: string) => relative(root, path).split('\\').join('/');

function productFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    if (entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (dir !== root || !notProduct.has(entry)) out.push(...productFiles(path));
    } else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts') && !(dir === root && isToolConfig(entry))) out.push(path);
  }
  return out;
}

/** Each product file's imports of files of this tree (relative specifiers), as repository paths. */
const graph: Graph = new Map(
  productFiles(root).map((path) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(path, 'utf8'), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
      .map((specifier) => name(resolve(dirname(path), specifier.replace(/\.js$/, '.ts'))));
    return [name(path), [...new Set(targets)]];
  }),
);

describe('the checks find what they look for', () => {
  const toy: Graph = new Map([
    ['low/a.ts', ['low/b.ts']],
    ['low/b.ts', ['high/c.ts']],
    ['high/c.ts', ['low/a.ts', 'side/d.ts']],
    ['side/d.ts', []],
    ['stray.ts', ['low/a.ts']],
  ]);
  const toyFloors = [['low/'], ['high/', 'side/']];

  test('an arrow from a lower floor up, or across one floor, is named with both floors', () => {
    expect(arrowsBackUp(toy, toyFloors)).toEqual([
      'high/c.ts -> side/d.ts (high/ on floor 2 imports side/ on floor 2)',
      'low/b.ts -> high/c.ts (low/ on floor 1 imports high/ on floor 2)',
    ]);
  });

  test('a file on no floor is named', () => {
    expect(roomless(toy, toyFloors)).toEqual(['stray.ts']);
  });

  test('a circle is named with its files and arrows, unless all of them are allowed', () => {
    expect(circles(toy)).toEqual(['high/c.ts, low/a.ts, low/b.ts (high/c.ts -> low/a.ts; low/a.ts -> low/b.ts; low/b.ts -> high/c.ts)']);
    expect(circles(toy, new Set(['low/a.ts', 'low/b.ts', 'high/c.ts']))).toEqual([]);
    expect(circles(toy, new Set(['low/a.ts', 'low/b.ts']))).toHaveLength(1);
    expect(circles(new Map([['self.ts', ['self.ts']]]))).toEqual(['self.ts (self.ts -> self.ts)']);
  });

  test('the most specific room wins', () => {
    expect(roomOf('examples/demo.ts', floors.flat())).toBe('examples/demo.ts');
    expect(roomOf('examples/travel/domain.ts', floors.flat())).toBe('examples/');
  });
});

describe('the house keeps its floors', () => {
  test('the graph is read: every room has files, and imports of every kind are arrows', () => {
    const rooms = floors.flat();
    const empty = rooms.filter((room) => ![...graph.keys()].some((file) => roomOf(file, rooms) === room));
    expect(empty, `rooms with no file: ${empty.join(', ')}`).toEqual([]);
    expect(graph.get('queue/bullmq.ts')).toContain('redis/index.ts'); // a static import
    expect(graph.get('journal/index.ts')).toContain('redis/index.ts'); // an export … from
    expect(graph.get('examples/registry.ts')).toContain('examples/travel/domain.ts'); // an import()
    expect([...graph.values()].flat().length).toBeGreaterThan(500);
  });

  test('every product file stands on a floor', () => {
    expect(roomless(graph, floors), 'declare the floor of these files in `floors` (test/import-knots.test.ts)').toEqual([]);
  });

  test('no arrow runs back up (or across a floor)', () => {
    expect(arrowsBackUp(graph, floors), 'move the code these files import down to a floor below theirs, or pass it in from above').toEqual([]);
  });

  test('no files import each other round a circle', () => {
    expect(circles(graph), 'untie each circle: move what the files share into a file they both import').toEqual([]);
  });
});
