/**
 * A verification's verdict (verify.ts) as a panel: verified with the fingerprint and the key it was
 * checked against, the chain alone when there is no key or no seal yet, or the first bad seq.
 */
import { el } from './dom.js';
import type { ShownVerdict, Verdict } from './verify.js';

/** Why the page shows the server's verdict instead of its own. */
export const SERVER_VERIFIED_NOTE = 'verified by the server (this journal has redacted fields, so the page cannot check it itself)';

export function verdictPanel(shown: ShownVerdict): HTMLElement {
  if (shown.kind === 'server') return serverPanel(shown.verdict);
  const verdict: Verdict = shown;
  switch (verdict.kind) {
    case 'verified':
      return el(
        'section',
        { class: 'verdict ok', id: 'verdict' },
        el('h2', {}, '✓ verified in this page'),
        el('p', {}, `${verdict.records} records: chain, hashes and schemas hold, and the seal's signature is by the trusted key.`),
        el('dl', {}, el('dt', {}, 'fingerprint'), el('dd', { class: 'mono', id: 'fingerprint' }, verdict.fingerprint), el('dt', {}, 'sealed by key'), el('dd', { class: 'mono' }, verdict.keyId), el('dt', {}, 'trusted key'), el('dd', {}, verdict.key.label)),
      );
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
      return el(
        'section',
        { class: 'verdict ok server', id: 'verdict', 'data-by': 'server' },
        el('h2', {}, '✓ verified by the server'),
        note,
        el('p', {}, `${verdict.records} records: chain, hashes and schemas hold, and the seal's signature is by the trusted key.`),
        el('dl', {}, el('dt', {}, 'fingerprint'), el('dd', { class: 'mono', id: 'fingerprint' }, verdict.fingerprint), el('dt', {}, 'sealed by key'), el('dd', { class: 'mono' }, verdict.keyId), el('dt', {}, 'trusted key'), el('dd', {}, verdict.key.label)),
      );
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
