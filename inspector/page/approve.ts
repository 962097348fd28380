/**
 * Approve and Reject on an invocation's page, under what it asks for (invocation.ts's waiting
 * panel): a "by" field, a note, and the two buttons. The decision is a POST to
 * `/api/invocations/<id>/decision` (inspector/approve.ts) from this page's own origin, carrying the
 * token cookie. What the viewer may do comes from `/api/approvals`: where it writes nothing (a
 * store that fails the writers' durability check) the buttons are disabled and the reason shown
 * beside the `weft approve` command. After a decision the page follows the invocation — resumed by
 * the viewer itself, or by `weft serve` — polling its description until it rests or ends, then
 * reloads to show the end. Everything from the server reaches the DOM as text.
 */
import { el, getJson, replace } from './dom.js';

interface Approvals {
  enabled: boolean;
  reason: string | null;
  resumes: 'viewer' | 'serve' | null;
}

const FOLLOW_EVERY_MS = 500;
/** Statuses an invocation moves on from by itself; anything else is a rest or an end. */
const MOVING = new Set(['running', 'awaiting_approval']);

/** The approval form for invocation `id`; `command` is the `weft approve` line shown when the page cannot decide. */
export function approvalForm(id: string, command: string): HTMLElement {
  const by = el('input', { type: 'text', id: 'approve-by', name: 'by', placeholder: 'your name', maxlength: '200', autocomplete: 'name' });
  const note = el('input', { type: 'text', id: 'approve-note', name: 'note', placeholder: 'note (optional)', maxlength: '2000' });
  const approve = el('button', { type: 'button', id: 'approve', class: 'decide approve', disabled: '' }, 'Approve');
  const reject = el('button', { type: 'button', id: 'reject', class: 'decide reject', disabled: '' }, 'Reject');
  const status = el('p', { id: 'approve-status', class: 'note' });
  const form = el('div', { class: 'approve-form', id: 'approve-form' }, el('div', { class: 'approve-fields' }, by, note, approve, reject), status);

  const decide = async (decision: 'approved' | 'rejected') => {
    if (by.value.trim() === '') {
      status.textContent = 'Say who decides (by): an approval records it.';
      by.focus();
      return;
    }
    approve.disabled = reject.disabled = by.disabled = note.disabled = true;
    status.textContent = `sending: ${decision}…`;
    try {
      const res = await fetch(`/api/invocations/${encodeURIComponent(id)}/decision`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ decision, by: by.value, ...(note.value.trim() ? { note: note.value } : {}) }),
      });
      const answer = (await res.json().catch(() => ({}))) as { error?: string; resumes?: string };
      if (!res.ok) {
        status.textContent = `refused (HTTP ${res.status}): ${answer.error ?? 'no reason given'}`;
        approve.disabled = reject.disabled = by.disabled = note.disabled = false;
        return;
      }
      form.dataset.decided = decision;
      status.textContent =
        answer.resumes === 'viewer'
          ? `${decision}: this viewer resumed it; following it to its end…`
          : `${decision}: in its inbox. weft serve resumes it — or run weft resume ${id} with this store. Following it…`;
      follow(id, status);
    } catch (err) {
      status.textContent = `could not send the decision: ${err instanceof Error ? err.message : String(err)}`;
      approve.disabled = reject.disabled = by.disabled = note.disabled = false;
    }
  };
  approve.addEventListener('click', () => void decide('approved'));
  reject.addEventListener('click', () => void decide('rejected'));

  getJson<Approvals>('/api/approvals')
    .then((a) => {
      form.dataset.enabled = String(a.enabled);
      if (a.enabled) {
        approve.disabled = reject.disabled = false;
        status.textContent = a.resumes === 'viewer' ? 'this viewer resumes it once decided' : 'the decision goes to its inbox; weft serve (or weft resume) goes on from there';
      } else {
        replace(status, `deciding here is off${a.reason ? `: ${a.reason}` : ''}. Run: `, el('span', { class: 'mono', id: 'approve-command' }, command));
      }
    })
    .catch((err: unknown) => {
      replace(status, `deciding here is off (${err instanceof Error ? err.message : String(err)}). Run: `, el('span', { class: 'mono', id: 'approve-command' }, command));
    });
  return form;
}

/** Poll the invocation until it leaves running/awaiting approval, then reload the page to show its end. */
function follow(id: string, status: HTMLElement): void {
  const tick = async () => {
    try {
      const d = await getJson<{ status: string }>(`/api/invocations/${encodeURIComponent(id)}`);
      if (!MOVING.has(d.status)) {
        location.reload();
        return;
      }
      status.dataset.following = d.status;
    } catch {
      // A moment without an answer: try again.
    }
    setTimeout(() => void tick(), FOLLOW_EVERY_MS);
  };
  setTimeout(() => void tick(), FOLLOW_EVERY_MS);
}
