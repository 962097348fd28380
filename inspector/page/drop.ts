/**
 * Offline audit: a journal file or a `weft export` bundle dropped onto the page (or chosen with the
 * file button) is verified right here, with no server data — only the trusted key the viewer was
 * started with, if any (verify.ts `verifyFile`).
 */
import { el, replace } from './dom.js';
import { verdictPanel } from './verdict-view.js';
import { verifyFile } from './verify.js';
import type { TrustedKey } from './wire.js';

/** The drop panel; `trusted` is read when a file arrives. */
export function dropPanel(trusted: () => TrustedKey | null): HTMLElement {
  const input = el('input', { type: 'file', id: 'drop-file', accept: '.jsonl,.json,application/json,application/x-ndjson' });
  const result = el('div', { id: 'drop-result' });
  const panel = el(
    'section',
    { class: 'drop', id: 'drop' },
    el('h2', {}, 'verify a file'),
    el('p', {}, 'Drop a journal (.jsonl) or a bundle from weft export anywhere on this page, or ', el('label', { for: 'drop-file', class: 'button' }, 'choose one'), ': it is verified in this page, nothing is sent.'),
    input,
    result,
  );
  const check = async (file: File) => {
    const outcome = verifyFile(new Uint8Array(await file.arrayBuffer()), trusted());
    replace(
      result,
      el('p', { class: 'dropped' }, el('span', { class: 'mono' }, file.name), ` — ${outcome.input}${outcome.invocation ? ` of ${outcome.invocation}` : ''}`),
      outcome.problem ? el('p', { class: 'error', id: 'drop-problem' }, outcome.problem) : null,
      verdictPanel(outcome.verdict),
    );
  };
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file) void check(file);
  });
  document.addEventListener('dragover', (event) => {
    event.preventDefault();
    panel.classList.add('over');
  });
  document.addEventListener('dragleave', () => panel.classList.remove('over'));
  document.addEventListener('drop', (event) => {
    event.preventDefault();
    panel.classList.remove('over');
    const file = event.dataTransfer?.files[0];
    if (file) void check(file);
  });
  return panel;
}
