/**
 * What a `weft` command loads to start (issue 31: every command, and every CLI child the suite
 * spawns, paid 0.3–0.45 s of CPU for zod, the curves and the stores whatever it did). A command
 * loads the heavy packages on the paths that use them, and only there:
 *
 * - `weft --version` loads nothing but main.ts and its few light helpers: no schema (zod), no
 *   curve (@noble/curves), no store, no Redis client, no machine;
 * - `weft ls` on a folder loads no machine (xstate), no Redis client (ioredis, bullmq), no
 *   Redis store and no viewer;
 * - `weft run` without --stately loads no Stately relay, and on the file store no Redis client;
 * - `weft worker --help` loads no BullMQ;
 * - `weft inspect` serves without the machine (xstate), the planner or the statechart's layout
 *   (dagre): a page that asks for a replay trail, plan trees or the statechart loads them then.
 *
 * Each is a real child under test/support/module-trace.mjs, which lists every module the process
 * loads; the output and exit code are asserted too. What a start costs in time is a benchmark's
 * (`npm run bench -- startup`), not a test's.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { assertBuilt, repoRoot, runNode, weftBin, type CliResult } from './support/cli.js';
import { spawnNode, waitFor } from './support/weft-processes.js';

assertBuilt();
const root = mkdtempSync(path.join(os.tmpdir(), 'weft-cli-startup-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TRACE = path.join(repoRoot, 'test', 'support', 'module-trace.mjs');
let traces = 0;

/** Run `weft args` under the module trace: its result, and the modules it loaded (URLs). */
async function traced(args: string[]): Promise<{ result: CliResult; modules: string[] }> {
  const file = path.join(root, `trace-${++traces}.txt`);
  writeFileSync(file, '');
  const result = await runNode('--import', [TRACE, weftBin, ...args], { WEFT_MODULE_TRACE: file, WEFT_REDIS_URL: '' }, root);
  return { result, modules: readFileSync(file, 'utf8').split('\n').filter((u) => u !== '') };
}

/** The packages among `modules` (by their folder under node_modules), sorted. */
function packagesOf(modules: string[]): string[] {
  const names = modules.map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((n): n is string => n !== undefined);
  return [...new Set(names)].sort();
}

const show = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

describe('weft start-up loads what the command needs', () => {
  test('weft --version: the version, from main.ts and its light helpers only', async () => {
    const { result, modules } = await traced(['--version']);
    expect(result.code, show(result)).toBe(0);
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(result.stdout).toBe(`weft ${pkg.version}\n`);
    expect(packagesOf(modules)).toEqual([]);
    const ours = modules.filter((u) => u.startsWith('file:')).map((u) => path.relative(path.join(repoRoot, 'dist'), new URL(u).pathname));
    // The terminal guard's escapes live in journal/active-text.ts, which the viewer's page shares: a module that imports nothing.
    const light = new Set([path.join('journal', 'active-text.js')]);
    expect(readFileSync(path.join(repoRoot, 'dist', 'journal', 'active-text.js'), 'utf8')).not.toMatch(/^import /m);
    expect(ours.every((f) => f.startsWith(`cli${path.sep}`) || light.has(f)), ours.join('\n')).toBe(true);
    expect(ours.filter((f) => /store|journal|runtime|machines/.test(f) && !light.has(f))).toEqual([]);
  });

  test('weft ls on an empty folder: no machine, no Redis client or store, no viewer', async () => {
    const dir = mkdtempSync(path.join(root, 'empty-'));
    const { result, modules } = await traced(['ls', '--dir', dir]);
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout).toContain('no invocations');
    const packages = packagesOf(modules);
    for (const heavy of ['xstate', 'ioredis', 'bullmq', '@dagrejs/dagre']) expect(packages).not.toContain(heavy);
    expect(modules.filter((u) => /\/dist\/(journal\/stores\/redis\.js|runtime\/runtime\.js|inspector\/)/.test(u))).toEqual([]);
  });

  test('weft run travel on the file store: completes, without the Redis client or the Stately relay', async () => {
    const dir = mkdtempSync(path.join(root, 'run-'));
    const { result, modules } = await traced(['run', 'travel', '--dir', dir, '--json']);
    expect(result.code, show(result)).toBe(0);
    expect(JSON.parse(result.stdout.trim().split('\n').at(-1)!)).toMatchObject({ status: 'completed' });
    const packages = packagesOf(modules);
    for (const heavy of ['ioredis', 'bullmq', '@dagrejs/dagre']) expect(packages).not.toContain(heavy);
    expect(modules.filter((u) => /\/dist\/inspector\//.test(u))).toEqual([]);
  });

  test('weft worker --help: the usage, without BullMQ', async () => {
    const { result, modules } = await traced(['worker', '--help']);
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout).toMatch(/^usage: weft worker --domain D --redis URL/);
    expect(packagesOf(modules)).not.toContain('bullmq');
  });

  test('weft inspect: serves the viewer, without the machine, the planner or the statechart layout', async () => {
    const dir = mkdtempSync(path.join(root, 'viewer-'));
    const file = path.join(root, `trace-${++traces}.txt`);
    writeFileSync(file, '');
    const viewer = spawnNode('--import', [TRACE, weftBin, 'inspect', '--dir', dir, '--port', '0', '--nice', '0'], { WEFT_MODULE_TRACE: file, WEFT_REDIS_URL: '' }, root);
    const url = await waitFor('the URL weft inspect prints', () => /http:\/\/\S+/.exec(viewer.stdout())?.[0]);
    // The list, as the page's first request asks for it (the printed URL's token, when it has one, as the page sends it).
    const token = new URL(url).searchParams.get('token');
    const list = await fetch(new URL('/api/invocations', url), { headers: token ? { authorization: `Bearer ${token}` } : {} });
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual([]);
    viewer.signal('SIGTERM');
    await viewer.done;
    const modules = readFileSync(file, 'utf8').split('\n').filter((u) => u !== '');
    const packages = packagesOf(modules);
    for (const heavy of ['xstate', '@dagrejs/dagre', 'ioredis', 'bullmq']) expect(packages).not.toContain(heavy);
    expect(modules.filter((u) => /\/dist\/(htn\/planner\/|inspector\/(machine-graph|replay-trail|plan-trees)\.js)/.test(u))).toEqual([]);
  });
});
