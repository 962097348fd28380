/**
 * The travel providers' state backends (examples/travel/state.ts): the file backend keeps every
 * ledger entry when several processes update one invocation at once (its lock file), breaks a lock
 * whose holder died and waits for a live one; the Redis backend keeps every entry when two clients
 * update at once (compare-and-set, retried), seeds a world once, and keeps the file's bytes; an
 * effect re-run after a conflict draws the same numbers; and the travel domain gives the same
 * fingerprint — and the same world, byte for byte — over a state file, over Redis, and over a
 * backend that re-runs every change.
 *
 * The Redis half needs `redis-server` on PATH (a private server on a free port): under CI (CI=true)
 * its absence fails the file; elsewhere those tests are skipped with a loud notice. The
 * multi-process tests import the compiled dist/ (`npm run build`, which `npm test` runs first).
 */
import { spawnTracked } from './support/children.js';
import { existsSync, mkdtempSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Actuator } from '../actors/actuator.js';
import { createRandom } from '../actors/random.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { createRuntime } from '../runtime/index.js';
import { travelActuators } from '../examples/travel/app.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import {
  effectCounts, fileStateBackend, initialTravelState, lockFileOf, readTravelState, redisStateBackend, replayableRandom, serializeTravelState,
  travelStateKey, type TravelState, type TravelStateBackend,
} from '../examples/travel/state.js';
import { repoRoot, runNode } from './support/cli.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const distState = join(repoRoot, 'dist', 'examples', 'travel', 'state.js');
const scratch = (name: string) => mkdtempSync(join(tmpdir(), `weft-travel-${name}-`));
const entry = (actuator: string, result: number) => ({ actuator, attempts: 1, applied: 1, result });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function assertDistBuilt(): void {
  if (!existsSync(distState)) throw new Error(`${distState} is missing: run "npm run build" (npm test does it first)`);
}

/** A pid that is certainly dead now: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawnTracked(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true), () => (settled = true));
  await sleep(ms);
  return settled;
}

/** A backend that runs every change once on a throwaway copy first, as a lost compare-and-set would. */
function conflicting(inner: TravelStateBackend): TravelStateBackend & { reruns: number } {
  const wrapped = {
    reruns: 0,
    read: (invocation: string) => inner.read(invocation),
    async update<R>(invocation: string, change: (state: TravelState) => R) {
      try {
        change(await inner.read(invocation));
      } catch {
        /* the real run will throw it too */
      }
      wrapped.reruns += 1;
      return inner.update(invocation, change);
    },
  };
  return wrapped;
}

describe('the file backend', () => {
  test('4 processes × 50 updates of one invocation at once: all 200 ledger entries, no lock or temp file left', async () => {
    assertDistBuilt();
    const dir = scratch('contend');
    const script = join(dir, 'worker.mjs');
    writeFileSync(script, [
      `import { existsSync, writeFileSync } from 'node:fs';`,
      `import { join } from 'node:path';`,
      `import { fileStateBackend } from ${JSON.stringify(pathToFileURL(distState).href)};`,
      `const [dir, worker, count] = process.argv.slice(2);`,
      `const backend = fileStateBackend((invocation) => join(dir, invocation, 'providers.json'));`,
      // A start line, so the four really contend instead of finishing one after another.
      `writeFileSync(join(dir, 'ready-' + worker), '');`,
      `while (!existsSync(join(dir, 'go'))) await new Promise((r) => setTimeout(r, 2));`,
      `for (let i = 0; i < Number(count); i++) {`,
      `  await backend.update('shared', (s) => {`,
      `    s.ledger['w' + worker + '.' + i] = { actuator: 'w' + worker, attempts: 1, applied: 1, result: i };`,
      `    s.faults.flaky.total = (s.faults.flaky.total ?? 0) + 1;`,
      `  });`,
      `}`,
    ].join('\n'));
    const workers = [0, 1, 2, 3];
    const runs = Promise.all(workers.map((w) => runNode(script, [dir, String(w), '50'])));
    while (workers.some((w) => !existsSync(join(dir, `ready-${w}`)))) await sleep(5);
    writeFileSync(join(dir, 'go'), '');
    for (const run of await runs) expect(run, run.stderr).toMatchObject({ code: 0 });

    const file = join(dir, 'shared', 'providers.json');
    const state = readTravelState(file);
    const expected = workers.flatMap((w) => Array.from({ length: 50 }, (_, i) => `w${w}.${i}`));
    expect(Object.keys(state.ledger).sort()).toEqual(expected.sort());
    expect(state.faults.flaky.total).toBe(200);
    for (const w of workers) for (let i = 0; i < 50; i++) expect(state.ledger[`w${w}.${i}`]).toEqual(entry(`w${w}`, i));
    expect(readdirSync(join(dir, 'shared'))).toEqual(['providers.json']);
    expect(readFileSync(file, 'utf8')).toBe(serializeTravelState(state));
  });

  test('concurrent updates in one process lose nothing either', async () => {
    const dir = scratch('inproc');
    const backend = fileStateBackend((inv) => join(dir, inv, TRAVEL_STATE_FILE));
    await Promise.all(Array.from({ length: 40 }, (_, i) => backend.update('inv', (s) => void (s.ledger[`k${i}`] = entry('x', i)))));
    expect(Object.keys((await backend.read('inv')).ledger)).toHaveLength(40);
  });

  test('a lock whose holder is dead is broken; a live holder is waited for; a lock held too long times out', async () => {
    const dir = scratch('stale');
    const file = join(dir, 'inv', TRAVEL_STATE_FILE);
    const backend = fileStateBackend(() => file);
    await backend.read('inv'); // seeds
    const lock = lockFileOf(file);

    writeFileSync(lock, JSON.stringify({ pid: await deadPid(), host: hostname(), token: 'dead' }));
    await backend.update('inv', (s) => void (s.ledger.a = entry('x', 1)));
    expect(existsSync(lock)).toBe(false);

    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), token: 'alive' }));
    const waiting = backend.update('inv', (s) => void (s.ledger.b = entry('x', 2)));
    expect(await settlesWithin(waiting, 200)).toBe(false);
    expect(readTravelState(file).ledger.b).toBeUndefined();
    unlinkSync(lock); // the holder releases it
    await waiting;
    expect(Object.keys(readTravelState(file).ledger)).toEqual(['a', 'b']);

    // A live holder, or one on another host (whose pid we cannot check), is never broken.
    const impatient = fileStateBackend(() => file, { lockTimeoutMs: 100 });
    for (const holder of [{ pid: process.pid, host: hostname() }, { pid: await deadPid(), host: `not-${hostname()}` }]) {
      writeFileSync(lock, JSON.stringify({ ...holder, token: 't' }));
      await expect(impatient.update('inv', (s) => void (s.ledger.c = entry('x', 3)))).rejects.toThrow(/could not lock .*providers\.json\.lock within 100 ms/);
      unlinkSync(lock);
    }
    expect(readTravelState(file).ledger.c).toBeUndefined();
  });

  test('read seeds the world once, in the file format; a change that throws writes nothing', async () => {
    const dir = scratch('seed');
    const initial = initialTravelState();
    initial.traveller.name = 'Rui';
    const backend = fileStateBackend((inv) => join(dir, inv, TRAVEL_STATE_FILE), { initialState: initial });
    const file = join(dir, 'inv', TRAVEL_STATE_FILE);
    expect(existsSync(file)).toBe(false); // building a backend writes nothing
    const [a, b] = await Promise.all([backend.read('inv'), backend.read('inv')]);
    expect(a).toEqual(initial);
    expect(b).toEqual(initial);
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(initial, null, 2)}\n`);
    await backend.update('inv', (s) => void (s.ledger.k = entry('x', 1)));
    const before = readFileSync(file, 'utf8');
    await expect(backend.update('inv', (s) => {
      s.ledger.gone = entry('x', 2);
      throw new Error('refused');
    })).rejects.toThrow('refused');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect((await backend.read('inv')).ledger.k).toEqual(entry('x', 1)); // not re-seeded
    const { state, result } = await backend.update('inv', (s) => Object.keys(s.ledger).length);
    expect(result).toBe(1);
    expect(state).toEqual(readTravelState(file));
  });
});

describe('an effect run again after a conflict', () => {
  test('the replayable random is ctx.random draw for draw, and every view replays the same draws', () => {
    const live = createRandom('seed-1', 'inv.2.0');
    const views = replayableRandom(createRandom('seed-1', 'inv.2.0'));
    const first = views();
    const drawn = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? first.stream('a').next() : first.stream(i % 2 ? 'a' : 'b').int(32)));
    const expected = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? live.stream('a').next() : live.stream(i % 2 ? 'a' : 'b').int(32)));
    expect(drawn).toEqual(expected);
    const again = views();
    expect(Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? again.stream('a').next() : again.stream(i % 2 ? 'a' : 'b').int(32)))).toEqual(expected);
    expect(() => again.stream('a').int(0)).toThrow(RangeError);
  });
});

// ── end to end on the runtime ───────────────────────────────────────────────────────────────

const signingKey = signingKeyFromSecret(new Uint8Array(32).fill(7));
const START = { tenant: 't1', seed: 1, asOf: travelDomain.asOf! };

/** The travel domain run on a MemoryStore: over the domain's own actuators (state folder) or `actuators`. */
async function runTravel(over: { stateDir: string } | { actuators: Actuator[] }) {
  const runtime = createRuntime({ store: new MemoryStore(), domain: travelDomain, ...over, signingKey, sleep: async () => undefined });
  const handle = await runtime.start(travelDomain.intent!, START);
  const result = await handle.done;
  expect(result.status).toBe('completed');
  const replayed = await runtime.replay(handle.id);
  expect(replayed.fingerprint).toBe(result.fingerprint);
  return { id: handle.id, fingerprint: result.fingerprint! };
}

describe('the travel domain over each backend', () => {
  test('the embedded default, an explicit file backend and a backend that re-runs every change give one fingerprint and one world', async () => {
    const embeddedDir = scratch('e2e-default');
    const embedded = await runTravel({ stateDir: embeddedDir });
    const fileDir = scratch('e2e-file');
    const file = await runTravel({ actuators: travelActuators({ state: fileStateBackend((inv) => join(fileDir, inv, TRAVEL_STATE_FILE)) }) });
    const rerunDir = scratch('e2e-rerun');
    const rerunning = conflicting(fileStateBackend((inv) => join(rerunDir, inv, TRAVEL_STATE_FILE)));
    const rerun = await runTravel({ actuators: travelActuators({ state: rerunning }) });
    expect(rerunning.reruns).toBe(9);

    expect(file).toEqual(embedded);
    expect(rerun).toEqual(embedded);
    const world = readFileSync(join(embeddedDir, embedded.id, TRAVEL_STATE_FILE), 'utf8');
    expect(readFileSync(join(fileDir, file.id, TRAVEL_STATE_FILE), 'utf8')).toBe(world);
    expect(readFileSync(join(rerunDir, rerun.id, TRAVEL_STATE_FILE), 'utf8')).toBe(world);
    expect(effectCounts(join(embeddedDir, embedded.id, TRAVEL_STATE_FILE))).toMatchObject({ attempts: 9, applied: 9 });
  });

  test('the domain needs a state folder only without a Redis', () => {
    expect(() => travelDomain.actuators({ get stateDir(): string { throw new Error('no state folder') } })).toThrow('no state folder');
    // With a Redis it builds without the folder — and connects to nothing until an actuator runs.
    const actuators = travelDomain.actuators({ get stateDir(): string { throw new Error('no state folder') }, redis: { url: 'redis://127.0.0.1:1/0', prefix: 'weft' } });
    expect(actuators.map((a) => a.name)).toContain('travel.observe');
  });
});

// ── Redis ──────────────────────────────────────────────────────────────────────────────────

const redisOk = requireRedis();
let server: RedisServer;
let raw: Redis;
let prefixes = 0;
const freshPrefix = () => `tp${++prefixes}`;

beforeAll(async () => {
  if (!redisOk) return;
  server = await startRedis({ aof: false });
  raw = new Redis(server.url);
});
afterAll(async () => {
  await raw?.quit();
  await server?.stop();
});

if (!redisOk && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

describe.skipIf(!redisOk)('the Redis backend', () => {
  test('two backends on two clients updating one invocation at once lose nothing (conflicts are retried)', async () => {
    const prefix = freshPrefix();
    const own = redisStateBackend({ url: server.url, prefix });
    const client = new Redis(server.url);
    const lent = redisStateBackend({ client, prefix });
    let runs = 0;
    const add = (backend: TravelStateBackend, name: string, i: number) =>
      backend.update('inv-1', (s) => {
        runs += 1;
        s.ledger[`${name}.${i}`] = entry(name, i);
        s.faults.flaky.total = (s.faults.flaky.total ?? 0) + 1;
        return s.faults.flaky.total;
      });
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => [add(own, 'a', i), add(lent, 'b', i)]).flat());
    expect(runs).toBeGreaterThan(200); // there were conflicts, and they were run again
    expect(results.map((r) => r.result).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));

    const state = await lent.read('inv-1');
    expect(Object.keys(state.ledger)).toHaveLength(200);
    for (let i = 0; i < 100; i++) {
      expect(state.ledger[`a.${i}`]).toEqual(entry('a', i));
      expect(state.ledger[`b.${i}`]).toEqual(entry('b', i));
    }
    expect(state.faults.flaky.total).toBe(200);
    // The key layout, holding the very bytes the state file would.
    expect(own.key('inv-1')).toBe(`${prefix}:travel:{inv-1}:providers`);
    expect(await raw.get(travelStateKey(prefix, 'inv-1'))).toBe(serializeTravelState(state));

    await own.close();
    await lent.close();
    expect(await client.ping()).toBe('PONG'); // a lent client stays open
    await client.quit();
    await expect(own.read('inv-1')).rejects.toThrow(/after close/);
  });

  test('read seeds the initial world once: concurrent first readers agree, later reads see updates', async () => {
    const prefix = freshPrefix();
    const initial = initialTravelState();
    initial.conference.day = 13;
    const a = redisStateBackend({ url: server.url, prefix, initialState: initial });
    const b = redisStateBackend({ client: raw, prefix, initialState: initialTravelState() });
    expect(await raw.exists(travelStateKey(prefix, 'inv'))).toBe(0);
    const worlds = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? b : a).read('inv')));
    // Whoever seeded first, everyone sees that one world.
    for (const w of worlds) expect(w).toEqual(worlds[0]);
    const stored = await raw.get(travelStateKey(prefix, 'inv'));
    expect(stored).toBe(serializeTravelState(worlds[0]!));

    await a.update('inv', (s) => void (s.ledger.k = entry('x', 1)));
    expect((await b.read('inv')).ledger.k).toEqual(entry('x', 1)); // not seeded again
    // A change that throws writes nothing; one that changes nothing writes nothing.
    const before = await raw.get(travelStateKey(prefix, 'inv'));
    await expect(b.update('inv', (s) => {
      s.ledger.gone = entry('x', 2);
      throw new Error('refused');
    })).rejects.toThrow('refused');
    expect(await b.update('inv', (s) => s.ledger.k?.result)).toMatchObject({ result: 1 });
    expect(await raw.get(travelStateKey(prefix, 'inv'))).toBe(before);
    await a.close();
  });

  test('a backend connects lazily: building and closing an unused one touches no server', async () => {
    const unused = redisStateBackend({ url: 'redis://127.0.0.1:1/0', prefix: 'p' });
    await unused.close();
    expect(() => redisStateBackend({ url: server.url, prefix: 'bad{prefix}' })).toThrow(TypeError);
    const backend = redisStateBackend({ url: server.url, prefix: 'p' });
    await expect(backend.read('a{b}')).rejects.toThrow(/braces/);
    await backend.close();
  });

  test('an idle client it created does not keep a finished process alive', async () => {
    assertDistBuilt();
    const dir = scratch('exit');
    const script = join(dir, 'once.mjs');
    const prefix = freshPrefix();
    writeFileSync(script, [
      `import { redisStateBackend } from ${JSON.stringify(pathToFileURL(distState).href)};`,
      `const backend = redisStateBackend({ url: process.argv[2], prefix: process.argv[3] });`,
      `const { result } = await backend.update('inv', (s) => { s.ledger.child = { actuator: 'x', attempts: 1, applied: 1 }; return 'done'; });`,
      `console.log(result); // no close(): the process must still end`,
    ].join('\n'));
    const run = await runNode(script, [server.url, prefix]);
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: 'done\n' });
    expect(JSON.parse((await raw.get(travelStateKey(prefix, 'inv')))!).ledger.child).toBeDefined();
  });

  test('the travel domain over Redis: the fingerprint and the world of the embedded default', async () => {
    const embeddedDir = scratch('e2e-default-r');
    const embedded = await runTravel({ stateDir: embeddedDir });
    const prefix = freshPrefix();
    const backend = redisStateBackend({ url: server.url, prefix });
    const overRedis = await runTravel({ actuators: travelActuators({ state: backend }) });
    expect(overRedis).toEqual(embedded);
    const world = await raw.get(travelStateKey(prefix, overRedis.id));
    expect(world).toBe(readFileSync(join(embeddedDir, embedded.id, TRAVEL_STATE_FILE), 'utf8'));
    expect(effectCounts(JSON.parse(world!) as TravelState)).toMatchObject({ attempts: 9, applied: 9 });
    await backend.close();

    // The domain's own factory picks Redis when the runtime has one (and never asks for a state folder).
    const domainPrefix = freshPrefix();
    const actuators = travelDomain.actuators({ get stateDir(): string { throw new Error('no state folder') }, redis: { url: server.url, prefix: domainPrefix } });
    const viaDomain = await runTravel({ actuators });
    expect(viaDomain).toEqual(embedded);
    expect(await raw.get(travelStateKey(domainPrefix, viaDomain.id))).toBe(world);
  });
});
