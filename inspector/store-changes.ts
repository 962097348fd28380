/**
 * Which invocations of a store may have changed: a hint, never data (live.ts reads the store by seq
 * on each one). With Redis, the nudges the store publishes after each durable append
 * (journal/stores/redis-nudge.ts), on a connection of their own; with the file store, fs.watch on the
 * invocations folder (each invocation's folder within it; only the files a page shows count), taken again at each poll when it could
 * not be (the folder is created by the first run). A memory store, or a watch that cannot be had,
 * leaves the follower's poll to find changes.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { journalFileOf, type JournalStore } from '../journal/store.js';
import { decodeNudge, nudgeChannel } from '../journal/stores/redis-nudge.js';
import { RedisStore } from '../journal/stores/redis.js';

export interface StoreChanges {
  /** Whether changes are being reported now (false: only the follower's poll will find them). */
  readonly watching: boolean;
  /** Try again to watch, when the last attempt failed (called at each poll). */
  retry(): void;
  close(): Promise<void>;
}

/** Report the id of each invocation that may have changed to `changed`; `watchingLate` when a watch that could not be taken at first is now taken. */
export function watchStoreChanges(store: JournalStore, changed: (id: string) => void, watchingLate: () => void = () => undefined): StoreChanges {
  if (store instanceof RedisStore) return redisNudges(store, changed);
  const file = journalFileOf(store, 'x');
  if (file !== undefined) return folderWatch(path.dirname(path.dirname(file)), changed, watchingLate);
  return { watching: false, retry: () => undefined, close: async () => undefined };
}

function redisNudges(store: RedisStore, changed: (id: string) => void): StoreChanges {
  let subscriber: Redis | undefined;
  let closed = false;
  const channel = nudgeChannel(store.prefix);
  const ready = store.connection().then(async (client) => {
    if (closed) return;
    subscriber = client.duplicate();
    subscriber.on('error', () => undefined); // it reconnects; the follower's poll covers the gap
    subscriber.on('message', (from: string, message: string) => {
      const nudge = from === channel ? decodeNudge(message) : undefined;
      if (nudge) changed(nudge.id);
    });
    await subscriber.subscribe(channel);
  });
  ready.catch(() => undefined);
  return {
    watching: true,
    retry: () => undefined,
    close: async () => {
      closed = true;
      await ready.catch(() => undefined);
      subscriber?.disconnect();
    },
  };
}

/**
 * The files of an invocation's folder whose change can change what a page shows (the journal, its
 * durable mark, the status note, the snapshot, the inbox); the lease's renewals and locks, temporary
 * files, the metadata and the summary are not worth a read.
 */
const SHOWN = new Set(['journal.jsonl', 'journal.durable', 'status.json', 'snapshot.json', 'inbox.json']);

function folderWatch(folder: string, changed: (id: string) => void, watchingLate: () => void): StoreChanges {
  let watcher: FSWatcher | undefined;
  const start = (late: boolean) => {
    try {
      watcher = watch(folder, { recursive: true, persistent: false }, (_event, name) => {
        if (typeof name !== 'string') return;
        const [id, file] = name.split(path.sep);
        if (id && (file === undefined || SHOWN.has(file))) changed(id);
      });
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
      if (late) watchingLate(); // what changed before the watch is reported by the caller
    } catch {
      watcher = undefined; // no folder yet, or no watch here: the poll covers it
    }
  };
  start(false);
  return {
    get watching() {
      return watcher !== undefined;
    },
    retry: () => {
      if (watcher === undefined) start(true);
    },
    close: async () => {
      watcher?.close();
      watcher = undefined;
    },
  };
}
