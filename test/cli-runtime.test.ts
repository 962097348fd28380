/**
 * The runtime through the `weft` command, as a user drives it — every call a separate process:
 * two live runs in different directories and processes write byte-identical journals; `run
 * --json` and `replay --json` chain into `verify`; `--hibernate` stops at the first epoch boundary
 * and `resume` finishes it in a new process from the snapshot; `ls` lists; starting an existing id
 * attaches, and a clash of intent under the same id is refused.
 *
 * The runs a test only compares against or starts from (a reference run, a run under another seed,
 * the first holder of an id, a run a crash then tears) are made in this process as `weft run --json`
 * makes them (test/support/runs-here.ts); every command under test is a process.
 */
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { runInWorkspace } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-runtime-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(() => assertBuilt());

interface RunJson {
  id: string;
  status: string;
  journal: string;
  fingerprint: string | null;
  publicKey: string;
}

const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { hash: string; meta?: unknown });
const hashedParts = (file: string) => lines(file).map(({ meta: _meta, ...hashed }) => hashed);

describe('weft run / replay / resume / ls', () => {
  test('two live runs in different directories and processes write byte-identical journals', async () => {
    const a = path.join(root, 'a');
    const b = path.join(root, 'b');
    const keygen = await weft(['keygen', '--out', path.join(a, 'keys')]);
    expect(keygen.code, keygen.stderr).toBe(0);
    cpSync(path.join(a, 'keys'), path.join(b, 'keys'), { recursive: true });
    const [ra, rb] = await Promise.all([weft(['run', 'travel', '--dir', a, '--json', '--seed', '42']), weft(['run', 'travel', '--dir', b, '--json', '--seed', '42'])]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    const ja = JSON.parse(ra.stdout) as RunJson;
    const jb = JSON.parse(rb.stdout) as RunJson;
    expect(ja.status).toBe('completed');
    expect(ja.id).toBe(jb.id);
    expect(ja.fingerprint).toBe(jb.fingerprint);
    expect(path.isAbsolute(ja.journal) && path.isAbsolute(ja.publicKey)).toBe(true);
    expect(hashedParts(ja.journal)).toEqual(hashedParts(jb.journal));
    // A different seed is a different invocation with its own id.
    // (Made in this process, resting at its first boundary: only its id is compared.)
    const rc = await runInWorkspace('travel', { dir: path.join(root, 'c'), seed: '43', hibernate: true });
    expect(rc.id).not.toBe(ja.id);
  });

  test('run --json chains into verify and replay', async () => {
    const dir = path.join(root, 'chain');
    const run = JSON.parse((await weft(['run', 'travel', '--dir', dir, '--json'])).stdout) as RunJson;
    const verify = await weft(['verify', run.journal, '--public-key', run.publicKey]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain(run.fingerprint!);
    const replay = await weft(['replay', run.journal, '--json']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ id: run.id, status: 'completed', fingerprint: run.fingerprint, journal: run.journal, identical: true });
    const text = await weft(['run', 'travel', '--dir', dir]);
    expect(text.stdout, 'running the same invocation again attaches to the sealed one').toContain(`status      completed`);
    expect(text.stdout).toContain(`fingerprint ${run.fingerprint}`);
    const ls = await weft(['ls', '--dir', dir, '--json']);
    expect(JSON.parse(ls.stdout)).toEqual([expect.objectContaining({ id: run.id, status: 'completed', tenant: 'default' })]);
  });

  test('--hibernate stops at the first epoch boundary; resume in a new process finishes from the snapshot', async () => {
    const dir = path.join(root, 'hibernate');
    const first = await weft(['run', 'travel', '--dir', dir, '--json', '--hibernate']);
    expect(first.code, first.stderr).toBe(0);
    const paused = JSON.parse(first.stdout) as RunJson;
    expect(paused.status).toBe('hibernated');
    expect(paused.fingerprint).toBeNull();
    const snapshot = JSON.parse(readFileSync(path.join(dir, 'invocations', paused.id, 'snapshot.json'), 'utf8')) as { data: { value: string } };
    expect(snapshot.data.value).toBe('hibernated');
    const ls = JSON.parse((await weft(['ls', '--dir', dir, '--json'])).stdout) as Array<{ status: string }>;
    expect(ls[0]!.status).toBe('hibernated');
    const resumed = await weft(['resume', paused.id, '--dir', dir, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = JSON.parse(resumed.stdout) as RunJson;
    expect(done.status).toBe('completed');
    const reference = await runInWorkspace('travel', { dir: path.join(root, 'hibernate-ref') });
    expect(hashedParts(done.journal).slice(0, -1)).toEqual(hashedParts(reference.journal).slice(0, -1));
    expect(done.fingerprint).toBe(reference.fingerprint);
  });

  test('an existing id with another intent is refused, with what to do', async () => {
    const dir = path.join(root, 'conflict');
    expect((await runInWorkspace('travel', { dir, id: 'trip-1' })).status).toBe('completed');
    const clash = await weft(['run', 'travel', 'Take me to Porto instead', '--dir', dir, '--id', 'trip-1']);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/trip-1 already exists with a different intent or pin/);
    expect(clash.stderr).toMatch(/start with another id, or resume trip-1/);
  });

  test('bad command lines exit 2 with the usage', async () => {
    const r = await weft(['run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/usage: weft run <domain>/);
    // A domain that is not there is a command line to fix, like a usage error.
    const unknown = await weft(['run', 'nope', '--dir', path.join(root, 'x')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no domain named "nope": it is not a built-in \(travel\), not a file, and no package of that name is installed/);
  });

  test('a torn final record stops resume with what to do; --quarantine-torn keeps the bytes aside and finishes', async () => {
    const dir = path.join(root, 'torn');
    const paused = await runInWorkspace('travel', { dir, hibernate: true });
    const records = lines(paused.journal).length;
    appendFileSync(paused.journal, '{"body":{"step":0,"key":"half-writ'); // a crash in the middle of a write
    const refused = await weft(['resume', paused.id, '--dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`seq ${records}: torn final record`);
    expect(refused.stderr).toContain(`weft resume ${paused.id} --quarantine-torn`);
    const resumed = await weft(['resume', paused.id, '--dir', dir, '--quarantine-torn', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`quarantined the torn record at seq ${records}`);
    expect(JSON.parse(resumed.stdout).status).toBe('completed');
    expect(existsSync(`${paused.journal}.torn-${records}`)).toBe(true);
    expect(readFileSync(`${paused.journal}.torn-${records}`, 'utf8')).toBe('{"body":{"step":0,"key":"half-writ');
  });
});

