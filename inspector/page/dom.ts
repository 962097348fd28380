/**
 * The page's DOM helpers. Text that came from a person, a model or an actuator (intents, goals,
 * args, results, reasons) is untrusted: it only ever reaches the DOM as a text node (`textContent`),
 * never as markup — there is no innerHTML anywhere in the page. Attributes are set one by one, and
 * links are built from encoded ids.
 *
 * And it reaches the DOM inert: every string these helpers put into the page — text nodes and
 * attribute values (a title holding a cut text in full) — has its control characters and bidi
 * marks, embeddings, overrides and isolates written as visible `\uXXXX` escapes
 * (journal/active-text.ts, the set the CLI escapes on a terminal). An intent holding U+202E cannot
 * make "evil" read "live", here or on any page that draws through `el`, `append`, `cut` or `setText`.
 */
import { escapeActive } from '../../journal/active-text.js';

export type Child = Node | string | number | null | undefined | false;

/**
 * The token leaves the address bar as the page loads. The URL `weft inspect` prints carries it
 * (`?token=…`); the server answered that request with the cookie that carries it from then on
 * (access.ts), so the page no longer needs it in its URL — where it would be seen over a shoulder,
 * kept in the history and copied with a link. Every page imports this module first of all.
 */
function forgetTokenInAddress(): void {
  const url = new URL(location.href);
  if (!url.searchParams.has('token')) return;
  url.searchParams.delete('token');
  history.replaceState(history.state, '', `${url.pathname}${url.search}${url.hash}`);
}
forgetTokenInAddress();

/** An element with attributes and children; strings become text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, escapeActive(value));
  append(node, ...children);
  return node;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(escapeActive(String(child))) : child);
  }
}

/** Set `node`'s text to `text`, made inert (see the header): the one way a page writes `textContent`. */
export function setText(node: Node, text: string): void {
  node.textContent = escapeActive(text);
}

/** Replace everything inside `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

/**
 * Draw `parent` anew from what `build` returns, and give the text field a person was typing in its
 * focus and caret back when the new drawing holds the same element (the approval form is kept across
 * redraws). A live redraw — the plans or a record arriving — used to take the focus away mid-word, and
 * what was typed next went nowhere. The focus is read before `build` runs: building moves a kept
 * element into the new tree, out of the document, and the focus with it.
 */
export function redraw(parent: Node, build: () => Child[]): void {
  const typing = typingWithin(parent);
  replace(parent, ...build());
  if (typing && parent.contains(typing.field)) {
    typing.field.focus({ preventScroll: true });
    if (typing.caret) typing.field.setSelectionRange(typing.caret[0], typing.caret[1]);
  }
}

/** The text field inside `parent` that has the focus, with its caret, if there is one. */
function typingWithin(parent: Node): { field: HTMLInputElement | HTMLTextAreaElement; caret: [number, number] | null } | null {
  const active = document.activeElement;
  if (!(active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement) || !parent.contains(active)) return null;
  const { selectionStart, selectionEnd } = active;
  return { field: active, caret: selectionStart === null || selectionEnd === null ? null : [selectionStart, selectionEnd] };
}

/** A status as a coloured badge (the class is from a closed list; unknown statuses get a neutral one). */
const STATUSES = new Set(['completed', 'failed', 'handed_off', 'superseded', 'cancelled', 'awaiting_approval', 'waiting_timer', 'hibernated', 'suspended', 'running', 'interrupted', 'pending', 'damaged']);
export function statusBadge(status: string): HTMLElement {
  return el('span', { class: `status status-${STATUSES.has(status) ? status : 'other'}` }, status.replace(/_/g, ' '));
}

/** The link to an invocation's page (ids are letters, digits, '.', '_', '-'; encoded all the same). */
export function invocationHref(id: string): string {
  return `/invocations/${encodeURIComponent(id)}`;
}

/** Cut long text for a table cell; the full text is in the title. */
export function cut(text: string, max: number): HTMLElement {
  const span = el('span', {}, text.length > max ? `${text.slice(0, max - 1)}…` : text);
  if (text.length > max) span.title = escapeActive(text);
  return span;
}

/** GET a JSON endpoint of the viewer (same origin: the token cookie goes with it). */
export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
  return (await res.json()) as T;
}

/** A short error line in place of what could not be loaded. */
export function failure(err: unknown): HTMLElement {
  return el('p', { class: 'error' }, err instanceof Error ? err.message : String(err));
}

/** Name the store this viewer reads in the top bar (`/api/viewer`); the page works without it. */
export function showWhere(): void {
  getJson<{ store: string }>('/api/viewer')
    .then((info) => {
      const where = document.getElementById('where');
      if (where) setText(where, info.store);
    })
    .catch(() => undefined);
}
