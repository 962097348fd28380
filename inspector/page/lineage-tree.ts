/**
 * A fork's lineage drawn as a small tree on the invocation page: the oldest ancestor this viewer's
 * token may see, every fork below it ("at epoch N", its status), this invocation marked — from
 * `/api/invocations/<id>/lineage` (inspector/lineage-tree.ts). Every node is an invocation the token
 * may open, so each (but this one) is a link. Nested lists drawn with CSS tree lines (style.ts
 * `.lineage-tree`); ids and statuses reach the DOM as text (dom.ts).
 */
import { el, getJson, invocationHref, replace, statusBadge } from './dom.js';
import type { DescriptionView } from './wire.js';

/** Sent on the document when this page changed a lineage (a fork from actions.ts): the tree is read again. */
export const LINEAGE_CHANGED = 'weft:lineage-changed';

export interface LineageNodeView {
  id: string;
  status: string;
  atEpoch: number | null;
  children: LineageNodeView[];
}

/** The tree of `root` with `here` marked, as nested lists. */
export function lineageTreeView(root: LineageNodeView, here: string): HTMLElement {
  const item = (node: LineageNodeView): HTMLElement =>
    el(
      'li',
      { 'data-id': node.id, ...(node.id === here ? { class: 'here' } : {}) },
      el(
        'span',
        { class: 'node' },
        node.id === here ? el('span', { class: 'mono' }, node.id) : el('a', { class: 'mono', href: invocationHref(node.id) }, node.id),
        node.atEpoch === null ? null : el('span', { class: 'at' }, ` fork at epoch ${node.atEpoch} `),
        ' ',
        statusBadge(node.status),
        node.id === here ? el('span', { class: 'at' }, ' (this one)') : null,
      ),
      node.children.length ? el('ul', {}, ...node.children.map(item)) : null,
    );
  return el('ul', { class: 'lineage-tree', id: 'lineage-tree' }, item(root));
}

/** The tree of invocation `id`'s lineage, or null when it has no fork nor parent (or the server could not say). */
export async function loadLineageTree(id: string): Promise<LineageNodeView | null> {
  try {
    return (await getJson<{ root: LineageNodeView | null }>(`/api/invocations/${encodeURIComponent(id)}/lineage`)).root;
  } catch {
    return null;
  }
}

let section: { id: string; node: HTMLElement; seen: string } | null = null;

/**
 * The lineage tree's section for the invocation `d` (one element per invocation, kept across
 * redraws): read when first drawn, again when the description's lineage changes or this page forked
 * it; hidden while there is no tree to draw.
 */
export function lineageTreeSection(d: DescriptionView): HTMLElement {
  const seen = JSON.stringify(d.lineage ?? null);
  if (section === null || section.id !== d.id) {
    const node = el('section', { class: 'lineage-tree-section', id: 'lineage', hidden: '' });
    section = { id: d.id, node, seen };
    const load = () =>
      void loadLineageTree(d.id).then((tree) => {
        node.hidden = tree === null;
        node.dataset.loaded = 'true';
        if (tree) replace(node, el('h2', {}, 'lineage'), lineageTreeView(tree, d.id));
      });
    document.addEventListener(LINEAGE_CHANGED, load);
    load();
  } else if (section.seen !== seen) {
    section.seen = seen;
    document.dispatchEvent(new Event(LINEAGE_CHANGED));
  }
  return section.node;
}
