/**
 * The viewer's invocations listing, made once from the store's index and kept up to date by the
 * store's change feed (store-changes.ts: Redis nudges, or the workspace's folders watched), so that
 * a page of the list (`/api/invocations?…`) reads no journal: it is cut from the listing held in
 * order (list-order.ts).
 *
 * - Made once, when the viewer starts listening: `listInvocations` (runtime/list.ts) — on Redis the
 *   status index (one HGETALL, and the open invocations read in full), on a file store the summary
 *   kept beside each ended journal (a stat and one small read each). A page asked for before it is
 *   made waits for it.
 * - Kept: an invocation the feed names is marked changed — nothing is read then (a busy store
 *   changes hundreds of times a second, and the runs must not pay for a viewer nobody looks at).
 *   The next page asked for first reads the row of each invocation marked since the last one
 *   (`invocationSummary`, as the live rows are read), at most CHANGED_PER_TURN between two turns
 *   given to the rest of the viewer, and puts it in its place in each order.
 * - Made again now and then, in the background, while pages are asked for (RESYNC_MS; RETRY_MS
 *   while the feed cannot watch): a change the feed missed (a file folder beyond its watched ones,
 *   a nudge lost while Redis reconnected, an invocation moved aside) is not kept for long. The
 *   pages keep coming from the listing held until the new one is made.
 */
import type { Server } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { JournalStore } from '../journal/store.js';
import { invocationSummary, listInvocations, type InvocationSummary } from '../runtime/list.js';
import type { ListPage, ListQuery } from './list-page.js';
import { ListOrder } from './list-order.js';
import { watchStoreChanges, type StoreChanges } from './store-changes.js';

/**
 * How long a listing is kept before it is made again from the store (in the background, while pages
 * are asked for): a safety net for a missed change, not the way changes come — at 100,000 runs a
 * making costs seconds of CPU, so not often.
 */
const RESYNC_MS = 300_000;
/** The same, while the change feed is not watching (no folder yet, no watch possible). */
const RETRY_MS = 5_000;
/** Changed rows read between two turns given to the rest of the viewer (its live followers above all). */
const CHANGED_PER_TURN = 16;

export class InvocationListing {
  private order: ListOrder | undefined;
  private making: Promise<ListOrder> | undefined;
  private madeAt = Number.NEGATIVE_INFINITY;
  /** Invocations the feed named since their rows were last read. */
  private changed = new Set<string>();
  private changes: StoreChanges | undefined;
  private refreshing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly store: JournalStore) {}

  /** Watch the store's changes and make the listing (in the background). */
  start(): void {
    if (this.changes || this.closed) return;
    // A watch taken late (the workspace folder appeared): what happened before it is in the next listing made.
    this.changes = watchStoreChanges(this.store, (id) => this.changed.add(id), () => (this.madeAt = Number.NEGATIVE_INFINITY));
    void this.make().catch(() => undefined); // a failure is the first page's to report
  }

  /** One page of the list, as list-page.ts `listPage` would cut it from the whole listing; `scopeTenant` narrows it to one tenant's rows. */
  async page(query: ListQuery, scopeTenant?: string): Promise<ListPage> {
    return (await this.current()).page(query, scopeTenant);
  }

  /**
   * The listing to answer from, its marked changes read. A listing made before a watch taken late
   * (the workspace folder appeared, so runs were written while nothing watched) is made again first
   * and waited for: a page asked for after a run was seen must show it, and nothing would mark it.
   * Otherwise a listing past its time is made again in the background and this one answers.
   */
  private async current(): Promise<ListOrder> {
    this.start();
    this.changes?.retry();
    let order = this.order ?? (await this.make());
    if (this.madeAt === Number.NEGATIVE_INFINITY) order = await this.make();
    else {
      const due = this.changes?.watching ? RESYNC_MS : RETRY_MS;
      if (performance.now() - this.madeAt >= due && !this.making) void this.make().catch(() => undefined);
    }
    await this.refresh(order);
    return order;
  }

  /**
   * Every row of the listing, up to date as a page would be (the changes marked read first): what the
   * header's inbox count and a fork's lineage tree are cut from, so neither lists the store.
   */
  async rows(): Promise<InvocationSummary[]> {
    return (await this.current()).rows();
  }

  /** Make the listing from the store; the changes marked meanwhile are read again after it. */
  private make(): Promise<ListOrder> {
    this.making ??= (async () => {
      const startedAt = performance.now();
      const seen = this.changed;
      this.changed = new Set();
      try {
        const order = new ListOrder(await listInvocations(this.store));
        this.order = order;
        this.madeAt = startedAt;
        return order;
      } catch (err) {
        for (const id of seen) this.changed.add(id);
        throw err;
      } finally {
        this.making = undefined;
      }
    })();
    return this.making;
  }

  /** Read the rows of the invocations marked changed into `order` (one refresh at a time). */
  private async refresh(order: ListOrder): Promise<void> {
    while (this.refreshing) await this.refreshing;
    if (this.changed.size === 0) return;
    this.refreshing = (async () => {
      const ids = [...this.changed];
      this.changed = new Set();
      for (const [i, id] of ids.entries()) {
        if (i > 0 && i % CHANGED_PER_TURN === 0) await nextTurn();
        try {
          order.put(await invocationSummary(this.store, id));
        } catch {
          this.changed.add(id); // unreadable now: read again at the next page
        }
      }
    })();
    try {
      await this.refreshing;
    } finally {
      this.refreshing = undefined;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.changes?.close();
  }
}

/** The listing of `server`'s store: watched from when the server listens until it closes. */
export function attachListing(server: Server, store: JournalStore): InvocationListing {
  const listing = new InvocationListing(store);
  server.once('listening', () => listing.start());
  const close = server.close.bind(server);
  server.close = (callback?: (err?: Error) => void) => {
    void listing.close();
    return close(callback);
  };
  return listing;
}
