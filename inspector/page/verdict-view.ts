/**
 * A verification's verdict (verify.ts) as a panel: verified with the fingerprint and the key it was
 * checked against, the chain alone when there is no key or no seal yet, or the first bad seq.
 *
 * A verified seal is shown at the trust of the key that checked it (trusted-key.ts `Trust`): green
 * for a key you gave; amber for the store's own key and for the key a bundle carries, each saying
 * what it does not prove — the panel's colour never claims more than its words.
 */
import { el } from './dom.js';
import { trustOf, type Trust } from './trusted-key.js';
import type { ShownVerdict, Verdict } from './verify.js';

type Verified = Extract<Verdict, { kind: 'verified' }>;

/** What a seal checked against a key of each trust shows: its panel's class, heading and words. */
const TRUSTED: Record<Trust, { tone: string; heading: string; says: (records: number) => string }> = {
  given: {
    tone: 'ok',
    heading: '✓ verified in this page',
    says: (n) => `${n} records: chain, hashes and schemas hold, and the seal's signature is by the trusted key — a key you gave.`,
  },
  store: {
    tone: 'partial',
    heading: "✓ verified in this page — by the store's own key, not independent",
    says: (n) =>
      `${n} records: chain, hashes and schemas hold, and the seal's signature is by the key this store holds. That shows the journal is unchanged since that key sealed it, not whose key it is: give yours (--public-key, or drop your weft.pub here) to know who sealed it.`,
  },
  bundle: {
    tone: 'partial',
    heading: "✓ integrity only — sealed by the bundle's own key",
    says: (n) =>
      `${n} records: chain, hashes and schemas hold, and the seal's signature is by the key that came inside the bundle. That proves only integrity, not authorship: a bundle's own key proves only that the journal was not changed after signing, not who signed it — anyone can seal a journal with a key of their own and ship it beside it. Compare the key's id with one you trust, or drop your weft.pub here.`,
  },
};

/** The panel of a verified seal, at its key's trust; `source` says who checked (the page, or the server). */
function verifiedPanel(verdict: Verified, heading: (h: string) => string, by: 'page' | 'server', ...before: Node[]): HTMLElement {
  const trust = trustOf(verdict.key);
  const shown = TRUSTED[trust];
  return el(
    'section',
    { class: `verdict ${shown.tone} trust-${trust}${by === 'server' ? ' server' : ''}`, id: 'verdict', 'data-trust': trust, ...(by === 'server' ? { 'data-by': 'server' } : {}) },
    el('h2', {}, heading(shown.heading)),
    ...before,
    el('p', {}, shown.says(verdict.records)),
    el('dl', {}, el('dt', {}, 'fingerprint'), el('dd', { class: 'mono', id: 'fingerprint' }, verdict.fingerprint), el('dt', {}, 'sealed by key'), el('dd', { class: 'mono' }, verdict.keyId), el('dt', {}, 'trusted key'), el('dd', {}, verdict.key.label)),
  );
}

/** Why the page shows the server's verdict instead of its own. */
export const SERVER_VERIFIED_NOTE = 'verified by the server (this journal has redacted fields, so the page cannot check it itself)';

export function verdictPanel(shown: ShownVerdict): HTMLElement {
  if (shown.kind === 'server') return serverPanel(shown.verdict);
  const verdict: Verdict = shown;
  switch (verdict.kind) {
    case 'verified':
      return verifiedPanel(verdict, (h) => h, 'page');
    case 'chain-only':
      return el(
        'section',
        { class: 'verdict partial', id: 'verdict' },
        el('h2', {}, verdict.sealed ? 'chain intact; seal signature not checked' : 'chain intact; not sealed yet'),
        el(
          'p',
          {},
          verdict.sealed
            ? `${verdict.records} records hold. No trusted key was given, so the seal's signature was not checked: start weft inspect with --public-key FILE.`
            : `${verdict.records} records hold; the journal has no seal yet (still running or waiting): its seal is checked once it ends.`,
        ),
        el('dl', {}, el('dt', {}, verdict.sealed ? 'fingerprint' : 'tail'), el('dd', { class: 'mono', id: 'fingerprint' }, verdict.fingerprint ?? '—'), verdict.keyId ? el('dt', {}, 'sealed by key') : null, verdict.keyId ? el('dd', { class: 'mono' }, verdict.keyId) : null),
      );
    case 'failed':
      return el(
        'section',
        { class: 'verdict bad', id: 'verdict' },
        el('h2', {}, verdict.sealMismatch ? `✗ seal signature mismatch at seq ${verdict.seq}` : `✗ verification failed at seq ${verdict.seq}`),
        el('p', { class: 'mono', id: 'bad-seq', 'data-seq': String(verdict.seq) }, `seq ${verdict.seq}: ${verdict.problem}`),
      );
  }
}

/** The server's verdict on a journal it redacted: said to be the server's, and why. */
function serverPanel(verdict: Verdict): HTMLElement {
  const note = el('p', { class: 'verdict-source', id: 'verdict-source' }, SERVER_VERIFIED_NOTE);
  switch (verdict.kind) {
    case 'verified':
      return verifiedPanel(verdict, (h) => h.replace('verified in this page', 'verified by the server'), 'server', note);
    case 'chain-only':
      return el(
        'section',
        { class: 'verdict partial server', id: 'verdict', 'data-by': 'server' },
        el('h2', {}, verdict.sealed ? 'chain intact (checked by the server); seal signature not checked' : 'chain intact (checked by the server); not sealed yet'),
        el('p', { class: 'verdict-source', id: 'verdict-source' }, 'checked by the server (this journal has redacted fields, so the page cannot check it itself)'),
        el('dl', {}, el('dt', {}, verdict.sealed ? 'fingerprint' : 'tail'), el('dd', { class: 'mono', id: 'fingerprint' }, verdict.fingerprint ?? '—'), verdict.keyId ? el('dt', {}, 'sealed by key') : null, verdict.keyId ? el('dd', { class: 'mono' }, verdict.keyId) : null),
      );
    case 'failed':
      return el(
        'section',
        { class: 'verdict bad server', id: 'verdict', 'data-by': 'server' },
        el('h2', {}, `✗ ${verdict.sealMismatch ? 'seal signature mismatch' : 'verification failed'} at seq ${verdict.seq} (checked by the server)`),
        el('p', { class: 'verdict-source', id: 'verdict-source' }, 'checked by the server (this journal has redacted fields, so the page cannot check it itself)'),
        el('p', { class: 'mono', id: 'bad-seq', 'data-seq': String(verdict.seq) }, `seq ${verdict.seq}: ${verdict.problem}`),
      );
  }
}
