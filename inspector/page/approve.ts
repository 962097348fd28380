/**
 * Approve and Reject on an invocation's page, under what it asks for (invocation.ts's waiting
 * panel): a "by" field, a note, and the two buttons. The decision is a POST to
 * `/api/invocations/<id>/decision` (inspector/approve.ts) from this page's own origin, carrying the
 * token cookie. What the viewer may do comes from `/api/approvals`: where it writes nothing (a
 * store that fails the writers' durability check) the buttons are disabled and the reason shown
 * beside the `weft approve` command. After a decision the page goes on following the invocation
 * live, as it does anyway (live.ts, over the WebSocket): resumed by the viewer itself, or by
 * `weft serve`, its records arrive and the page redraws to its end. Nothing polls. Everything from
 * the server reaches the DOM as text.
 */
import { el, getJson, replace, setText } from './dom.js';

interface Approvals {
  enabled: boolean;
  reason: string | null;
  resumes: 'viewer' | 'serve' | null;
}

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
      setText(status, 'Say who decides (by): an approval records it.');
      by.focus();
      return;
    }
    approve.disabled = reject.disabled = by.disabled = note.disabled = true;
    setText(status, `sending: ${decision}…`);
    try {
      const res = await fetch(`/api/invocations/${encodeURIComponent(id)}/decision`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ decision, by: by.value, ...(note.value.trim() ? { note: note.value } : {}) }),
      });
      const answer = (await res.json().catch(() => ({}))) as { error?: string; resumes?: string };
      if (!res.ok) {
        setText(status, `refused (HTTP ${res.status}): ${answer.error ?? 'no reason given'}`);
        approve.disabled = reject.disabled = by.disabled = note.disabled = false;
        return;
      }
      form.dataset.decided = decision;
      setText(
        status,
        answer.resumes === 'viewer'
          ? `${decision}: this viewer resumed it; following it to its end…`
          : `${decision}: in its inbox. weft serve resumes it — or run weft resume ${id} with this store. Following it…`,
      );
    } catch (err) {
      setText(status, `could not send the decision: ${err instanceof Error ? err.message : String(err)}`);
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
        setText(status, a.resumes === 'viewer' ? 'this viewer resumes it once decided' : 'the decision goes to its inbox; weft serve (or weft resume) goes on from there');
      } else {
        replace(status, `deciding here is off${a.reason ? `: ${a.reason}` : ''}. Run: `, el('span', { class: 'mono', id: 'approve-command' }, command));
      }
    })
    .catch((err: unknown) => {
      replace(status, `deciding here is off (${err instanceof Error ? err.message : String(err)}). Run: `, el('span', { class: 'mono', id: 'approve-command' }, command));
    });
  return form;
}
