/**
 * A verification's verdict (verify.ts) as a panel: verified with the fingerprint and the key it was
 * checked against, the chain alone when there is no key or no seal yet, or the first bad seq.
 */
import { el } from './dom.js';
import type { Verdict } from './verify.js';

export function verdictPanel(verdict: Verdict): HTMLElement {
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
