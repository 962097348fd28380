/**
 * One laid-out graph of the invocation machine drawn as SVG (the layout is the server's:
 * `/api/machine`, inspector/machine-graph.ts — the whole machine, or only the path a run took). Each
 * state is a box (dashed when the machine rests there, doubled when final, with the actor it
 * invokes), each transition a curve labelled with its guard's name, or its event when it has none.
 *
 * `show(view)` lights it: the current state, the states visited and the transitions taken; the
 * rest is dimmed by the style sheet (the svg's `lit` class, set by statechart.ts). The two fans into
 * and out of `suspended` are drawn only when taken.
 *
 * Built with createElementNS; every text (state, actor, guard and event names, all from the
 * machine's own definition) goes in as textContent. Classes only: the style sheet is style.ts's.
 */
import type { MachineGraphView } from './wire.js';
import type { ChartView } from './chart-view.js';

export const SVG = 'http://www.w3.org/2000/svg';

type Attrs = Record<string, string | number>;

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Array<SVGElement | string>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

/** A rectangle in the layout's units. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The arrow heads the edges use, once per svg (their ids are the style sheet's). */
export function arrowDefs(): SVGDefsElement {
  const arrow = (id: string) => svg('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse', markerUnits: 'userSpaceOnUse' }, svg('path', { d: 'M0,1 L10,5 L0,9 z' }));
  return svg('defs', {}, arrow('sc-arrow'), arrow('sc-arrow-taken'), arrow('sc-arrow-last'));
}

/** A smooth path through dagre's points (a B-spline, as d3's curveBasis draws it). */
function curve(points: ReadonlyArray<{ x: number; y: number }>): string {
  const f = (n: number) => Math.round(n * 10) / 10;
  if (points.length === 0) return '';
  if (points.length < 3) return `M${points.map((p) => `${f(p.x)},${f(p.y)}`).join(' L')}`;
  let [x0, y0, x1, y1] = [points[0]!.x, points[0]!.y, points[1]!.x, points[1]!.y];
  const bezier = (x: number, y: number) => ` C${f((2 * x0 + x1) / 3)},${f((2 * y0 + y1) / 3)} ${f((x0 + 2 * x1) / 3)},${f((y0 + 2 * y1) / 3)} ${f((x0 + 4 * x1 + x) / 6)},${f((y0 + 4 * y1 + y) / 6)}`;
  let d = `M${f(x0)},${f(y0)} L${f((5 * x0 + x1) / 6)},${f((5 * y0 + y1) / 6)}`;
  for (const p of points.slice(2)) {
    d += bezier(p.x, p.y);
    [x0, y0, x1, y1] = [x1, y1, p.x, p.y];
  }
  return `${d}${bezier(x1, y1)} L${f(x1)},${f(y1)}`;
}

const TONES: Record<string, string> = { completed: 'ok', failed: 'bad', handedOff: 'bad', superseded: 'wait', superseding: 'wait', cancelled: 'wait', cancelling: 'wait', closingCancelled: 'wait', failing: 'bad', handingOff: 'bad', awaitingApproval: 'wait', awaitingTimer: 'wait', hibernated: 'wait', suspended: 'wait' };

/** `/api/machine`'s answer; a path's layout says which states it holds (machine-graph.ts `only`). */
export type LaidOutGraph = MachineGraphView & { only?: string[] | null; total?: number };

export interface Drawing {
  graph: LaidOutGraph;
  /** The drawing's group, to put in an svg beside `arrowDefs()`. */
  group: SVGGElement;
  /** The whole layout's extent. */
  bounds: Box;
  /** A state's box, or undefined when this layout leaves it out. */
  box(state: string): Box | undefined;
  show(view: ChartView): void;
}

/** `graph` drawn, with nothing lit. */
export function drawGraph(graph: LaidOutGraph): Drawing {
  const edgeLayer = svg('g', { class: 'sc-edges' });
  const labelLayer = svg('g', { class: 'sc-labels' });
  const nodeLayer = svg('g', { class: 'sc-nodes' });
  const edges = new Map<string, SVGGElement[]>();
  for (const e of graph.edges) {
    const full = `${e.source} → ${e.target} on ${e.event}${e.guard ? ` [${e.guard}]` : ''}`;
    const path = svg('g', { class: `sc-edge${e.fan ? ' fan' : ''}`, 'data-edge': e.id, 'data-source': e.source, 'data-target': e.target }, svg('title', {}, full), svg('path', { d: curve(e.points) }));
    edgeLayer.appendChild(path);
    const text = e.guard ?? (e.otherwise ? 'otherwise' : e.event);
    const width = text.length * 6.1 + 8;
    const label = svg(
      'g',
      { class: `sc-edge sc-label${e.fan ? ' fan' : ''}${e.guard ? ' guarded' : ''}`, 'data-edge': e.id, transform: `translate(${e.label.x},${e.label.y})` },
      svg('title', {}, full),
      svg('rect', { x: -width / 2, y: -8, width, height: 16, rx: 3 }),
      svg('text', { class: e.guard ? 'guard' : 'event', 'text-anchor': 'middle', y: 4 }, text),
    );
    labelLayer.appendChild(label);
    edges.set(e.id, [path, label]);
  }
  const nodes = new Map<string, SVGGElement>();
  for (const n of graph.nodes) {
    const g = svg('g', { class: `sc-node ${n.kind}`, 'data-state': n.id, transform: `translate(${n.x},${n.y})` });
    g.appendChild(svg('title', {}, n.invokes ? `${n.id} (invokes ${n.invokes})` : n.id));
    g.appendChild(svg('rect', { class: 'box', width: n.width, height: n.height, rx: n.kind === 'final' ? n.height / 2 : 9 }));
    if (n.kind === 'final') g.appendChild(svg('rect', { class: 'inner', x: 3, y: 3, width: n.width - 6, height: n.height - 6, rx: (n.height - 6) / 2 }));
    g.appendChild(svg('text', { class: 'name', x: n.width / 2, y: n.invokes ? n.height / 2 - 2 : n.height / 2 + 4.5, 'text-anchor': 'middle' }, n.id));
    if (n.invokes) g.appendChild(svg('text', { class: 'invokes', x: n.width / 2, y: n.height / 2 + 13, 'text-anchor': 'middle' }, `invokes ${n.invokes}`));
    if (n.kind === 'initial') {
      // The initial state's mark: a dot with an arrow into its box, from above (the top rank has nothing over it).
      g.appendChild(svg('circle', { class: 'start', cx: n.width / 2, cy: -14, r: 4.5 }));
      g.appendChild(svg('path', { class: 'start-line', d: `M${n.width / 2},-10 L${n.width / 2},-1` }));
    }
    nodes.set(n.id, g);
    nodeLayer.appendChild(g);
  }
  const group = svg('g', { class: 'sc-graph', 'data-layout': graph.only ? 'path' : 'all' }, edgeLayer, nodeLayer, labelLayer);
  const boxes = new Map(graph.nodes.map((n) => [n.id, { x: n.x, y: n.y, width: n.width, height: n.height }]));

  return {
    graph,
    group,
    bounds: { x: 0, y: 0, width: graph.width, height: graph.height },
    box: (state) => boxes.get(state),
    show(view: ChartView) {
      for (const [id, g] of nodes) {
        g.classList.toggle('visited', view.visited.has(id));
        g.classList.toggle('current', view.current === id);
        for (const tone of ['ok', 'bad', 'wait', 'run']) g.classList.toggle(`tone-${tone}`, view.current === id && (TONES[id] ?? 'run') === tone);
      }
      for (const [id, parts] of edges) {
        for (const part of parts) {
          part.classList.toggle('taken', view.taken.has(id));
          part.classList.toggle('last', view.last === id);
        }
      }
    },
  };
}
