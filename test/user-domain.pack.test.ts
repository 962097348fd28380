/**
 * A user's project, outside the repo: `weft` installed from the tarball `npm pack` makes (not a
 * path into the source), the helpdesk domain copied from its page in the manual (docs/domains.md,
 * "A complete domain: helpdesk"; the README shows it abridged), and the
 * commands a user types — run, run --hibernate then resume in a new process, replay, verify.
 * Then the dual-package case: the repo's own CLI runs a domain that imports ITS OWN copy of weft
 * (the installed one), and a permanent ActuatorError thrown there is still classed permanent.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, repoRoot, runNode, weft as repoWeft, type CliResult } from './support/cli.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-user-project-'));
const project = path.join(root, 'project');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The manual's complete domain file: the ```js block of docs/domains.md that starts with `// helpdesk-domain.js`. */
function manualDomain(): string {
  const page = readFileSync(path.join(repoRoot, 'docs', 'domains.md'), 'utf8');
  const block = /```js\n(\/\/ helpdesk-domain\.js[\s\S]*?)```/.exec(page);
  if (!block) throw new Error('docs/domains.md has no ```js block starting with "// helpdesk-domain.js"');
  return block[1]!;
}

/** The installed `weft` bin of the user's project, as `npx weft` would run it. */
const weft = (args: string[]): Promise<CliResult> => runNode(path.join(project, 'node_modules', 'weft', 'dist', 'cli', 'main.js'), args, {}, project);

const json = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { id: string; status: string; fingerprint: string; journal: string; publicKey: string };

beforeAll(() => {
  assertBuilt();
  mkdirSync(project);
  const packs = path.join(root, 'packs');
  mkdirSync(packs);
  // npm test built dist/ already; --ignore-scripts skips the prepare build.
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', packs], { cwd: repoRoot, stdio: 'pipe' });
  const tarball = path.join(packs, readdirSync(packs).find((f) => f.endsWith('.tgz'))!);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'my-helpdesk', private: true, type: 'module' }));
  execFileSync('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, stdio: 'pipe' });
  writeFileSync(path.join(project, 'helpdesk-domain.js'), manualDomain());
}, 240_000);

describe("a user's own domain, from the manual, with weft installed from its tarball", () => {
  test('docs/domains.md shows the helpdesk domain exactly as examples/helpdesk has it', () => {
    expect(manualDomain()).toBe(readFileSync(path.join(repoRoot, 'examples', 'helpdesk', 'helpdesk-domain.js'), 'utf8'));
  });

  test('weft run, run --hibernate + resume, replay and verify, from the project folder', async () => {
    const whole = await weft(['run', './helpdesk-domain.js', '--seed', '2', '--dir', '.weft-whole', '--json']);
    expect(whole.code, whole.stderr).toBe(0);
    expect(json(whole)).toMatchObject({ status: 'completed' });

    const paused = await weft(['run', './helpdesk-domain.js', '--seed', '2', '--hibernate', '--json']);
    expect(paused.code, paused.stderr).toBe(0);
    const { id } = json(paused);
    expect(json(paused).status).toBe('hibernated');
    const resumed = await weft(['resume', id, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = json(resumed);
    expect(done).toMatchObject({ id, status: 'completed', fingerprint: json(whole).fingerprint });

    const replayed = await weft(['replay', id, '--json']);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(json(replayed).fingerprint).toBe(done.fingerprint);

    const verified = await weft(['verify', done.journal, '--public-key', done.publicKey]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toContain('signature valid');
  });

  test('a permanent ActuatorError from the domain\'s own copy of weft is classed permanent by another copy', async () => {
    writeFileSync(
      path.join(project, 'closed-shop.js'),
      `import { ActuatorError, defineDomain, htn, ScriptedModel, z } from 'weft';
const library = new htn.LibraryBuilder('closed-shop').task('order').operator('place_order', { actuator: { actuator: 'shop.order', args: {} } })
  .method('just-order', { task: ['order'], subtasks: [['place_order']] }).build();
const world = { objects: [], facts: [] };
export default defineDomain({
  name: 'closed-shop', libraries: [library], observe: 'shop.observe', asOf: '2026-06-01T09:00:00Z', intent: 'order something',
  actuators: [
    { name: 'shop.observe', kind: 'state', readOnly: true, argsSchema: z.any(), resultSchema: z.any(), run: async () => world },
    { name: 'shop.order', kind: 'tool', readOnly: false, argsSchema: z.object({}), resultSchema: z.any(),
      run: async () => { throw new ActuatorError('shop.closed', 'permanent', 'the shop is closed for good'); } },
  ],
  model: new ScriptedModel({ model: 'shop', entries: [
    { match: { epoch: 1 }, reply: { goal: { task: 'order', args: [] } } },
    { match: { epoch: 2 }, reply: { done: true, summary: 'the shop is closed' } },
  ] }),
});
`,
    );
    // The repo's CLI (one copy of weft) loads a module that imports the installed copy (another).
    const r = await repoWeft(['run', path.join(project, 'closed-shop.js'), '--dir', path.join(root, 'shop'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const records = readFileSync(json(r).journal, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; body: Record<string, unknown> });
    const failed = records.filter((x) => x.kind === 'step.failed').map((x) => x.body);
    expect(failed).toEqual([expect.objectContaining({ attempt: 1, class: 'permanent', code: 'shop.closed' })]);
  });
});
