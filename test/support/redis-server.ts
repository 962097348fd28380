/**
 * A private redis-server for tests: a child process on a free port with its own temp directory,
 * never the machine's 127.0.0.1:6379. By default it runs as a journal store must (AOF on, fsync
 * on every write, no RDB snapshots); `args` adds or overrides settings (`--appendonly no`, …).
 *
 * `redisAvailable()` says whether `redis-server` is on PATH. Test files use `requireRedis()`:
 * without one, tests fail under CI (CI=true) and are skipped, loudly, elsewhere. Servers still
 * running when the test that started them ends are SIGKILLed (./children.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { spawnTracked } from './children.js';

export interface RedisServer {
  /** `redis://127.0.0.1:<port>/0` */
  url: string;
  port: number;
  /** The server's working directory (its append-only files). */
  dir: string;
  /** Shut down (SIGTERM), wait for the exit, and remove `dir`. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash would; `dir` is kept for `restart`. */
  kill(): Promise<void>;
  /** Start again on the same port and directory (SIGTERM first if still running); resolves when PING answers. */
  restart(): Promise<void>;
}

export interface StartRedisOptions {
  /** Default true: `--appendonly yes --appendfsync always`. False: the server's defaults (no AOF). */
  aof?: boolean;
  /** Extra command-line settings, after the defaults (so they override them). */
  args?: string[];
}

/** Whether `redis-server` is an executable on PATH. */
export function redisAvailable(): boolean {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, 'redis-server'), constants.X_OK);
      return true;
    } catch {
      /* next */
    }
  }
  return false;
}

export const NO_REDIS_MESSAGE = 'redis-server is not on PATH: the Redis store tests need it (apt-get install redis-server, brew install redis, or put a redis-server binary on PATH)';

/**
 * Whether the Redis tests can run. Without redis-server it returns false: under CI (CI=true) the
 * test file then registers a failing test (NO_REDIS_MESSAGE), so the suite cannot pass vacuously;
 * elsewhere this prints a loud notice and the tests are skipped.
 */
export function requireRedis(): boolean {
  if (redisAvailable()) return true;
  if (process.env.CI === 'true') return false;
  console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING the Redis store tests: ${NO_REDIS_MESSAGE}\n${'!'.repeat(78)}\n`);
  return false;
}

/** A port nobody listens on right now (bind 127.0.0.1:0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Spawn a private redis-server and wait until it answers PING. */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'weft-redis-'));
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--save', '',
    '--dir', dir,
    '--daemonize', 'no',
    ...(options.aof === false ? [] : ['--appendonly', 'yes', '--appendfsync', 'always']),
    ...(options.args ?? []),
  ];
  let child: ChildProcess | undefined;
  let output = '';

  const launch = async () => {
    output = '';
    const proc = spawnTracked('redis-server', args, { cwd: dir, label: `redis-server --port ${port}` });
    child = proc;
    proc.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000)));
    proc.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000)));
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));
    proc.once('error', () => (gone = true));
    const deadline = Date.now() + 60_000; // a loaded machine starts a server slowly
    while (!(await ping(port))) {
      if (gone) throw new Error(`redis-server ${args.join(' ')} exited before answering PING:\n${output}`);
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`redis-server on port ${port} did not answer PING within 60 s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  const end = async (signal: NodeJS.Signals) => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    await exited;
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    dir,
    stop: async () => {
      await end('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
    kill: () => end('SIGKILL'),
    restart: async () => {
      await end('SIGTERM');
      await launch();
    },
  };
}

/** True when a server on `port` answers PING with PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.once('end', () => done(false));
  });
}
