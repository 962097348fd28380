/**
 * The CLI's flush on exit is bounded (telemetry/cli-tracing.ts): `weft run --otel` against an OTLP
 * endpoint that accepts the connection and never answers still exits, with the run's result what it
 * is untraced (same status, same fingerprint). The 60 s limit is a hang guard, not a timing claim:
 * the flush gives up after 2 s and the exporter's own request is not allowed to hold the process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft, type CliResult } from './support/cli.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-otel-flush-'));
const INTENT = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const RUN = ['run', 'travel', INTENT, '--seed', '7', '--as-of', '2026-06-01T09:00:00Z', '--json'];
const ENV = { WEFT_REDIS_URL: '', WEFT_SIGNING_KEY: '', WEFT_DEBUG: '', WEFT_OTEL: '' };

/** Accepts every connection, reads what comes, never writes a byte back. */
let silent: Server;
const sockets = new Set<Socket>();
let port = 0;
let connections = 0;

beforeAll(async () => {
  assertBuilt();
  silent = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  port = (silent.address() as { port: number }).port;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

/** `weft …`, killed if it has not exited within `limitMs` (then `hung` is true). */
async function bounded(args: string[], env: Record<string, string>, limitMs: number): Promise<CliResult & { hung: boolean }> {
  let hung = false;
  let timer: NodeJS.Timeout | undefined;
  const run = weft(args, env);
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      hung = true;
      reject(new Error(`weft ${args[0]} did not exit within ${limitMs} ms`));
    }, limitMs);
  });
  try {
    return { ...(await Promise.race([run, guard])), hung };
  } finally {
    clearTimeout(timer);
  }
}

const last = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { status?: string; fingerprint?: string };

describe('weft run --otel with a collector that never answers', () => {
  test.each(['http/json', 'http/protobuf'])('exits, and the run is what it is untraced (%s)', async (protocol) => {
    const untraced = await weft([...RUN, '--dir', path.join(root, `off-${protocol.replace('/', '-')}`)], ENV);
    expect(untraced.code, untraced.stderr).toBe(0);
    const before = connections;
    const traced = await bounded([...RUN, '--dir', path.join(root, `on-${protocol.replace('/', '-')}`), '--otel'], { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }, 60_000);
    expect(traced.hung).toBe(false);
    expect(traced.code, traced.stderr).toBe(0);
    // The exporter did reach the silent endpoint (else this would test nothing).
    expect(connections).toBeGreaterThan(before);
    expect(last(traced).status).toBe('completed');
    expect(last(traced).fingerprint).toBe(last(untraced).fingerprint);
  }, 180_000);
});
