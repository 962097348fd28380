/**
 * The bench's WebSocket client to the viewer, in its own process (bench/inspect.ts forks it): like a
 * page, it does not share the event loop of the runtime being measured — in that process, a busy
 * runtime would delay its reading of every message (lag that is the measurer's, not the viewer's)
 * and its parsing would slow the runtime (cost that is the measurer's too).
 *
 * IPC, in: { connect: origin } (the list socket), { follow: id } (from seq 0), { report: true },
 * { close: true }, { watchStore: { dir } | { redis, prefix } } (the store's change feed itself,
 * inspector/store-changes.ts, as the viewer watches it: when each invocation's changes were seen —
 * the first hop of append → page). Out: { ready: true }, { followed: id, openedAt }, { watching: true },
 * { report: { arrived, rows, changes } }.
 * Times are wall-clock milliseconds with sub-millisecond precision (performance.timeOrigin +
 * performance.now()), comparable with the parent's on the same machine.
 */
import { openLive, type LiveClient } from './live-client.js';
import { watchStoreChanges, type StoreChanges } from '../inspector/store-changes.js';
import { FileStore } from '../stores/file.js';
import { RedisStore } from '../stores/redis.js';

const wall = (at: number) => performance.timeOrigin + at;
const arrived = new Map<string, number>();
const sockets: LiveClient[] = [];
let origin = '';
let rows = 0;
/** Per invocation, the times its store changes were seen (wall clock). */
const changes = new Map<string, number[]>();
let storeWatch: StoreChanges | undefined;

const send = (message: unknown) => process.send?.(message);

process.on('message', (message: { connect?: string; follow?: string; report?: boolean; close?: boolean; watchStore?: { dir?: string; redis?: string; prefix?: string } }) => {
  void (async () => {
    if (message.watchStore !== undefined) {
      const w = message.watchStore;
      const store = w.dir !== undefined ? new FileStore(w.dir) : new RedisStore({ redis: w.redis!, prefix: w.prefix! });
      storeWatch = watchStoreChanges(store, (id) => {
        const at = wall(performance.now());
        const seen = changes.get(id);
        if (seen) seen.push(at);
        else changes.set(id, [at]);
      });
      await new Promise((resolve) => setTimeout(resolve, 200)); // the subscription or watch taken
      send({ watching: true });
    } else if (message.connect !== undefined) {
      origin = message.connect;
      sockets.push(await openLive(origin, '/live?list=1', () => void rows++));
      send({ ready: true });
    } else if (message.follow !== undefined) {
      const id = message.follow;
      sockets.push(
        await openLive(origin, `/live?follow=${id}&from=0`, (text, at) => {
          const m = JSON.parse(text) as { type: string; id: string; from: number; lines: string[] };
          if (m.type !== 'records') return;
          for (let i = 0; i < m.lines.length; i++) arrived.set(`${m.id} ${m.from + i}`, wall(at));
        }),
      );
      send({ followed: id, openedAt: wall(performance.now()) });
    } else if (message.report) {
      send({ report: { arrived: [...arrived], rows, changes: [...changes] } });
    } else if (message.close) {
      for (const s of sockets) s.close();
      await storeWatch?.close();
      process.exit(0);
    }
  })().catch((err: unknown) => {
    process.stderr.write(`bench live watcher: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
});
