/**
 * Offline audit: a journal file or a `weft export` bundle dropped onto the page (or chosen with the
 * file button) is verified right here, with no server data — against the key dropped onto the page,
 * else the key the viewer was started with, if any, else a bundle's own key (verify.ts `verifyFile`,
 * `offlineKey`) — and then drawn as a run (offline-run.ts), its verdict first. A public key file
 * (weft.pub) dropped the same way becomes the page's trusted key (trusted-key.ts), and the file
 * dropped last is verified and drawn again against it.
 */
import { el, replace } from './dom.js';
import { droppedKey, KEY_CHANGED, parseKeyFile, setDroppedKey } from './trusted-key.js';
import { offlineRunView } from './offline-run.js';
import { offlineKey, verifyFile } from './verify.js';
import type { TrustedKey } from './wire.js';

/** What the page trusts now, with a button to forget a dropped key. */
function keyLine(): HTMLElement {
  const key = droppedKey();
  if (!key) return el('p', { class: 'note', id: 'dropped-key' }, 'Drop your weft.pub here to check seals against a key you hold.');
  const forget = el('button', { type: 'button', class: 'button', id: 'forget-key' }, 'forget it');
  forget.addEventListener('click', () => setDroppedKey(null));
  return el('p', { class: 'note', id: 'dropped-key', 'data-key-id': key.keyId }, 'trusted key: ', el('span', { class: 'mono' }, key.keyId.slice(0, 16)), ` — ${key.label} `, forget);
}

/** The drop panel; `trusted` is read when a file arrives. */
export function dropPanel(trusted: () => TrustedKey | null): HTMLElement {
  const input = el('input', { type: 'file', id: 'drop-file', accept: '.jsonl,.json,application/json,application/x-ndjson' });
  const result = el('div', { id: 'drop-result' });
  const panel = el(
    'section',
    { class: 'drop', id: 'drop' },
    el('h2', {}, 'verify a file'),
    el('p', {}, 'Drop a journal (.jsonl), a bundle from weft export or a public key (weft.pub) anywhere on this page, or ', el('label', { for: 'drop-file', class: 'button' }, 'choose one'), ': it is read in this page, nothing is sent.'),
    input,
    keyLine(),
    result,
  );
  document.addEventListener(KEY_CHANGED, () => panel.querySelector('#dropped-key')?.replaceWith(keyLine()));
  const check = async (file: File) => {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const asKey = parseKeyFile(bytes, file.name);
    if (asKey.kind === 'key') {
      setDroppedKey(asKey.key); // the file dropped last, if any, is drawn again against it (KEY_CHANGED)
      if (!last) replace(result, el('p', { class: 'dropped' }, 'seals are now checked against ', el('span', { class: 'mono' }, asKey.key.keyId), ` (${file.name})`));
      return;
    }
    if (asKey.kind === 'refused') {
      replace(result, el('p', { class: 'error', id: 'drop-problem' }, asKey.problem));
      return;
    }
    last = { name: file.name, bytes };
    show(last);
  };
  /** The file dropped last, verified (first) and drawn as a run. */
  let last: { name: string; bytes: Uint8Array } | null = null;
  const show = ({ name, bytes }: { name: string; bytes: Uint8Array }) => {
    const outcome = verifyFile(bytes, droppedKey() ?? offlineKey(trusted()));
    replace(
      result,
      el('p', { class: 'dropped' }, el('span', { class: 'mono' }, name), ` — ${outcome.input}${outcome.invocation ? ` of ${outcome.invocation}` : ''}`),
      outcome.problem ? el('p', { class: 'error', id: 'drop-problem' }, outcome.problem) : null,
      offlineRunView(name, outcome),
    );
  };
  document.addEventListener(KEY_CHANGED, () => {
    if (last) show(last);
  });
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
