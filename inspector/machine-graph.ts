/**
 * The invocation statechart as a laid-out graph, for the viewer's page (`GET /api/machine`): read
 * from the machine definition itself (machines/invocation-machine.ts `invocationMachine`), never
 * drawn by hand, so a state or transition added to the machine appears in the page by itself.
 *
 * Every top-level state is a node (with the actor it invokes, and whether it rests or is final);
 * every transition with a target is an edge, named by its event — `onDone`, `onError`, `always`, or
 * the event's type (`approval.decided`, `resume`) — and by its guard's name (`planFound`,
 * `needsApproval`, `suspendedIn(execute)`…). An edge's id is `<source>|<event>|<index>`, the
 * index being its place among the source's transitions for that event: replay-trail.ts names the
 * transitions a replay takes by the same ids, so the page can draw the path taken.
 *
 * The layout is dagre's (@dagrejs/dagre), computed once per process (loaded by the first request);
 * the edge names live in machine-edges.ts. Two fans are kept out of it:
 * every invoking state's `onError` into `suspended`, and `suspended`'s `resume` back to each of
 * them. Laid out with the rest they would cross the whole chart; they are edges all the same
 * (`fan: true`) with straight points, and the page draws one only when a run took it.
 *
 * The whole machine is some 6,000 px wide: shrunk to a page, its labels are specks. So the page
 * opens on the path a run took, laid out on its own (`GET /api/machine?states=a,b&taken=e1,e2`,
 * `machineGraphFor`): only the states it visited, every transition between two of them, and
 * the fan transitions it took (laid out by dagre there, as a few of them cross nothing). Names
 * that are not the machine's are ignored; each path's layout is kept (the last PATHS_KEPT).
 */
import dagre from '@dagrejs/dagre';
import type { AnyTransitionDefinition } from 'xstate';
import { finalStates, invocationMachine, restingStates } from '../machines/invocation-machine.js';
import { edgeId, eventName, guardName } from './machine-edges.js';

export { edgeId, eventName, guardName, transitionIndex } from './machine-edges.js';

export interface Point {
  x: number;
  y: number;
}

export interface MachineNode {
  id: string;
  kind: 'initial' | 'state' | 'resting' | 'final';
  /** The actor the state invokes (`parseGoal`, `execute`…), or null. */
  invokes: string | null;
  /** The box: top-left corner and size. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface MachineEdge {
  id: string;
  source: string;
  target: string;
  /** `onDone`, `onError`, `always`, or the event's type. */
  event: string;
  /** The guard's name (with its static parameter: `suspendedIn(execute)`), or null for an unguarded transition. */
  guard: string | null;
  /** An unguarded transition after guarded ones for the same event: taken when none of them is. */
  otherwise: boolean;
  /** One of the two fans into and out of `suspended` (see the header): drawn only when taken. */
  fan: boolean;
  points: Point[];
  /** The label's centre. */
  label: Point;
}

export interface MachineGraph {
  machine: string;
  initial: string;
  /** The states laid out when only a path is (sorted), or null for the whole machine. */
  only: string[] | null;
  /** The states the whole machine has (what a path's layout leaves out is the rest). */
  total: number;
  width: number;
  height: number;
  nodes: MachineNode[];
  edges: MachineEdge[];
}

const FONT_W = 7.2; // px per character of the 12.5px state name, a little generous
const LABEL_W = 6.2; // px per character of an 11px edge label
const LABEL_H = 16;
const INVOKES_W = 6.3; // px per character of the 10px "invokes <actor>" line
const NODE_H = 46;

interface RawEdge {
  source: string;
  target: string;
  event: string;
  index: number;
  guard: string | null;
  otherwise: boolean;
}

function rawEdges(): { nodes: Array<Omit<MachineNode, 'x' | 'y' | 'width' | 'height'>>; edges: RawEdge[] } {
  const root = invocationMachine.root;
  const initial = (root.config.initial as string | undefined) ?? '';
  const nodes: Array<Omit<MachineNode, 'x' | 'y' | 'width' | 'height'>> = [];
  const edges: RawEdge[] = [];
  for (const [key, node] of Object.entries(root.states)) {
    const kind = key === initial ? 'initial' : (finalStates as readonly string[]).includes(key) || node.type === 'final' ? 'final' : (restingStates as readonly string[]).includes(key) ? 'resting' : 'state';
    const src = node.invoke[0]?.src;
    nodes.push({ id: key, kind, invokes: typeof src === 'string' ? src : null });
    const lists: Array<readonly AnyTransitionDefinition[]> = [...node.transitions.values(), node.always ?? []];
    for (const list of lists) {
      list.forEach((t, index) => {
        const target = t.target?.[0]?.key;
        if (target === undefined) return; // a transition that only acts (none at this level today)
        const guard = guardName(t.guard);
        edges.push({ source: key, target, event: eventName(t.eventType), index, guard, otherwise: guard === null && index > 0 });
      });
    }
  }
  return { nodes, edges };
}

let parts: ReturnType<typeof rawEdges> | undefined;
/** The machine's states and transitions, read from its definition once. */
const machineParts = () => (parts ??= rawEdges());

const isFan = (e: RawEdge) => (e.event === 'onError' && e.target === 'suspended') || (e.source === 'suspended' && e.event === 'resume');

/** Where the segment from a box's centre towards `to` leaves the box. */
function border(n: MachineNode, to: Point): Point {
  const cx = n.x + n.width / 2;
  const cy = n.y + n.height / 2;
  const dx = to.x - cx;
  const dy = to.y - cy;
  if (dx === 0 && dy === 0) return { x: cx, y: cy };
  const s = Math.min(dx === 0 ? Infinity : n.width / 2 / Math.abs(dx), dy === 0 ? Infinity : n.height / 2 / Math.abs(dy));
  return { x: cx + dx * s, y: cy + dy * s };
}

const round = (p: Point): Point => ({ x: Math.round(p.x * 10) / 10, y: Math.round(p.y * 10) / 10 });

/** Which part of the machine to lay out: the states a run visited and the fan transitions it took (see the header). */
export interface MachinePath {
  states: ReadonlySet<string>;
  taken: ReadonlySet<string>;
}

/** The machine laid out (see the header): the whole of it, or only `path`. */
export function layOutMachine(path?: MachinePath): MachineGraph {
  const { nodes: all, edges: allEdges } = machineParts();
  const raw = path ? all.filter((n) => path.states.has(n.id)) : all;
  const laidOut = (e: RawEdge) => !isFan(e) || (path !== undefined && path.taken.has(edgeId(e.source, e.event, e.index)));
  const edges = path ? allEdges.filter((e) => path.states.has(e.source) && path.states.has(e.target) && laidOut(e)) : allEdges;
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 36, edgesep: 14, marginx: 12, marginy: 18 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of raw) {
    const width = Math.max(96, Math.ceil(Math.max(n.id.length * FONT_W, n.invokes ? `invokes ${n.invokes}`.length * INVOKES_W : 0)) + 26);
    g.setNode(n.id, { width, height: NODE_H });
  }
  for (const e of edges) {
    if (!laidOut(e)) continue;
    const text = labelText(e);
    g.setEdge(e.source, e.target, { width: Math.ceil(text.length * LABEL_W) + 8, height: LABEL_H, labelpos: 'c' }, edgeId(e.source, e.event, e.index));
  }
  dagre.layout(g);
  const nodes: MachineNode[] = raw.map((n) => {
    const box = g.node(n.id);
    return { ...n, x: Math.round(box.x! - box.width / 2), y: Math.round(box.y! - box.height / 2), width: box.width, height: box.height };
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const laid: MachineEdge[] = edges.map((e) => {
    const id = edgeId(e.source, e.event, e.index);
    const common = { id, source: e.source, target: e.target, event: e.event, guard: e.guard, otherwise: e.otherwise, fan: isFan(e) };
    if (!laidOut(e)) {
      const a = byId.get(e.source)!;
      const b = byId.get(e.target)!;
      const from = border(a, { x: b.x + b.width / 2, y: b.y + b.height / 2 });
      const to = border(b, { x: a.x + a.width / 2, y: a.y + a.height / 2 });
      return { ...common, points: [round(from), round(to)], label: round({ x: (from.x + to.x) / 2, y: (from.y + to.y) / 2 }) };
    }
    const label = g.edge({ v: e.source, w: e.target, name: id });
    return { ...common, points: (label.points ?? []).map(round), label: round({ x: label.x ?? 0, y: label.y ?? 0 }) };
  });
  const size = g.graph();
  return {
    machine: invocationMachine.id,
    initial: all.find((n) => n.kind === 'initial')?.id ?? '',
    only: path ? raw.map((n) => n.id).sort() : null,
    total: all.length,
    width: Math.ceil(size.width ?? 0),
    height: Math.ceil(size.height ?? 0),
    nodes,
    edges: laid,
  };
}

/** The text an edge's label shows: the guard's name, else the event (an unguarded fallback says so). */
export function labelText(e: { event: string; guard: string | null; otherwise: boolean }): string {
  if (e.guard) return e.guard;
  if (e.otherwise) return `${e.event} (otherwise)`;
  return e.event;
}

let cached: MachineGraph | undefined;

/** The laid-out machine, computed on first use and kept for the life of the process. */
export function machineGraph(): MachineGraph {
  cached ??= layOutMachine();
  return cached;
}

const PATHS_KEPT = 64;
const paths = new Map<string, MachineGraph>();

/**
 * What `GET /api/machine` answers for its query: `states` (comma-separated state names) lays out only
 * those, with the fan transitions named in `taken` (edge ids); without `states`, the whole machine.
 * Names the machine does not have are dropped; a path of no known state is the whole machine.
 */
export function machineGraphFor(query: URLSearchParams): MachineGraph {
  const listed = query.get('states');
  if (listed === null) return machineGraph();
  const known = new Set(machineParts().nodes.map((n) => n.id));
  const states = [...new Set(listed.split(',').filter((s) => known.has(s)))].sort();
  if (states.length === 0) return machineGraph();
  const fans = new Set(machineParts().edges.filter(isFan).map((e) => edgeId(e.source, e.event, e.index)));
  const taken = [...new Set((query.get('taken') ?? '').split(',').filter((e) => fans.has(e)))].sort();
  const key = `${states.join(',')}\u0000${taken.join(',')}`;
  let graph = paths.get(key);
  if (graph === undefined) {
    graph = layOutMachine({ states: new Set(states), taken: new Set(taken) });
    while (paths.size >= PATHS_KEPT) paths.delete(paths.keys().next().value!);
  } else paths.delete(key);
  paths.set(key, graph);
  return graph;
}
