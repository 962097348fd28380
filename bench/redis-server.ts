/**
 * The one private redis-server launcher, for the benches and the tests alike: a child process on a
 * free 127.0.0.1 port with its own temp directory, never the machine's 127.0.0.1:6379. By default it
 * runs as a journal store must (AOF on, fsync on every write, no RDB snapshots); `args` adds or
 * overrides settings (`--appendonly no`, `--requirepass …`, `--aclfile …`).
 *
 * It lives in bench/ because the build compiles bench/ (into dist/bench, which the package leaves
 * out) and test/ can import it too, while test/ itself is never built; so it imports nothing of
 * test/. How the process is spawned is passed in: the benches use plain `spawn`, the tests
 * `spawnTracked` (test/support/redis-server.ts), which kills whatever outlives its test. Either way
 * a server still running when this process exits is SIGKILLed.
 *
 * `stop()` shuts it down and removes its directory; `kill()` is a crash (the directory kept), and
 * `restart()` starts it again on the same port and directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PrivateRedis {
  /** `redis://127.0.0.1:<port>/0` */
  url: string;
  port: number;
  /** The server's working directory (its append-only files). */
  dir: string;
  /** The command line it runs (for a report). */
  args: string[];
  /** Shut down (SIGTERM), wait for the exit, and remove `dir`. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash would; `dir` is kept for `restart`. */
  kill(): Promise<void>;
  /** Start again on the same port and directory (SIGTERM first if still running); resolves when PING answers. */
  restart(): Promise<void>;
}

/** Starts the server's process: stdin ignored, stdout and stderr piped (they are kept for the error a failed start reports). */
export type SpawnServer = (command: string, args: readonly string[], options: { cwd: string; label: string }) => ChildProcess;

export interface PrivateRedisOptions {
  /** Default true: `--appendonly yes --appendfsync always`. False: the server's defaults (no AOF). */
  aof?: boolean;
  /** Extra command-line settings, after the defaults (so they override them). */
  args?: string[];
  /** How to spawn it (default: plain `spawn`). */
  spawn?: SpawnServer;
  /** What else a user can do when redis-server cannot be started at all, for the error (a bench: `pass --url redis://…`). */
  orElse?: string;
}

/** A server may take this long to answer its first PING: a loaded machine starts one slowly. */
const READY_WITHIN_MS = 60_000;

const plainSpawn: SpawnServer = (command, args, { cwd }) => spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

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
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
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
  const spawnServer = options.spawn ?? plainSpawn;
  let child: ChildProcess | undefined;

  const launch = async () => {
    let output = '';
    const proc = spawnServer('redis-server', args, { cwd: dir, label: `redis-server --port ${port}` });
    child = proc;
    running.add(proc);
    proc.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000)));
    proc.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000)));
    let gone = false;
    let spawnError: Error | undefined;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    void exited.then(() => {
      running.delete(proc);
      gone = true;
    });
    proc.once('error', (err) => {
      running.delete(proc);
      spawnError = err;
      gone = true;
    });
    const deadline = Date.now() + READY_WITHIN_MS;
    while (!(await ping(port))) {
      if (spawnError) throw new Error(`cannot start redis-server (${spawnError.message}): install it (apt-get install redis-server, brew install redis) or put a redis-server binary on PATH${options.orElse ? `, or ${options.orElse}` : ''}`);
      if (gone) throw new Error(`redis-server ${args.join(' ')} exited before answering PING:\n${output}`);
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        await exited;
        throw new Error(`redis-server on port ${port} did not answer PING within ${READY_WITHIN_MS / 1000} s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  const end = async (signal: NodeJS.Signals) => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    await exited;
  };

  try {
    await launch();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    dir,
    args: ['redis-server', ...args],
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
