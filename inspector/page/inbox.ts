/**
 * The approvals inbox in the top bar of every page: how many invocations this viewer's token may see
 * wait for a person's decision, as a link to the list filtered to them. Read once from `/api/inbox`
 * (inspector/inbox-count.ts), then kept live from the changed rows the viewer's socket sends
 * (live.ts followList): a row that comes to await approval is counted, one decided or moved on is
 * not. Imported by each page for its effect; ids only, shown as a number.
 */
import { el, getJson, setText } from './dom.js';
import { followList } from './live.js';

const waiting = new Set<string>();

function badge(): HTMLElement | null {
  const bar = document.querySelector('header.top');
  if (!bar) return null;
  let node = bar.querySelector<HTMLElement>('#inbox-count');
  if (!node) {
    node = el('a', { id: 'inbox-count', class: 'inbox-count', href: '/?status=awaiting_approval', title: 'invocations waiting for a person\'s approval' });
    const live = bar.querySelector('.live-state');
    bar.insertBefore(node, live);
  }
  return node;
}

function show(): void {
  const node = badge();
  if (!node) return;
  node.dataset.count = String(waiting.size);
  node.classList.toggle('some', waiting.size > 0);
  setText(node, `inbox ${waiting.size} awaiting approval`);
}

async function start(): Promise<void> {
  const rows: Array<{ id: string; status?: string; decided?: boolean }> = [];
  // Rows that change while the first answer is on its way are applied after it.
  followList((row) => {
    rows.push(row);
    if (loaded) apply();
  });
  let loaded = false;
  const apply = () => {
    for (const row of rows.splice(0)) {
      if (row.status === 'awaiting_approval' && row.decided !== true) waiting.add(row.id);
      else waiting.delete(row.id);
    }
    show();
  };
  try {
    const first = await getJson<{ awaiting: string[] }>('/api/inbox');
    for (const id of first.awaiting) if (typeof id === 'string') waiting.add(id);
  } catch {
    // The count shows what the socket brings.
  }
  loaded = true;
  apply();
}

void start();
