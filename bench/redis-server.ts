/**
 * A private redis-server for the `redis` bench suite (the tests' helper lives under test/, which
 * the build leaves out): a child process on a free 127.0.0.1 port with its own temp directory, run
 * as a journal store must be (AOF on, fsync on every write, no RDB snapshots). `stop()` shuts it
 * down and removes the directory; a server still running when the process exits is SIGKILLed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface BenchRedisServer {
  url: string;
  port: number;
  dir: string;
  /** The command line it was started with (for the report). */
  args: string[];
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function freePort(): Promise<number> {
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

/** Spawn `redis-server --port <free> --save '' --appendonly yes --appendfsync always --dir <tmp>` and wait for PING. */
export async function startBenchRedis(): Promise<BenchRedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir, '--daemonize', 'no'];
  let output = '';
  const child = spawn('redis-server', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000)));
  let gone = false;
  let spawnError: Error | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      gone = true;
      resolve();
    }),
  );
  child.once('error', (err) => {
    spawnError = err;
    gone = true;
  });
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const deadline = Date.now() + 15_000;
  while (!(await ping(port))) {
    if (gone) {
      cleanup();
      throw new Error(spawnError ? `cannot start redis-server (${spawnError.message}): install it (apt-get install redis-server) or pass --url redis://…` : `redis-server ${args.join(' ')} exited before answering PING:\n${output}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      cleanup();
      throw new Error(`redis-server on port ${port} did not answer PING within 15 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    dir,
    args: ['redis-server', ...args],
    stop: async () => {
      if (!gone) {
        child.kill('SIGTERM');
        await exited;
      }
      cleanup();
    },
  };
}

/** The server's own CPU so far (user + system, ms), from INFO cpu. */
export async function serverCpuMs(client: Redis): Promise<number> {
  const text = await client.info('cpu');
  const get = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(text)?.[1] ?? 0);
  return (get('used_cpu_sys') + get('used_cpu_user')) * 1000;
}

/** The server's version and AOF settings, for the report. */
export async function aofSettings(client: Redis): Promise<string> {
  try {
    const reply = (await client.call('CONFIG', 'GET', 'append*')) as string[];
    const conf = new Map<string, string>();
    for (let i = 0; i + 1 < reply.length; i += 2) conf.set(reply[i]!, reply[i + 1]!);
    const version = /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? '?';
    return `redis ${version}: appendonly ${conf.get('appendonly') ?? '?'}, appendfsync ${conf.get('appendfsync') ?? '?'}`;
  } catch (err) {
    return `CONFIG GET refused (${(err as Error).message}): AOF settings unknown`;
  }
}
