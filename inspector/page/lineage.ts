/**
 * A fork's lineage on the pages: "fork of <parent> at epoch N" and "superseded by fork <id>"
 * (runtime/fork.ts, journal/lineage.ts), on a list row and in an invocation's header. An id is a
 * link only when the server listed it in `lineageLinks` — the ids this viewer's token may open
 * (inspector/lineage-links.ts) — else it is shown as text. Every id, epoch and hash came from a
 * journal: untrusted, it reaches the DOM as text only (dom.ts `el`), and a link is built from the
 * encoded id (`invocationHref`).
 */
import { el, invocationHref } from './dom.js';

/** What a row or a description says of its lineage, with the ids the page may link. */
export interface LineageView {
  forkOf: { parent: string; atEpoch: number; parentHash?: string } | null;
  supersededBy: string | null;
  links: readonly string[];
}

/** An id cut for a table cell ("inv-13c745bd…"); the whole id is in the title. */
export function shortId(id: string): string {
  return id.length > 16 ? `${id.slice(0, 12)}…` : id;
}

/** A digest cut to its first 12 characters (the whole one is in the title). */
function shortHash(hash: string): string {
  return hash.length > 12 ? `${hash.slice(0, 12)}…` : hash;
}

/** The id, as a link to its page when `links` has it, else as text; `data-lineage-id` names it either way. */
function ref(id: string, links: readonly string[], short: boolean): HTMLElement {
  const attrs = { class: 'mono lineage-id', title: id, 'data-lineage-id': id };
  const text = short ? shortId(id) : id;
  return links.includes(id) ? el('a', { ...attrs, href: invocationHref(id) }, text) : el('span', attrs, text);
}

/** The lineage facts, one element each ("fork of …", "superseded by fork …"); short ids for the list, whole ones for a page. */
export function lineageLines(view: LineageView, options: { short: boolean; hash: boolean }): HTMLElement[] {
  const out: HTMLElement[] = [];
  const f = view.forkOf;
  if (f && typeof f.parent === 'string' && f.parent !== '') {
    const hash = options.hash && typeof f.parentHash === 'string' && f.parentHash !== '' ? f.parentHash : null;
    out.push(
      el(
        'div',
        { class: 'lineage lineage-fork-of' },
        'fork of ',
        ref(f.parent, view.links, options.short),
        ` at epoch ${String(f.atEpoch)}`,
        hash ? el('span', {}, " (parent's record hash ", el('span', { class: 'mono', title: hash }, shortHash(hash)), ')') : null,
      ),
    );
  }
  const by = view.supersededBy;
  if (typeof by === 'string' && by !== '') out.push(el('div', { class: 'lineage lineage-superseded-by' }, 'superseded by fork ', ref(by, view.links, options.short)));
  return out;
}
