/**
 * The bench's WebSocket client to the viewer, in its own process (bench/inspect.ts forks it): like a
 * page, it does not share the event loop of the runtime being measured — in that process, a busy
 * runtime would delay its reading of every message (lag that is the measurer's, not the viewer's)
 * and its parsing would slow the runtime (cost that is the measurer's too).
 *
 * IPC, in: { connect: origin } (the list socket), { follow: id } (from seq 0), { report: true },
 * { close: true }. Out: { ready: true }, { followed: id, openedAt }, { report: { arrived, rows } }.
 * Times are wall-clock milliseconds with sub-millisecond precision (performance.timeOrigin +
 * performance.now()), comparable with the parent's on the same machine.
 */
import { openLive, type LiveClient } from './live-client.js';

const wall = (at: number) => performance.timeOrigin + at;
const arrived = new Map<string, number>();
const sockets: LiveClient[] = [];
let origin = '';
let rows = 0;

const send = (message: unknown) => process.send?.(message);

process.on('message', (message: { connect?: string; follow?: string; report?: boolean; close?: boolean }) => {
  void (async () => {
    if (message.connect !== undefined) {
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
      send({ report: { arrived: [...arrived], rows } });
    } else if (message.close) {
      for (const s of sockets) s.close();
      process.exit(0);
    }
  })().catch((err: unknown) => {
    process.stderr.write(`bench live watcher: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
});
