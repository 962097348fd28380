/**
 * Zoom and pan for the statechart's svg, by its viewBox — no library. The view is a centre (in the
 * layout's units) and a scale (screen pixels per unit); the viewBox is drawn from them and the svg's
 * size on screen, so a resize (another window width) keeps what is in the middle and how big it is.
 *
 * - the mouse wheel zooms around the pointer (the point under it stays put); a trackpad's pinch
 *   arrives as a wheel with ctrl and does the same;
 * - a drag pans (pointer events, so a finger does too);
 * - with the svg focused: + and − zoom around the middle, the arrows pan, 0 asks for the fit
 *   (`onFit`: the chart decides what fitting means).
 *
 * Each move a person makes calls `onMoved`, so the chart stops re-fitting by itself. The scale stays
 * within `limits` and the centre within `bounds` (the graph can be pushed to an edge, not lost).
 */

import type { Box } from './chart-drawing.js';

export interface ViewportOptions {
  /** A person zoomed or panned. */
  onMoved(): void;
  /** The key 0: fit again. */
  onFit(): void;
  /** After any change of the viewBox. */
  onChange(): void;
  /** The svg's size on screen changed (it entered the page, or the window was resized); the view is kept. */
  onResize(): void;
}

export interface Viewport {
  readonly scale: number;
  /** What is in view, in the layout's units (the viewBox). */
  visible(): Box;
  /** The svg's size on screen (0×0 while it is not in the document). */
  size(): { width: number; height: number };
  /** Centre `x, y` at `scale` (clamped). */
  set(x: number, y: number, scale: number): void;
  /** Zoom by `factor`, keeping the layout point under screen point `at` (svg-relative px) in place; the middle without one. */
  zoomBy(factor: number, at?: { x: number; y: number }): void;
  /** Pan by screen pixels. */
  panBy(dx: number, dy: number): void;
  /** The graph's extent and the smallest and largest scale. */
  limit(bounds: Box, minScale: number, maxScale: number): void;
}

export const KEY_PAN_PX = 80;
export const STEP = 1.25;

export function viewport(root: SVGSVGElement, options: ViewportOptions): Viewport {
  let cx = 0;
  let cy = 0;
  let scale = 1;
  let bounds: Box = { x: 0, y: 0, width: 0, height: 0 };
  let min = 0.05;
  let max = 4;

  const size = () => {
    const r = root.getBoundingClientRect();
    return { width: r.width, height: r.height };
  };
  const clamp = () => {
    scale = Math.min(max, Math.max(min, scale));
    cx = Math.min(bounds.x + bounds.width, Math.max(bounds.x, cx));
    cy = Math.min(bounds.y + bounds.height, Math.max(bounds.y, cy));
  };
  const r1 = (n: number) => Math.round(n * 10) / 10;
  const apply = () => {
    const { width, height } = size();
    if (width === 0 || height === 0) return; // not in the page yet: drawn when it is (the resize observer)
    const w = width / scale;
    const h = height / scale;
    root.setAttribute('viewBox', `${r1(cx - w / 2)} ${r1(cy - h / 2)} ${r1(w)} ${r1(h)}`);
    root.dataset.scale = scale.toFixed(3);
    options.onChange();
  };
  const view: Viewport = {
    get scale() {
      return scale;
    },
    visible() {
      const { width, height } = size();
      return { x: cx - width / scale / 2, y: cy - height / scale / 2, width: width / scale, height: height / scale };
    },
    size,
    set(x, y, s) {
      [cx, cy, scale] = [x, y, s];
      clamp();
      apply();
    },
    zoomBy(factor, at) {
      const { width, height } = size();
      const p = at ?? { x: width / 2, y: height / 2 };
      // The layout point under p, before and after: it stays under p.
      const ux = cx + (p.x - width / 2) / scale;
      const uy = cy + (p.y - height / 2) / scale;
      scale = Math.min(max, Math.max(min, scale * factor));
      cx = ux - (p.x - width / 2) / scale;
      cy = uy - (p.y - height / 2) / scale;
      clamp();
      apply();
    },
    panBy(dx, dy) {
      cx -= dx / scale;
      cy -= dy / scale;
      clamp();
      apply();
    },
    limit(b, lo, hi) {
      [bounds, min, max] = [b, lo, hi];
    },
  };

  root.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1;
      const r = root.getBoundingClientRect();
      view.zoomBy(Math.exp((-event.deltaY * unit) / (event.ctrlKey ? 100 : 500)), { x: event.clientX - r.left, y: event.clientY - r.top });
      options.onMoved();
    },
    { passive: false },
  );

  let drag: { id: number; x: number; y: number } | null = null;
  root.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    drag = { id: event.pointerId, x: event.clientX, y: event.clientY };
    root.setPointerCapture(event.pointerId);
    root.classList.add('dragging');
  });
  root.addEventListener('pointermove', (event) => {
    if (drag?.id !== event.pointerId) return;
    const [dx, dy] = [event.clientX - drag.x, event.clientY - drag.y];
    if (dx === 0 && dy === 0) return;
    [drag.x, drag.y] = [event.clientX, event.clientY];
    view.panBy(dx, dy);
    options.onMoved();
  });
  const end = (event: PointerEvent) => {
    if (drag?.id !== event.pointerId) return;
    drag = null;
    root.classList.remove('dragging');
  };
  root.addEventListener('pointerup', end);
  root.addEventListener('pointercancel', end);

  root.addEventListener('keydown', (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const pans: Record<string, [number, number]> = { ArrowLeft: [KEY_PAN_PX, 0], ArrowRight: [-KEY_PAN_PX, 0], ArrowUp: [0, KEY_PAN_PX], ArrowDown: [0, -KEY_PAN_PX] };
    const pan = pans[event.key];
    if (pan) view.panBy(...pan);
    else if (event.key === '+' || event.key === '=') view.zoomBy(STEP);
    else if (event.key === '-' || event.key === '_' || event.key === '−') view.zoomBy(1 / STEP);
    else if (event.key === '0') options.onFit();
    else return;
    // The chart's own keys: time travel's arrows (time-travel.ts, on the document) do not see them.
    event.preventDefault();
    event.stopPropagation();
    if (event.key !== '0') options.onMoved();
  });

  new ResizeObserver(() => {
    apply();
    options.onResize();
  }).observe(root);
  return view;
}
