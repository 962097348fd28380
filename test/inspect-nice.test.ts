/**
 * `weft inspect` yields the CPU to the runs it watches (cli/yield-cpu.ts): by default every thread
 * of its process — those running when it starts and those its serving makes later (libuv's pool,
 * made by the first file read a request needs) — runs at nice 10; `--nice N` chooses (0: the
 * priority it was given); anything but 0–19 is a usage error. Read from /proc/<pid>/task: Linux
 * only (skipped, with a notice, elsewhere).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { startViewer } from './support/inspect-viewer.js';

const hasProc = existsSync('/proc/self/task');
if (!hasProc) console.warn('[inspect-nice] no /proc/self/task here (not Linux): the per-thread nice values are not checked');

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-nice-'));
const dir = path.join(root, 'ws');

beforeAll(async () => {
  assertBuilt();
  const run = await weft(['run', 'travel', '--dir', dir, '--json']);
  expect(run.code, run.stderr).toBe(0);
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The nice value of each thread of process `pid` (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // After the command name (in parentheses, which may hold anything) come fields 3 on.
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // a thread that ended meanwhile
    }
  });
}

/** Start a viewer with `args`, have it serve the list and a journal (its file reads), and give every thread's nice value. */
async function nicesOfViewer(args: string[]): Promise<number[]> {
  const viewer = await startViewer(['--dir', dir, ...args], { userPriority: true });
  try {
    const rows = (await (await fetch(`${viewer.origin}/api/invocations`)).json()) as Array<{ id: string }>;
    expect(rows.length).toBe(1);
    expect((await fetch(`${viewer.origin}/api/invocations/${rows[0]!.id}/journal`)).status).toBe(200);
    return threadNices(viewer.child.pid!);
  } finally {
    await viewer.stop();
  }
}

describe.skipIf(!hasProc)('weft inspect runs at a lower CPU priority than the runs it watches', () => {
  const given = os.getPriority(); // what this test process runs at, and so what a child is given

  test('by default every thread of the viewer, those made while it serves too, is at nice 10', async () => {
    const nices = await nicesOfViewer([]);
    expect(nices.length).toBeGreaterThan(4); // the main thread, V8's helpers, libuv's pool
    expect(new Set(nices)).toEqual(new Set([Math.max(10, given)]));
  }, 60_000);

  test('--nice 0 keeps the priority it was given; --nice 15 takes 15', async () => {
    expect(new Set(await nicesOfViewer(['--nice', '0']))).toEqual(new Set([given]));
    expect(new Set(await nicesOfViewer(['--nice', '15']))).toEqual(new Set([Math.max(15, given)]));
  }, 60_000);
});

test('a --nice outside 0–19 is a usage error that says what it takes', async () => {
  for (const bad of ['20', '-1', 'low']) {
    const r = await weft(['inspect', '--dir', dir, '--port', '0', `--nice=${bad}`]);
    expect(r.code, bad).toBe(2);
    expect(r.stderr).toContain('--nice takes a nice value 0–19');
  }
}, 60_000);
