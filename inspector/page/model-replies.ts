/**
 * The model's exchanges, per epoch and purpose (parse: the intent → a goal; author: a fragment on
 * the gap path): each attempt's request, the reply as it was recorded (`model.completed`), and the
 * verdict — accepted, or rejected with the judge's reason (`model.rejected`, shown prominently), or
 * the call's own failure (`model.failed`). A reply is untrusted text: it reaches the DOM only as
 * text (dom.ts). Built from the journal's records, any prefix of them.
 */
import { el } from './dom.js';
import type { LineRecord } from './wire.js';

interface Exchange {
  epoch: number;
  purpose: string;
  attempt: number;
  requestSeq: number;
  request: unknown;
  reply: { seq: number; text: string; refused: boolean } | null;
  verdict: { kind: 'accepted' | 'rejected' | 'failed' | 'waiting'; reason: string | null; seq: number | null };
}

const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** The exchanges in journal order. */
export function exchangesOf(records: readonly LineRecord[]): Exchange[] {
  const out: Exchange[] = [];
  let current: Exchange | undefined;
  for (const r of records) {
    const body = (r.body ?? {}) as Record<string, unknown>;
    if (r.kind === 'model.requested') {
      current = { epoch: Number(r.epoch), purpose: text(body.purpose), attempt: Number(body.attempt), requestSeq: Number(r.seq), request: body.request, reply: null, verdict: { kind: 'waiting', reason: null, seq: null } };
      out.push(current);
    } else if (!current) continue;
    else if (r.kind === 'model.completed') {
      current.reply = { seq: Number(r.seq), text: text(body.reply), refused: body.refused !== undefined };
      current.verdict = { kind: 'accepted', reason: null, seq: Number(r.seq) };
    } else if (r.kind === 'model.failed') current.verdict = { kind: 'failed', reason: `${text(body.class)} ${text(body.code)}: ${text(body.message)}`, seq: Number(r.seq) };
    else if (r.kind === 'model.rejected') current.verdict = { kind: 'rejected', reason: text(body.reason), seq: Number(r.seq) };
  }
  return out;
}

function exchangeItem(x: Exchange): HTMLElement {
  const badge = x.verdict.kind === 'accepted' ? 'ok' : x.verdict.kind === 'waiting' ? 'dispatched' : 'failed';
  return el(
    'li',
    { class: `mr-item mr-${x.verdict.kind}`, 'data-purpose': x.purpose },
    el(
      'div',
      { class: 'mr-head' },
      el('span', { class: 'mono mr-purpose' }, x.purpose),
      el('span', { class: 'mr-attempt' }, `attempt ${x.attempt}`),
      el('span', { class: `outcome outcome-${badge}` }, x.verdict.kind),
      el('span', { class: 'mr-seq' }, `seq ${x.requestSeq}${x.verdict.seq !== null ? `–${x.verdict.seq}` : ''}`),
    ),
    x.verdict.kind === 'rejected' || x.verdict.kind === 'failed' ? el('p', { class: 'mr-reason' }, el('strong', {}, x.verdict.kind === 'rejected' ? 'rejected: ' : 'failed: '), x.verdict.reason ?? '') : null,
    x.reply ? el('div', { class: 'mr-reply' }, el('span', { class: 'mr-label' }, x.reply.refused ? 'reply (cut: over the cap or not well-formed)' : 'reply'), el('pre', {}, x.reply.text.length > 4000 ? `${x.reply.text.slice(0, 3999)}…` : x.reply.text)) : null,
    el('details', { class: 'mr-request' }, el('summary', {}, 'request'), el('pre', {}, JSON.stringify(x.request, null, 2))),
  );
}

/** The section: every exchange, epoch by epoch; a rejected reply's reason stands out. */
export function modelRepliesSection(records: readonly LineRecord[]): HTMLElement {
  const all = exchangesOf(records);
  const rejected = all.filter((x) => x.verdict.kind === 'rejected').length;
  const epochs = [...new Set(all.map((x) => x.epoch))];
  return el(
    'section',
    { class: 'mr', id: 'model-replies' },
    el('h2', {}, 'model replies', rejected ? el('span', { class: 'mr-count bad' }, ` — ${rejected} rejected`) : null),
    all.length === 0 ? el('p', { class: 'empty' }, 'the model has not been asked yet') : null,
    ...epochs.map((epoch) => el('div', { class: 'mr-epoch' }, el('h3', {}, el('span', { class: 'epoch-no' }, `epoch ${epoch}`)), el('ol', { class: 'mr-list' }, ...all.filter((x) => x.epoch === epoch).map(exchangeItem)))),
  );
}

