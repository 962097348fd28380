/**
 * Which invocations of a store may have changed: a hint, never data (live.ts reads the store by seq
 * on each one). With Redis, the nudges the store publishes after each durable append
 * (stores/redis-nudge.ts), on a connection of their own; with the file store, fs.watch on the
 * invocations folder and on each invocation's folder in it (only the files a page shows count),
 * taken again at each poll when it could not be (the folder is created by the first run). A memory store, or a watch that cannot be had,
 * leaves the follower's poll to find changes.
 */
import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { isValidInvocationId, journalFileOf, type JournalStore } from '../journal/store.js';
import { DURABLE_MARK } from '../stores/file-durable.js';
import { decodeNudge, nudgeChannel } from '../stores/redis-nudge.js';
import { RedisStore } from '../stores/redis.js';

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
const JOURNAL_FILE = 'journal.jsonl';
const SHOWN = new Set([JOURNAL_FILE, DURABLE_MARK, 'status.json', 'snapshot.json', 'inbox.json']);
/** At most this many invocation folders are watched at once: the most recently changed (the others are found by the follower's poll). */
const MAX_WATCHED = 2048;

/**
 * A watch on the invocations folder (a new invocation's folder appearing) and one on each
 * invocation's folder (its files changing). Not one recursive watch: on Linux, Node 20's recursive
 * fs.watch reports a file's first change and misses the ones after it, which left a followed
 * journal to the 1 s poll. Each folder watch is one inotify watch; the most recently changed
 * MAX_WATCHED are kept (those of the running invocations among them).
 */
function folderWatch(folder: string, changed: (id: string) => void, watchingLate: () => void): StoreChanges {
  let top: FSWatcher | undefined;
  /** Invocation folder → its watch, least recently changed first. */
  const inner = new Map<string, FSWatcher>();
  const unwatch = (id: string) => {
    inner.get(id)?.close();
    inner.delete(id);
  };
  /** Watch `id`'s folder (or mark it the most recently changed), dropping the least recently changed beyond the cap. */
  const watchInvocation = (id: string) => {
    const held = inner.get(id);
    if (held) {
      inner.delete(id);
      inner.set(id, held);
      return;
    }
    try {
      let marked = false;
      const w = watch(path.join(folder, id), { persistent: false }, (_event, name) => {
        if (typeof name !== 'string' || !SHOWN.has(name)) return;
        // Once its writer keeps a durable mark, a write to the journal shows nothing until the mark moves.
        if (name === DURABLE_MARK) marked = true;
        else if (marked && name === JOURNAL_FILE) return;
        watchInvocation(id); // now the most recently changed
        changed(id);
      });
      w.on('error', () => unwatch(id));
      inner.set(id, w);
    } catch {
      return; // gone, or not a folder: nothing to watch
    }
    while (inner.size > MAX_WATCHED) unwatch(inner.keys().next().value!);
  };
  const start = (late: boolean) => {
    try {
      top = watch(folder, { persistent: false }, (_event, name) => {
        if (typeof name !== 'string' || !isValidInvocationId(name)) return;
        watchInvocation(name);
        changed(name);
      });
      top.on('error', () => {
        top?.close();
        top = undefined;
      });
    } catch {
      top = undefined; // no folder yet, or no watch here: the poll covers it
      return;
    }
    // The folders already there, the most recently changed last (so they are the ones kept).
    try {
      const ids = readdirSync(folder).filter(isValidInvocationId);
      const dated = ids.map((id) => ({ id, at: mtimeOf(path.join(folder, id)) })).sort((a, b) => a.at - b.at);
      for (const { id } of dated.slice(-MAX_WATCHED)) watchInvocation(id);
    } catch {
      /* the poll covers what could not be watched */
    }
    if (late) watchingLate(); // what changed before the watch is reported by the caller
  };
  start(false);
  return {
    get watching() {
      return top !== undefined;
    },
    retry: () => {
      if (top === undefined) start(true);
    },
    close: async () => {
      top?.close();
      top = undefined;
      for (const id of [...inner.keys()]) unwatch(id);
    },
  };
}

function mtimeOf(p: string): number {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}
