/**
 * The README's install from a clone, run as written (issue 19, point 14). `npm install
 * /path/to/clone` only links the clone: in a fresh clone its `prepare` build finds no TypeScript
 * and fails, and `npx weft` then says `not found`. The README now shows the path that works — the
 * clone packs itself (`npm pack`) and the project installs the tarball — in one ```sh block marked
 * for this test. The test reads that block from README.md and runs its lines one by one, so the
 * documented path and the tested one cannot drift apart:
 *
 * - `/path/to/weft` is this repository (the clone), `/path/to/my-project` a fresh temporary folder;
 * - `cd` and `mkdir` are done here; every `npm`/`npx` line is a tracked child process
 *   (test/support/children.ts), run in the folder the block is in at that line;
 * - `npm ci` in the clone is the one line not run: this repository has had it already (its
 *   node_modules serve the suite that runs this test, which a second `npm ci` would delete under it).
 *   The `npm pack` that follows runs the clone's `prepare` build, which finds dist/ up to date after
 *   `npm test`'s build and writes nothing — asserted below: both compiles are incremental, and a
 *   rewrite would truncate modules that the suite's other processes are importing at that moment
 *   (CI once saw `./seal.js does not provide an export named keyIdOf` from exactly that).
 *
 * npm runs offline where its cache allows (`npm ci` filled it): prefer-offline, no audit, no fund.
 *
 * The installed project then serves one more check: the library API examples — the README's and
 * every ```ts block of docs/api.md — typecheck against the package as installed (its .d.ts files),
 * with the repository's own TypeScript, so an example that names a missing export or a wrong
 * option fails here. The blocks share one module: their imports are merged, each body becomes a
 * function of its own, and `runtime` and `run` are declared for the blocks that use them.
 */
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawnTracked } from './support/children.js';
import { assertBuilt, repoRoot, type CliResult } from './support/cli.js';

const CLONE = '/path/to/weft';
const PROJECT = '/path/to/my-project';
const MARKER = '<!-- test/install-from-clone.test.ts runs this block -->';

const root = mkdtempSync(path.join(tmpdir(), 'weft-install-from-clone-'));
const project = path.join(root, 'my-project');
const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const tarball = path.join(repoRoot, `weft-${version}.tgz`);
const tarballWasThere = existsSync(tarball);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  if (!tarballWasThere) rmSync(tarball, { force: true }); // npm pack's output, in the clone's root
});

/** The lines of the README's ```sh block that follows the marker, comments and blank lines dropped. */
function documentedLines(): string[] {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const at = readme.indexOf(MARKER);
  if (at < 0) throw new Error(`README.md has no "${MARKER}" before the install-from-a-clone block`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!block) throw new Error('README.md: no ```sh block after the install-from-a-clone marker');
  return block[1]!
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** A documented path with the placeholders replaced by this run's folders. */
const realPath = (word: string): string => word.replace(CLONE, repoRoot).replace(PROJECT, project);

/** The environment of the npm children: this run's npm variables (npm test's own) left out. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && !/^npm_config_(cache|registry|userconfig|globalconfig)$/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
}

/** The ```ts blocks of a markdown file (for the README: only its "The library API" section's). */
function tsBlocks(file: string, section?: string): string[] {
  let text = readFileSync(path.join(repoRoot, file), 'utf8');
  if (section !== undefined) {
    const at = text.indexOf(`## ${section}`);
    if (at < 0) throw new Error(`${file} has no "## ${section}" section`);
    text = text.slice(at, text.indexOf('\n## ', at + 3));
  }
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** One module from example blocks: merged imports, each body a function, `runtime` and `run` declared. */
function exampleModule(blocks: string[]): string {
  const fromWeft = new Set<string>();
  const other = new Set<string>();
  const bodies = blocks.map((block) =>
    block
      .split('\n')
      .filter((line) => {
        const named = /^import \{(.*)\} from 'weft';$/.exec(line);
        if (named) for (const name of named[1]!.split(',')) fromWeft.add(name.trim());
        else if (line.startsWith('import ')) other.add(line);
        else return true;
        return false;
      })
      .join('\n'),
  );
  return [
    ...other,
    `import { ${[...fromWeft].join(', ')} } from 'weft';`,
    "import type { InvocationHandle, Runtime } from 'weft';",
    'declare const runtime: Runtime;',
    'declare const run: InvocationHandle;',
    ...bodies.map((body, i) => `export async function example${i}(): Promise<void> {\n${body}\n}`),
  ].join('\n');
}

function run(command: string, args: string[], cwd: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(command, args, { cwd, env: npmEnv(), label: [command, ...args].join(' ') });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c) => (stdout += c));
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** What each documented line printed, by the line as the README writes it. */
const results = new Map<string, CliResult>();

/** Every file under dist/ with its modification time (ns): what a rebuild would change. */
function distTimes(): Map<string, bigint> {
  const times = new Map<string, bigint>();
  const dist = path.join(repoRoot, 'dist');
  for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    times.set(path.relative(dist, file), statSync(file, { bigint: true }).mtimeNs);
  }
  return times;
}
let distBefore = new Map<string, bigint>();
let distAfter = new Map<string, bigint>();

beforeAll(async () => {
  assertBuilt();
  distBefore = distTimes();
  let cwd = root;
  for (const line of documentedLines()) {
    if (/["'`$;|&<>]/.test(line)) throw new Error(`README install block: keep each line one plain command (no quotes, pipes or &&): ${line}`);
    const [command, ...args] = line.split(/\s+/).map(realPath);
    if (command === 'cd') cwd = path.resolve(cwd, args[0]!);
    else if (command === 'mkdir') mkdirSync(path.resolve(cwd, args.at(-1)!), { recursive: true });
    else if (line === 'npm ci' && cwd === repoRoot) continue; // see the header: done already
    else if (command === 'npm' || command === 'npx') {
      const result = await run(command, args, cwd);
      results.set(line, result);
      if (result.code !== 0) throw new Error(`README install block: "${line}" exited ${result.code}\n${result.stdout}\n${result.stderr}`);
    } else throw new Error(`README install block: "${line}" is not a cd, mkdir, npm or npx line this test can run`);
  }
  distAfter = distTimes();
}, 170_000);

describe('install from a clone, as the README shows it', () => {
  test('the block packs the clone and installs the tarball into a project of its own', () => {
    expect([...results.keys()]).toEqual(expect.arrayContaining(['npm pack', `npm install ${CLONE}/weft-${version}.tgz`]));
    // A copy, not a link into the clone: the project keeps working when the clone changes or goes.
    const installed = path.join(project, 'node_modules', 'weft');
    expect(lstatSync(installed).isSymbolicLink()).toBe(false);
    expect(existsSync(path.join(installed, 'dist', 'cli', 'main.js'))).toBe(true);
  });

  test("the clone's npm pack (its prepare build) rewrites nothing in dist/, which other processes are importing", () => {
    expect(distBefore.size).toBeGreaterThan(100);
    const rewritten = [...distAfter].filter(([file, time]) => distBefore.get(file) !== time).map(([file]) => file);
    const removed = [...distBefore.keys()].filter((file) => !distAfter.has(file));
    expect({ rewritten, removed }).toEqual({ rewritten: [], removed: [] });
  });

  test('npx weft --version names the installed version', () => {
    const shown = results.get('npx weft --version');
    expect(shown, 'the block runs npx weft --version').toBeDefined();
    expect(shown!.stdout.trim()).toBe(`weft ${version}`);
  });

  test('the library API examples (README, docs/api.md) typecheck against the installed package', async () => {
    const readme = tsBlocks('README.md', 'The library API');
    const api = tsBlocks('docs/api.md');
    expect(readme.length).toBeGreaterThan(0);
    expect(api.length).toBeGreaterThan(5);
    copyFileSync(path.join(repoRoot, 'examples', 'helpdesk', 'helpdesk-domain.js'), path.join(project, 'helpdesk-domain.js'));
    writeFileSync(path.join(project, 'readme-example.ts'), exampleModule(readme));
    writeFileSync(path.join(project, 'api-examples.ts'), exampleModule(api));
    const compilerOptions = {
      module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, allowJs: true, skipLibCheck: true,
      typeRoots: [path.join(repoRoot, 'node_modules', '@types')], types: ['node'],
    };
    writeFileSync(path.join(project, 'tsconfig.examples.json'), JSON.stringify({ compilerOptions, files: ['readme-example.ts', 'api-examples.ts'] }));
    const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.examples.json'], project);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
  });

  test('npx weft run travel completes, sealed, in the project', () => {
    const ran = results.get('npx weft run travel');
    expect(ran, 'the block runs npx weft run travel').toBeDefined();
    expect(ran!.stdout).toMatch(/^status\s+completed$/m);
    expect(ran!.stdout).toMatch(/^fingerprint\s+[0-9a-f]{64}$/m);
    expect(ran!.stdout).toContain(path.join(project, '.weft', 'invocations'));
  });
});
