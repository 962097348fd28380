/**
 * The invocation statechart on an invocation's page, drawn from the layouts the server computes
 * from the machine definition (`/api/machine`, inspector/machine-graph.ts) — no picture drawn by
 * hand — and lit by the journal replayed (chart-view.ts `viewAt`).
 *
 * The whole machine is too wide to read at a page's width, so the chart opens on the path the run
 * took: only the states its trail visits, laid out on their own (`/api/machine?states=…`), fitted
 * to the frame at a scale its labels can be read at, the current state in view. The other states
 * are collapsed; "All states" draws the whole machine, those not taken dimmed. Zoom and pan are
 * chart-viewport.ts's (wheel, drag, keys, the buttons); "Fit" (and the key 0) brings the path view
 * back. A person's zoom or pan is kept: the chart re-fits by itself (a resize, the path growing as
 * the run moves) only until they move it. Moving to another record (time travel) brings the state
 * at that record into view.
 *
 * The chart is one element for the page's life (`statechart(graph)` hands the same one back to
 * each redraw), so a live redraw keeps its zoom, its layouts and its focus.
 */
import { el, getJson } from './dom.js';
import { arrowDefs, drawGraph, svg, type Box, type Drawing, type LaidOutGraph } from './chart-drawing.js';
import type { ChartView } from './chart-view.js';
import { STEP, viewport } from './chart-viewport.js';
import type { MachineGraphView } from './wire.js';

export { EMPTY_VIEW, stateOfStatus, viewAt, type ChartView } from './chart-view.js';

export interface Statechart {
  element: HTMLElement;
  show(view: ChartView): void;
}

/** Layout units around what is fitted. */
const PAD = 24;
/** The smallest scale a fit goes to: an edge's 10.5 px label is then 9 px high or more (a state's name more still). */
export const LEGIBLE = 0.85;
/** A short path is not blown up past this. */
const MAX_FIT = 1.4;
const MAX_SCALE = 4;
const MIN_HEIGHT = 300;
/** The frame's tallest: this share of the window (a path taller than fits at LEGIBLE is panned, not shrunk). */
const HEIGHT_SHARE = 0.72;

let kept: { graph: MachineGraphView; chart: Statechart } | null = null;

/** The page's statechart for `graph` (the same one for the same graph: see the header). */
export function statechart(graph: MachineGraphView): Statechart {
  if (kept?.graph === graph) {
    // A redraw moves it into the new section, out of the document for a moment: give the focus back.
    const active = document.activeElement;
    if (active instanceof Element && kept.chart.element.contains(active)) queueMicrotask(() => (active as HTMLElement | SVGElement).focus({ preventScroll: true }));
    return kept.chart;
  }
  const chart = makeChart(graph as LaidOutGraph);
  kept = { graph, chart };
  return chart;
}

/** A statechart of its own for `graph`, not the page's (a dropped file's run beside the page's own: offline-run.ts). */
export function separateStatechart(graph: MachineGraphView): Statechart {
  return makeChart(graph as LaidOutGraph);
}

const union = (boxes: Box[]): Box | undefined => {
  if (boxes.length === 0) return undefined;
  const x = Math.min(...boxes.map((b) => b.x));
  const y = Math.min(...boxes.map((b) => b.y));
  return { x, y, width: Math.max(...boxes.map((b) => b.x + b.width)) - x, height: Math.max(...boxes.map((b) => b.y + b.height)) - y };
};
const grow = (b: Box, by: number): Box => ({ x: b.x - by, y: b.y - by, width: b.width + 2 * by, height: b.height + 2 * by });
const centre = (b: Box) => ({ x: b.x + b.width / 2, y: b.y + b.height / 2 });
const inside = (b: Box, view: Box) => b.x >= view.x && b.y >= view.y && b.x + b.width <= view.x + view.width && b.y + b.height <= view.y + view.height;

function makeChart(graph: LaidOutGraph): Statechart {
  const whole = drawGraph(graph);
  const fans = new Set(graph.edges.filter((e) => e.fan).map((e) => e.id));
  const total = graph.nodes.length;
  const root = svg('svg', { class: 'statechart-svg', role: 'img', tabindex: 0, 'aria-label': `the ${graph.machine} statechart: + and − zoom, the arrows pan, 0 fits the path taken`, 'data-machine': graph.machine, preserveAspectRatio: 'xMidYMid meet' }, arrowDefs(), whole.group);
  const button = (cls: string, text: string, label: string, title: string) => el('button', { type: 'button', class: `sc-button ${cls}`, 'aria-label': label, title }, text);
  const zoomIn = button('sc-zoom-in', '+', 'Zoom in', 'Zoom in (+, or the wheel)');
  const zoomOut = button('sc-zoom-out', '−', 'Zoom out', 'Zoom out (−, or the wheel)');
  const fitButton = button('sc-fit', 'Fit', 'Fit: the path taken', 'Fit the path the run took into view (0)');
  const expand = button('sc-expand', 'All states', 'Show all states', 'Draw the whole machine, the states not taken dimmed');
  const zoomText = el('span', { class: 'sc-zoom', title: 'zoom' });
  const scope = el('span', { class: 'sc-scope' });
  const hint = el('span', { class: 'sc-hint' }, 'wheel: zoom · drag: pan · keys + − 0 and arrows once the chart has the focus');
  const tools = el('div', { class: 'sc-tools', role: 'toolbar', 'aria-label': 'statechart view' }, zoomOut, zoomText, zoomIn, fitButton, expand, scope, hint);
  const element = el('div', { class: 'sc-viewport' }, tools, root);

  /** Each path's drawing, by its key (`routeKey`), once the server has laid it out. */
  const paths = new Map<string, Drawing | 'loading' | 'failed'>();
  let drawn: Drawing = whole;
  let mode: 'path' | 'all' = 'path';
  let moved = false;
  let view: ChartView = { current: null, visited: new Set(), taken: new Set(), last: null };
  let routeKey: string | null = null;
  let focused: string | null = null;

  const vp = viewport(root, {
    onMoved: () => (moved = true),
    onFit: () => fit(),
    onChange: () => (zoomText.textContent = `${Math.round(vp.scale * 100)}%`),
    onResize: () => {
      if (!moved) fit();
    },
  });
  const pathDrawing = (): Drawing | undefined => {
    const d = routeKey === null ? undefined : paths.get(routeKey);
    return typeof d === 'object' ? d : undefined;
  };
  const maxHeight = () => Math.max(MIN_HEIGHT, Math.round(window.innerHeight * HEIGHT_SHARE));
  const setHeight = (px: number) => {
    root.style.height = `${Math.round(px)}px`;
  };

  /** Draw `d` in the svg (lit as the chart is) and let the view roam over it. */
  function display(d: Drawing): void {
    if (drawn !== d) {
      drawn.group.replaceWith(d.group);
      drawn = d;
    }
    d.show(view);
    root.dataset.layout = d.graph.only ? 'path' : 'all';
    const { width, height } = vp.size();
    const fitsAll = width > 0 ? Math.min(width / (d.bounds.width + 2 * PAD), (height || maxHeight()) / (d.bounds.height + 2 * PAD)) : 0.05;
    vp.limit(grow(d.bounds, PAD), Math.min(LEGIBLE, fitsAll * 0.8), MAX_SCALE);
    describe();
  }

  /**
   * Show `box` whole when it fits at a legible scale (not past MAX_FIT), the frame as tall as it
   * needs; else at LEGIBLE, the frame at its tallest, around `focus` (kept within the box).
   */
  function fitBox(box: Box, focus: Box | undefined): void {
    const width = vp.size().width;
    if (width === 0) return; // not in the page yet: the resize observer fits it when it is
    const b = grow(box, PAD);
    const tallest = maxHeight();
    const scale = Math.max(LEGIBLE, Math.min(MAX_FIT, width / b.width, tallest / b.height));
    setHeight(Math.min(tallest, Math.max(MIN_HEIGHT, b.height * scale)));
    const { width: w, height: h } = vp.size();
    const [vw, vh] = [w / scale, h / scale];
    const c = centre(b);
    const f = focus ? centre(focus) : c;
    const x = vw >= b.width ? c.x : Math.min(b.x + b.width - vw / 2, Math.max(b.x + vw / 2, f.x));
    const y = vh >= b.height ? c.y : Math.min(b.y + b.height - vh / 2, Math.max(b.y + vh / 2, f.y));
    vp.set(x, y, scale);
  }

  /** The path view, fitted (Fit, the key 0, and what the chart opens on); the whole machine when there is no path. */
  function fit(): void {
    moved = false;
    const path = pathDrawing();
    if (view.route && path) {
      mode = 'path';
      display(path);
      fitBox(path.bounds, view.current ? path.box(view.current) : undefined);
    } else if (view.route) {
      // The path's own layout is on its way (or could not be had): its states in the whole machine meanwhile.
      mode = 'path';
      display(whole);
      const box = union([...view.route.states].flatMap((s) => whole.box(s) ?? []));
      fitBox(box ?? whole.bounds, view.current ? whole.box(view.current) : undefined);
    } else {
      // Not replayed: the whole machine at full size, on the state the status gives (if any).
      display(whole);
      const at = view.current ? whole.box(view.current) : undefined;
      if (at && vp.size().width > 0) {
        setHeight(maxHeight());
        vp.set(centre(at).x, centre(at).y, 1);
      } else fitBox(whole.bounds, undefined);
    }
    focused = view.current;
  }

  /** Bring `state` into view (time travel's record moved the run there), keeping the zoom. */
  function focusOn(state: string | null): void {
    focused = state;
    const box = state === null ? undefined : drawn.box(state);
    if (!box || vp.size().width === 0) return;
    if (inside(grow(box, 8), vp.visible())) return;
    const c = centre(box);
    vp.set(c.x, c.y, vp.scale);
  }

  function describe(): void {
    const path = drawn !== whole ? drawn.graph.only ?? [] : null;
    scope.textContent = path
      ? `the path taken: ${path.length} of ${total} states (the other ${total - path.length} collapsed)`
      : view.route
        ? mode === 'path'
          ? 'the path taken, among all states (laying it out…)'
          : `all ${total} states, those not taken dimmed`
        : `all ${total} states`;
    expand.hidden = !view.route;
    expand.textContent = mode === 'all' ? 'Path only' : 'All states';
    expand.setAttribute('aria-label', mode === 'all' ? 'Show only the path taken' : 'Show all states');
    expand.setAttribute('aria-pressed', String(mode === 'all'));
    root.dataset.mode = mode;
  }

  /** Ask the server for the layout of the path `key` names, and show it when it comes (unless the path moved on). */
  async function loadPath(key: string, route: NonNullable<ChartView['route']>): Promise<void> {
    paths.set(key, 'loading');
    const query = new URLSearchParams({ states: [...route.states].sort().join(','), taken: [...route.taken].filter((e) => fans.has(e)).sort().join(',') });
    try {
      paths.set(key, drawGraph(await getJson<LaidOutGraph>(`/api/machine?${query}`)));
    } catch {
      paths.set(key, 'failed');
      return;
    }
    if (key !== routeKey || mode !== 'path') return;
    if (!moved) fit();
    else {
      display(pathDrawing()!);
      focusOn(view.current);
    }
  }

  zoomIn.addEventListener('click', () => (vp.zoomBy(STEP), (moved = true)));
  zoomOut.addEventListener('click', () => (vp.zoomBy(1 / STEP), (moved = true)));
  fitButton.addEventListener('click', () => fit());
  expand.addEventListener('click', () => {
    if (mode === 'all') return fit();
    mode = 'all';
    moved = true;
    const scale = vp.scale;
    display(whole);
    setHeight(maxHeight());
    const at = view.current ? whole.box(view.current) : undefined;
    const c = centre(at ?? whole.bounds);
    vp.set(c.x, c.y, scale);
    focused = view.current;
  });

  return {
    element,
    show(next: ChartView) {
      view = next;
      root.dataset.current = next.current ?? '';
      root.classList.toggle('lit', next.route !== undefined);
      const key = next.route ? `${[...next.route.states].sort().join(',')}|${[...next.route.taken].filter((e) => fans.has(e)).sort().join(',')}` : null;
      if (key !== routeKey) {
        routeKey = key;
        if (key !== null && next.route && !paths.has(key)) void loadPath(key, next.route);
        if (!moved) fit();
        else if (mode === 'path' && pathDrawing()) display(pathDrawing()!);
      }
      drawn.show(next);
      describe();
      if (next.current !== focused) focusOn(next.current);
    },
  };
}
