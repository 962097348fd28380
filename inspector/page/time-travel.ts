/**
 * Time travel: the control that steps one invocation's page through its journal, record by record
 * — a slider (input type=range, 0..n-1), ← and → buttons, "latest", and the keyboard (← → step,
 * Home and End jump, anywhere on the page but in a text field). Each move calls `onChange(k)`; the
 * page (invocation.ts `renderAt`) draws what records 0..k say: the statechart at the state replay
 * reached at k, the journal up to k, the epochs and steps as of k.
 *
 * Offered for a journal that rests (finished, hibernated, waiting): one still being written moves
 * on by itself. Pure DOM, no data of its own.
 */
import { el } from './dom.js';

export interface TravelOptions {
  /** Records in the journal (the slider goes 0..count-1). */
  count: number;
  /** Where it starts. */
  at: number;
  /** What record k is, for the readout beside the slider (text only). */
  describe(k: number): string;
  onChange(k: number): void;
}

/** The control in the page now (one at a time: a redraw replaces it), for the keyboard. */
let active: ((to: (k: number, last: number) => number) => void) | undefined;

function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target instanceof HTMLInputElement) return target.type !== 'range' && target.type !== 'button';
  return target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement || target.isContentEditable;
}

document.addEventListener('keydown', (event) => {
  if (!active || event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
  // The slider moves itself on arrows and Home/End when it has the focus.
  if (event.target instanceof HTMLInputElement && event.target.type === 'range') return;
  const moves: Record<string, (k: number, last: number) => number> = {
    ArrowLeft: (k) => k - 1,
    ArrowRight: (k) => k + 1,
    Home: () => 0,
    End: (_, last) => last,
  };
  const move = moves[event.key];
  if (!move) return;
  event.preventDefault();
  active(move);
});

/** The time-travel control (see the header). */
export function timeTravel(options: TravelOptions): HTMLElement {
  const last = Math.max(0, options.count - 1);
  let k = Math.min(Math.max(0, options.at), last);
  const slider = el('input', { type: 'range', min: '0', max: String(last), step: '1', value: String(k), id: 'travel-slider', 'aria-label': 'record' });
  const prev = el('button', { type: 'button', class: 'travel-step', id: 'travel-prev', title: 'previous record (←)' }, '←');
  const next = el('button', { type: 'button', class: 'travel-step', id: 'travel-next', title: 'next record (→)' }, '→');
  const latest = el('button', { type: 'button', class: 'travel-latest', id: 'travel-latest', title: 'the last record (End)' }, 'latest');
  const readout = el('span', { class: 'travel-readout', id: 'travel-readout' });
  const control = el('div', { class: 'travel', 'data-at': String(k) }, el('span', { class: 'travel-title' }, 'time travel'), prev, slider, next, latest, readout);

  const go = (to: number, notify: boolean) => {
    k = Math.min(Math.max(0, to), last);
    slider.value = String(k);
    prev.disabled = k === 0;
    next.disabled = k === last;
    latest.disabled = k === last;
    control.dataset.at = String(k);
    control.classList.toggle('past', k < last);
    readout.textContent = options.describe(k);
    if (notify) options.onChange(k);
  };
  slider.addEventListener('input', () => go(Number(slider.value), true));
  prev.addEventListener('click', () => go(k - 1, true));
  next.addEventListener('click', () => go(k + 1, true));
  latest.addEventListener('click', () => go(last, true));
  active = (move) => {
    if (!control.isConnected) return;
    const to = Math.min(Math.max(0, move(k, last)), last);
    if (to !== k) go(to, true);
  };
  go(k, false);
  return control;
}
