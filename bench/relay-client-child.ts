/**
 * The bench's Stately inspector client, in its own process (bench/stately-relay.ts forks it), as the
 * inspector's page would be: it connects to the relay as the relay's bridge page does (its Origin,
 * with the token), parses every message as the inspector does, and counts what it got by type.
 *
 * IPC, in: { connect: { origin, token } }, { report: true }, { close: true }.
 * Out: { ready: true }, { report: { messages, actors, snapshots, events, dropped } }.
 */
import { openLive, type LiveClient } from './live-client.js';

const counts = { messages: 0, actors: 0, snapshots: 0, events: 0, dropped: 0 };
let socket: LiveClient | undefined;

const send = (message: unknown) => process.send?.(message);

process.on('message', (message: { connect?: { origin: string; token: string }; report?: boolean; close?: boolean }) => {
  void (async () => {
    if (message.connect !== undefined) {
      const { origin, token } = message.connect;
      socket = await openLive(origin, `/?token=${encodeURIComponent(token)}`, (text) => {
        const m = JSON.parse(text) as { type: string; event?: { type?: string; dropped?: number } };
        counts.messages++;
        if (m.type === '@xstate.actor') counts.actors++;
        else if (m.type === '@xstate.snapshot') counts.snapshots++;
        else if (m.type === '@xstate.event') {
          counts.events++;
          if (m.event?.type === 'weft.relay.dropped') counts.dropped += m.event.dropped ?? 0;
        }
      });
      send({ ready: true });
    } else if (message.report) {
      send({ report: { ...counts } });
    } else if (message.close) {
      socket?.close();
      process.exit(0);
    }
  })().catch((err: unknown) => {
    process.stderr.write(`bench relay client: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
});
