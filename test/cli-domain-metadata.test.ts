/**
 * Which domain an invocation belongs to, in the distributed mode, over a private Redis (issue 19,
 * point 3 in part): the runtime writes the domain's NAME and the pinned library's digest into the
 * store's metadata when it starts an invocation, and `replay`/`resume` find the domain by it from
 * any workspace — through the workspace's own record (which may hold a module path), a built-in of
 * that name, or the workspace's `domains.json` mapping — never by importing a module the store
 * names: whoever can write to Redis cannot make a process load code.
 *
 * The runs are made in-process as `weft run --redis … --dispatch in-process --dir D` makes them, and
 * the replays that find their domain are made in-process as `weft replay ID --redis … --dir D` makes
 * them (test/support/runs-here.ts); `weft replay` runs as a process where what it prints is
 * tested (the domain not found: what to pass) and where the folder it runs from is the subject
 * (metadata naming a file or a package there must not be imported). One private Redis for the file
 * (test/support/file-redis.ts), a key prefix per test.
 *
 * Needs `redis-server` on PATH (under CI=true its absence fails; elsewhere skipped loudly) and the
 * build (`npm run build`).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { fileRedis } from './support/file-redis.js';
import { keyPair } from './support/journals-here.js';
import { replayById, runOnRedis } from './support/runs-here.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';

const redis = fileRedis({ aof: true });
const root = mkdtempSync(path.join(tmpdir(), 'weft-domain-meta-'));
beforeAll(() => {
  if (redis.available) assertBuilt();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const folder = (name: string) => {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};


describe.skipIf(!redis.available)('the domain of an invocation, from the store’s metadata', () => {
  const store = (prefix: string) => ['--redis', redis.url, '--redis-prefix', prefix];

  test('replay --redis finds a module domain from the workspace that started it, from a domains.json mapping elsewhere, and otherwise says what to pass', async () => {
    const m1 = redis.freshPrefix('m1');
    const module = writeStrictTravelDomain(root, { version: 'strict-meta', limit: 100_000 });
    const { key } = await keyPair(folder('m1-keys'));
    const { id, status, fingerprint, publicKey } = await runOnRedis(module, { dir: folder('m1-start'), redis: redis.url, prefix: m1, dispatch: 'in-process', signingKey: key });
    expect(status).toBe('completed');
    // What the store keeps beside the journal: the domain's name, the library's digest and the sealing key's id — no path.
    const meta = JSON.parse((await redis.admin.get(`${m1}:{${id}}:meta`))!) as Record<string, string>;
    expect(Object.keys(meta).sort()).toEqual(['domain', 'library', 'sealKey']);
    expect(meta.domain).toBe('strict-travel');
    expect(meta.library).toMatch(/^[0-9a-f]{64}$/);
    expect(meta.sealKey).toBe((JSON.parse(readFileSync(publicKey, 'utf8')) as { keyId: string }).keyId);

    // The workspace that started it recorded its module: replay with Redis uses that record too.
    expect(await replayById(id, { dir: folder('m1-start'), redis: redis.url, prefix: m1, generateKey: false })).toMatchObject({ status: 'completed', fingerprint });

    // Another workspace: the store names the domain, which is neither a built-in nor mapped here.
    const elsewhere = folder('m1-elsewhere');
    const unmapped = await weft(['replay', id, ...store(m1), '--dir', elsewhere, '--json']);
    expect(unmapped.code).not.toBe(0);
    const said = unmapped.stdout + unmapped.stderr; // --json: the refusal is the JSON line
    expect(said).toContain('belongs to domain strict-travel');
    expect(said).toContain(path.join(elsewhere, 'domains.json'));
    expect(said).toContain('--domain');

    // Mapped locally, it replays.
    writeFileSync(path.join(elsewhere, 'domains.json'), JSON.stringify({ 'strict-travel': module }));
    expect(await replayById(id, { dir: elsewhere, redis: redis.url, prefix: m1, generateKey: false })).toMatchObject({ status: 'completed', fingerprint });
  });

  test('metadata written into Redis by someone else cannot make replay import code: neither a name that is a file or package here, nor a path', async () => {
    const m2 = redis.freshPrefix('m2');
    const { key } = await keyPair(folder('m2-keys'));
    const started = await runOnRedis('travel', { dir: folder('m2-start'), redis: redis.url, prefix: m2, dispatch: 'in-process', signingKey: key });
    expect(started.status).toBe('completed');
    const { id } = started;
    const library = (JSON.parse((await redis.admin.get(`${m2}:{${id}}:meta`))!) as { library: string }).library;

    // A folder where `pwned` is both a file and an installed package, each of which leaves a mark when imported.
    const cwd = folder('m2-cwd');
    const marker = path.join(root, 'imported');
    const evil = `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, 'imported'); export default {};\n`;
    writeFileSync(path.join(cwd, 'pwned'), evil);
    writeFileSync(path.join(cwd, 'pwned.js'), evil);
    mkdirSync(path.join(cwd, 'node_modules', 'pwned'), { recursive: true });
    writeFileSync(path.join(cwd, 'node_modules', 'pwned', 'package.json'), JSON.stringify({ name: 'pwned', type: 'module', main: 'index.js' }));
    writeFileSync(path.join(cwd, 'node_modules', 'pwned', 'index.js'), evil);

    for (const domain of ['pwned', './pwned.js', path.join(cwd, 'pwned.js')]) {
      await redis.admin.set(`${m2}:{${id}}:meta`, JSON.stringify({ domain, library }));
      const r = await weft(['replay', id, ...store(m2), '--dir', folder(`m2-other-${domain.length}`), '--json'], {}, cwd);
      expect(existsSync(marker), `metadata naming ${domain} made replay import it`).toBe(false);
      if (domain === 'pwned') {
        expect(r.code).not.toBe(0);
        expect(r.stdout + r.stderr).toContain('domain pwned, which is not a built-in and not mapped');
      } else {
        // Not a domain name: the metadata reads as none, and the pinned library's name finds the built-in.
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed' });
      }
    }
  });
});
