/**
 * The list's verification marks: each ended invocation drawn on the list (completed, failed, handed
 * off, cancelled, superseded — a journal nothing more is appended to) is verified by this page, as
 * its own page does (verify.ts: every record's chain link, hash and schema, then the seal against the
 * trusted key when there is one), one journal at a time once the table is painted; its row then
 * carries ✗ (and `data-verdict="failed"`) when the journal does not verify, a green ✓ when it does
 * and the trusted key sealed it, and an amber ✓ when only its chain could be checked (no trusted key). A journal the server redacted cannot be hashed here: the server's verdict on the stored
 * bytes is shown instead, as the server's (its title says so).
 *
 * Only the rows in view are checked: each drawn row is watched (an IntersectionObserver, with a
 * margin of about a screen), and a journal is fetched once its row comes into view — a page of 200
 * rows, or 1,000 after "show more", costs the dozen or so a screen shows, and the others as they are
 * scrolled to. A row that leaves the view before its turn is not checked until it comes back.
 *
 * What it does not do, on purpose: look at journals that are still open (a running row changes
 * every step — it is checked once it ends, and its own page checks it live), or at rows not drawn.
 * A verdict is kept for the page's life, per id and record count; a row whose count changes is
 * checked again.
 */
import { el } from './dom.js';
import type { ShownVerdict, Verdict } from './verify.js';
import type { ListedInvocation, TrustedKey } from './wire.js';

/** The statuses of a journal that has ended. */
const ENDED = new Set(['completed', 'failed', 'handed_off', 'cancelled', 'superseded']);

/** Journals fetched and checked at once (the server's answer and the check overlap). */
const CHECKING = 2;
/** How far beyond the visible part of the page a row counts as in view (checked before it is scrolled to). */
const VIEW_MARGIN = '600px 0px';

interface Kept {
  records: number;
  shown: ShownVerdict;
}

export class ListVerdicts {
  private readonly kept = new Map<string, Kept>();
  private queue: ListedInvocation[] = [];
  private started = false;
  /** Journals being fetched and checked now (at most CHECKING at once). */
  private working = 0;
  /** The drawn rows watched, each with its listing; the ids of those in view now. */
  private readonly rowOf = new WeakMap<Element, ListedInvocation>();
  private readonly inView = new Map<Element, ListedInvocation>();
  private readonly observer: IntersectionObserver | undefined =
    typeof IntersectionObserver === 'function' ? new IntersectionObserver((entries) => this.seen(entries), { rootMargin: VIEW_MARGIN }) : undefined;

  constructor(
    private readonly trusted: () => TrustedKey | null,
    /** Called when `id`'s verdict is known (its row is drawn again). */
    private readonly onVerdict: (id: string) => void,
  ) {}

  /** The verdict kept for this row's journal as listed now, if any. */
  private verdictOf(inv: ListedInvocation): ShownVerdict | undefined {
    const k = this.kept.get(inv.id);
    return k && k.records === inv.records ? k.shown : undefined;
  }

  /** `data-verdict` for a row: failed, verified, chain-only, server-… , open (not checked while open) or unchecked (not yet). */
  kindOf(inv: ListedInvocation): string {
    if (!ENDED.has(inv.status)) return 'open';
    const shown = this.verdictOf(inv);
    if (!shown) return 'unchecked';
    return shown.kind === 'server' ? `server-${shown.verdict.kind}` : shown.kind;
  }

  /** The mark beside a row's status, or null while it is not checked. */
  mark(inv: ListedInvocation): HTMLElement | null {
    const shown = this.verdictOf(inv);
    if (!shown) return null;
    const byServer = shown.kind === 'server';
    const v: Verdict = shown.kind === 'server' ? shown.verdict : shown;
    const who = byServer ? 'by the server (the journal is redacted for this viewer)' : 'in this page';
    if (v.kind === 'failed') {
      return el('span', { class: 'verdict-mark verdict-failed', title: `the journal fails verification ${who} at record ${v.seq}: ${v.problem}` }, '✗ fails');
    }
    if (v.kind === 'verified') {
      return el('span', { class: 'verdict-mark verdict-ok', title: `chain intact and sealed by the trusted key (${v.key.label}), checked ${who}` }, '✓');
    }
    // The chain holds, but no key you trust checked who sealed it: amber, as the invocation page says it (verdict-view.ts), never the trusted green.
    return el('span', { class: 'verdict-mark verdict-chain', title: `chain intact, checked ${who}${v.sealed ? '; no trusted key to check its seal against' : ''}` }, '✓');
  }

  /**
   * Watch a drawn row (`tr`, listing `inv`): once it is in view, its journal is checked (when it has
   * ended and is not checked yet). Without an IntersectionObserver every drawn row counts as in view.
   */
  watch(tr: Element, inv: ListedInvocation): void {
    if (!ENDED.has(inv.status) || this.verdictOf(inv) !== undefined) return;
    if (!this.observer) {
      this.inView.set(tr, inv);
      return this.queueInView();
    }
    this.rowOf.set(tr, inv);
    this.observer.observe(tr);
  }

  /** Stop watching every row (the table is drawn anew; its rows are watched again as they are made). */
  forgetRows(): void {
    this.observer?.disconnect();
    this.inView.clear();
    this.queue = [];
  }

  /** Stop watching one row (replaced by a new one). */
  forget(tr: Element): void {
    this.observer?.unobserve(tr);
    this.inView.delete(tr);
  }

  private seen(entries: IntersectionObserverEntry[]): void {
    for (const entry of entries) {
      const inv = this.rowOf.get(entry.target);
      if (!inv) continue;
      if (entry.isIntersecting && entry.target.isConnected) this.inView.set(entry.target, inv);
      else this.inView.delete(entry.target);
    }
    this.queueInView();
  }

  /** The queue: the rows in view, ended and not yet checked, top first. */
  private queueInView(): void {
    const rows = [...this.inView.entries()].filter(([tr, inv]) => tr.isConnected && this.verdictOf(inv) === undefined);
    rows.sort(([a], [b]) => (a.compareDocumentPosition(b) & 4 ? -1 : 1)); // DOCUMENT_POSITION_FOLLOWING: a before b
    this.queue = rows.map(([, inv]) => inv);
    this.work();
  }

  /** Begin checking (after the table is painted: the verifier's modules are loaded then). */
  start(): void {
    this.started = true;
    this.work();
  }

  private work(): void {
    while (this.started && this.working < CHECKING && this.queue.length > 0) this.worker();
  }

  /** One lane: takes journals off the queue until it is empty. */
  private worker(): void {
    this.working++;
    void (async () => {
      try {
        const { serverVerdict, verifyInPage } = await import('./verify.js');
        for (let inv = this.queue.shift(); inv; inv = this.queue.shift()) {
          if (this.verdictOf(inv)) continue;
          const shown = await this.verify(inv.id, serverVerdict, verifyInPage).catch(() => undefined);
          if (shown) {
            this.kept.set(inv.id, { records: inv.records, shown });
            this.onVerdict(inv.id);
          }
          await new Promise((resolve) => setTimeout(resolve, 0)); // the page's own work between two journals
        }
      } finally {
        this.working--;
      }
    })();
  }

  private async verify(id: string, serverVerdict: (value: unknown) => ShownVerdict, verifyInPage: (bytes: Uint8Array, key: TrustedKey | null) => Verdict): Promise<ShownVerdict | undefined> {
    const path = `/api/invocations/${encodeURIComponent(id)}`;
    const res = await fetch(`${path}/journal`, { credentials: 'same-origin' });
    if (!res.ok) return undefined;
    if (res.headers.get('x-weft-redacted') === '1') {
      const v = await fetch(`${path}/verdict`, { credentials: 'same-origin', headers: { accept: 'application/json' } });
      return v.ok ? serverVerdict(await v.json()) : undefined;
    }
    return verifyInPage(new Uint8Array(await res.arrayBuffer()), this.trusted());
  }
}
