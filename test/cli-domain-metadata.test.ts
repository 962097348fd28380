/**
 * Which domain an invocation belongs to, in the distributed mode, every call its own process over a
 * private Redis (issue 19, point 3 in part): the runtime writes the domain's NAME and the pinned
 * library's digest into the store's metadata when it starts an invocation, and `replay`/`resume`
 * find the domain by it from any workspace — through the workspace's own record (which may hold a
 * module path), a built-in of that name, or the workspace's `domains.json` mapping — never by
 * importing a module the store names: whoever can write to Redis cannot make a process load code.
 *
 * Needs `redis-server` on PATH (under CI=true its absence fails; elsewhere skipped loudly) and the
 * build (`npm run build`).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const redisOk = requireRedis();
const root = mkdtempSync(path.join(tmpdir(), 'weft-domain-meta-'));
let server: RedisServer;
let admin: Redis;

beforeAll(async () => {
  if (!redisOk) return;
  assertBuilt();
  server = await startRedis({ aof: true });
  admin = new Redis(server.url);
});
afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

if (!redisOk && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const folder = (name: string) => {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};


describe.skipIf(!redisOk)('the domain of an invocation, from the store’s metadata', () => {
  const store = (prefix: string) => ['--redis', server.url, '--redis-prefix', prefix];

  test('replay --redis finds a module domain from the workspace that started it, from a domains.json mapping elsewhere, and otherwise says what to pass', async () => {
    const module = writeStrictTravelDomain(root, { version: 'strict-meta', limit: 100_000 });
    const started = await weft(['run', module, ...store('m1'), '--dispatch', 'in-process', '--dir', folder('m1-start'), '--json']);
    expect(started.code, started.stderr).toBe(0);
    const { id, fingerprint, publicKey } = JSON.parse(started.stdout.trim().split('\n').at(-1)!) as { id: string; fingerprint: string; publicKey: string };
    // What the store keeps beside the journal: the domain's name, the library's digest and the sealing key's id — no path.
    const meta = JSON.parse((await admin.get(`m1:{${id}}:meta`))!) as Record<string, string>;
    expect(Object.keys(meta).sort()).toEqual(['domain', 'library', 'sealKey']);
    expect(meta.domain).toBe('strict-travel');
    expect(meta.library).toMatch(/^[0-9a-f]{64}$/);
    expect(meta.sealKey).toBe((JSON.parse(readFileSync(publicKey, 'utf8')) as { keyId: string }).keyId);

    // The workspace that started it recorded its module: replay with Redis uses that record too.
    const here = await weft(['replay', id, ...store('m1'), '--dir', folder('m1-start'), '--json']);
    expect(here.code, here.stderr).toBe(0);
    expect(JSON.parse(here.stdout)).toMatchObject({ status: 'completed', fingerprint });

    // Another workspace: the store names the domain, which is neither a built-in nor mapped here.
    const elsewhere = folder('m1-elsewhere');
    const unmapped = await weft(['replay', id, ...store('m1'), '--dir', elsewhere, '--json']);
    expect(unmapped.code).not.toBe(0);
    const said = unmapped.stdout + unmapped.stderr; // --json: the refusal is the JSON line
    expect(said).toContain('belongs to domain strict-travel');
    expect(said).toContain(path.join(elsewhere, 'domains.json'));
    expect(said).toContain('--domain');

    // Mapped locally, it replays.
    writeFileSync(path.join(elsewhere, 'domains.json'), JSON.stringify({ 'strict-travel': module }));
    const mapped = await weft(['replay', id, ...store('m1'), '--dir', elsewhere, '--json']);
    expect(mapped.code, mapped.stderr).toBe(0);
    expect(JSON.parse(mapped.stdout)).toMatchObject({ status: 'completed', fingerprint });
  });

  test('metadata written into Redis by someone else cannot make replay import code: neither a name that is a file or package here, nor a path', async () => {
    const started = await weft(['run', 'travel', ...store('m2'), '--dispatch', 'in-process', '--dir', folder('m2-start'), '--json']);
    expect(started.code, started.stderr).toBe(0);
    const { id } = JSON.parse(started.stdout.trim().split('\n').at(-1)!) as { id: string };
    const library = (JSON.parse((await admin.get(`m2:{${id}}:meta`))!) as { library: string }).library;

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
      await admin.set(`m2:{${id}}:meta`, JSON.stringify({ domain, library }));
      const r = await weft(['replay', id, ...store('m2'), '--dir', folder(`m2-other-${domain.length}`), '--json'], {}, cwd);
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
