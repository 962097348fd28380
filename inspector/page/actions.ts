/**
 * Cancel, Resume and Fork on an invocation's page (beside Approve and Reject: approve.ts), each with
 * a confirmation step: a button names the action; pressing it opens a confirmation that says what
 * will happen, takes who asks and why, and only its Confirm button sends the request — a POST to
 * `/api/invocations/<id>/<action>` (inspector/page-actions.ts) from this page's own origin, with the
 * token cookie. What the viewer may do comes from `/api/actions`: a viewer started with
 * `--read-only` offers none of them (the panel is not drawn); one that cannot write says why beside
 * the CLI commands.
 *
 * Which buttons show follows the invocation's status: Cancel while it has not ended, Resume when it
 * is hibernated or suspended, Fork at an epoch it closed. A fork's answer names the new invocation:
 * the page links to it (`#fork-link`). The panel is one element per invocation, kept across live
 * redraws (invocation.ts), so a confirmation being typed in survives a record arriving. Everything
 * from the server reaches the DOM as text (dom.ts).
 */
import { el, getJson, invocationHref, replace, setText } from './dom.js';
import { LINEAGE_CHANGED } from './lineage-tree.js';
import type { DescriptionView } from './wire.js';

type Action = 'cancel' | 'resume' | 'fork';
interface Offered {
  readOnly: boolean;
  by: string | null;
  cancel: { enabled: boolean; reason: string | null };
  resume: { enabled: boolean; reason: string | null };
  fork: { enabled: boolean; reason: string | null };
}

const ENDED = new Set(['completed', 'failed', 'handed_off', 'superseded', 'cancelled', 'damaged']);
const CLOSED_EPOCH = new Set(['completed', 'compensated', 'denied']);

/** What each action does, as the confirmation says it. */
const WHAT: Record<Action, string> = {
  cancel: 'Stop this invocation: the runtime holding it stops before its next step; resting, weft serve (or weft resume) compensates its current epoch and ends it cancelled.',
  resume: 'Ask for it to go on: the request waits in its inbox until weft serve (or weft resume) resumes it.',
  fork: 'Start a new invocation from the end of the chosen epoch, as weft fork does; the parent, if it has not ended, ends superseded.',
};

let panel: { id: string; node: HTMLElement; update: (d: DescriptionView) => void } | null = null;

/** The actions panel for the invocation `d` (the same element across redraws), drawn for its status now. */
export function actionsPanel(d: DescriptionView, location: string): HTMLElement {
  if (panel === null || panel.id !== d.id) panel = makePanel(d.id, location);
  panel.update(d);
  return panel.node;
}

function makePanel(id: string, location: string): { id: string; node: HTMLElement; update: (d: DescriptionView) => void } {
  const buttons: Record<Action, HTMLButtonElement> = {
    cancel: el('button', { type: 'button', id: 'action-cancel', class: 'action cancel', disabled: '' }, 'Cancel…'),
    resume: el('button', { type: 'button', id: 'action-resume', class: 'action resume', disabled: '' }, 'Resume…'),
    fork: el('button', { type: 'button', id: 'action-fork', class: 'action fork', disabled: '' }, 'Fork…'),
  };
  const epoch = el('select', { id: 'fork-epoch', name: 'atEpoch', title: 'the epoch whose end the fork goes on from' });
  const forkAt = el('label', { class: 'fork-at' }, 'at the end of epoch ', epoch);
  const by = el('input', { type: 'text', id: 'action-by', name: 'by', placeholder: 'your name', maxlength: '200', autocomplete: 'name' });
  const reason = el('input', { type: 'text', id: 'action-reason', name: 'reason', placeholder: 'why (optional)', maxlength: '2000' });
  const what = el('p', { class: 'note', id: 'action-what' });
  const go = el('button', { type: 'button', id: 'action-confirm-go', class: 'action confirm' }, 'Confirm');
  const back = el('button', { type: 'button', id: 'action-confirm-back', class: 'action back' }, 'Back');
  const confirm = el('div', { class: 'action-confirm', id: 'action-confirm', hidden: '' }, what, el('div', { class: 'approve-fields' }, by, reason, go, back));
  const status = el('p', { id: 'action-status', class: 'note' });
  const result = el('p', { id: 'action-result', class: 'note' });
  const node = el('section', { class: 'actions', id: 'actions', 'data-state': 'loading' }, el('h2', {}, 'actions'), el('div', { class: 'approve-fields' }, buttons.cancel, buttons.resume, buttons.fork, forkAt), confirm, status, result);

  let offered: Offered | null = null;
  let current: DescriptionView | null = null;
  let asking: Action | null = null;
  let sending = false;

  const applicable = (action: Action, d: DescriptionView): boolean => {
    if (action === 'cancel') return !ENDED.has(d.status);
    if (action === 'resume') return d.status === 'hibernated' || d.status === 'suspended';
    return d.status !== 'superseded' && closedEpochs(d).length > 0;
  };
  const draw = () => {
    const d = current;
    if (!d || !offered) return;
    for (const action of ['cancel', 'resume', 'fork'] as const) {
      const shown = applicable(action, d);
      buttons[action].hidden = !shown;
      buttons[action].disabled = sending || !offered[action].enabled;
    }
    const epochs = closedEpochs(d);
    const chosen = epoch.value;
    if (epoch.options.length !== epochs.length) replace(epoch, ...epochs.map((n) => el('option', { value: String(n) }, String(n))));
    if (chosen && epochs.includes(Number(chosen))) epoch.value = chosen;
    forkAt.hidden = buttons.fork.hidden;
    if (asking && buttons[asking].hidden) close();
  };
  const open = (action: Action) => {
    asking = action;
    node.dataset.asking = action;
    const target = action === 'fork' ? `${id} at the end of epoch ${epoch.value}` : id;
    setText(what, `${action[0]!.toUpperCase()}${action.slice(1)} ${target}? ${WHAT[action]}`);
    setText(go, `Confirm ${action}`);
    confirm.hidden = false;
    by.focus();
  };
  const close = () => {
    asking = null;
    delete node.dataset.asking;
    confirm.hidden = true;
  };
  const send = async () => {
    const action = asking;
    if (!action) return;
    sending = true;
    go.disabled = back.disabled = true;
    draw();
    setText(status, `sending: ${action}…`);
    try {
      const res = await fetch(`/api/invocations/${encodeURIComponent(id)}/${action}`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ ...(by.value.trim() ? { by: by.value } : {}), ...(reason.value.trim() ? { reason: reason.value } : {}), ...(action === 'fork' ? { atEpoch: Number(epoch.value) } : {}) }),
      });
      const answer = (await res.json().catch(() => ({}))) as { error?: string; said?: string; fork?: string };
      if (!res.ok) {
        setText(status, `${action} refused (HTTP ${res.status}): ${answer.error ?? 'no reason given'}`);
        node.dataset.outcome = 'refused';
        return;
      }
      close();
      node.dataset.outcome = action;
      setText(status, answer.said ?? `${action} sent`);
      if (typeof answer.fork === 'string') {
        replace(result, 'the fork: ', el('a', { id: 'fork-link', class: 'mono', href: invocationHref(answer.fork) }, answer.fork));
        document.dispatchEvent(new Event(LINEAGE_CHANGED));
      }
    } catch (err) {
      setText(status, `could not send the ${action}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      sending = false;
      go.disabled = back.disabled = false;
      draw();
    }
  };
  for (const action of ['cancel', 'resume', 'fork'] as const) buttons[action].addEventListener('click', () => open(action));
  epoch.addEventListener('change', () => asking === 'fork' && open('fork'));
  go.addEventListener('click', () => void send());
  back.addEventListener('click', close);

  getJson<Offered>('/api/actions')
    .then((a) => {
      offered = a;
      if (a.readOnly) {
        // A read-only viewer has no such actions: the panel goes.
        node.dataset.state = 'read-only';
        node.hidden = true;
        replace(node);
        return;
      }
      const off = (['cancel', 'resume', 'fork'] as const).filter((action) => !a[action].enabled);
      node.dataset.state = off.length ? 'off' : 'on';
      if (off.length) setText(status, `${off.join(', ')} here ${off.length > 1 ? 'are' : 'is'} off: ${a[off[0]!].reason ?? 'no reason given'}; use the commands below${location ? ` (with ${location})` : ''}`);
      else if (a.by) setText(status, `each is recorded as asked by the name you give, with this viewer (${a.by})`);
      draw();
    })
    .catch((err: unknown) => {
      node.dataset.state = 'off';
      setText(status, `actions here are off (${err instanceof Error ? err.message : String(err)}); use the commands below`);
    });
  return {
    id,
    node,
    update: (d) => {
      current = d;
      draw();
    },
  };
}

/** The epochs the invocation closed (what a fork may go on from), in order. */
function closedEpochs(d: DescriptionView): number[] {
  return d.epochs.filter((e) => CLOSED_EPOCH.has(e.outcome)).map((e) => e.epoch);
}
