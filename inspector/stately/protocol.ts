/**
 * The messages of the Stately inspector's WebSocket protocol (`@statelyai/inspect` 0.7: `@xstate.actor`,
 * `@xstate.event`, `@xstate.snapshot`), as Weft sends them for one invocation:
 *
 * - The actor is keyed by the INVOCATION ID (its `sessionId`), the same in every process that
 *   runs, resumes or serves it — never by XState's per-process `x:N` counter — so a resume
 *   continues the same actor in the inspector.
 * - A snapshot is bounded in size, not only in depth: its state value and status, and a small
 *   summary of the context (epoch, goal task, plan size, steps done, failure or suspension code,
 *   re-plans, fingerprint). The intent, args, results and observations — customer data — are
 *   never in it; every string in it is cut, and the whole is at most MAX_SNAPSHOT_BYTES.
 * - Events are either the machine's own (a `xstate.done.actor.*` that moved it) or synthesized
 *   from durable records (record-events.ts), never carrying step args or results.
 *
 * Pure: the caller supplies `createdAt` (the relay's clock); nothing here reads one.
 */

/** The @statelyai/inspect protocol version these messages claim. */
export const PROTOCOL_VERSION = '0.7.2';
/** No snapshot message's `snapshot` is larger than this, as JSON. */
export const MAX_SNAPSHOT_BYTES = 2048;
const MAX_TEXT = 160;

export type InspectorMessage =
  | { type: '@xstate.actor'; name: string; sessionId: string; rootId: string; parentId?: undefined; id: null; definition: string; snapshot: BoundedSnapshot; createdAt: string; _version: string }
  | { type: '@xstate.event'; sessionId: string; sourceId?: string; event: { type: string; [field: string]: unknown }; id: null; rootId: string; createdAt: string; _version: string }
  | { type: '@xstate.snapshot'; sessionId: string; snapshot: BoundedSnapshot; event: { type: string }; id: null; rootId: string; createdAt: string; _version: string };

export interface BoundedSnapshot {
  status: string;
  value: unknown;
  context: Record<string, unknown>;
}

/** The parts of an invocation machine snapshot the inspector is shown (everything else stays in the process). */
export function boundedSnapshot(snapshot: { status?: unknown; value?: unknown; context?: unknown }): BoundedSnapshot {
  const c = (typeof snapshot.context === 'object' && snapshot.context !== null ? snapshot.context : {}) as Record<string, unknown>;
  const obj = (v: unknown) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined);
  const goal = obj(c.goal);
  const plan = obj(c.plan);
  const failure = obj(c.failure);
  const suspension = obj(c.suspension);
  const context: Record<string, unknown> = {
    invocation: text(c.invocation),
    tenant: text(c.tenant),
    epoch: num(c.epoch),
    seq: num(c.seq),
    goal: goal ? text(goal.task) : null,
    planSteps: Array.isArray(plan?.steps) ? plan.steps.length : null,
    done: Array.isArray(c.done) ? c.done.length : 0,
    replans: num(c.replans),
    failure: failure ? { class: text(failure.class), code: text(failure.code) } : null,
    suspension: suspension ? { state: text(suspension.state), class: text(suspension.class), code: text(suspension.code) } : null,
    fingerprint: text(c.fingerprint),
  };
  const bounded: BoundedSnapshot = { status: typeof snapshot.status === 'string' ? snapshot.status : 'active', value: stateValue(snapshot.value), context };
  // Every field above is small; the bound holds even for an id or code at its cap.
  if (JSON.stringify(bounded).length > MAX_SNAPSHOT_BYTES) return { status: bounded.status, value: bounded.value, context: { invocation: context.invocation, epoch: context.epoch } };
  return bounded;
}

/** A state value: the machine's is a string; anything else is cut to a string. */
function stateValue(value: unknown): unknown {
  return typeof value === 'string' ? text(value) : text(JSON.stringify(value) ?? '');
}

function text(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT - 1)}…` : value;
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function actorMessage(invocation: string, definition: string, snapshot: BoundedSnapshot, createdAt: number): InspectorMessage {
  return { type: '@xstate.actor', name: 'invocation', sessionId: invocation, rootId: invocation, id: null, definition, snapshot, createdAt: String(createdAt), _version: PROTOCOL_VERSION };
}

export function snapshotMessage(invocation: string, snapshot: BoundedSnapshot, event: { type: string }, createdAt: number): InspectorMessage {
  return { type: '@xstate.snapshot', sessionId: invocation, snapshot, event: { type: text(event.type) ?? '' }, id: null, rootId: invocation, createdAt: String(createdAt), _version: PROTOCOL_VERSION };
}

export function eventMessage(invocation: string, event: { type: string; [field: string]: unknown }, createdAt: number, sourceId?: string): InspectorMessage {
  return { type: '@xstate.event', sessionId: invocation, ...(sourceId === undefined ? {} : { sourceId }), event, id: null, rootId: invocation, createdAt: String(createdAt), _version: PROTOCOL_VERSION };
}

/**
 * The machine's definition as the inspector draws it: its config as JSON, functions named by
 * their name (guards and actions are referenced by name already), depth unbounded but cycles cut.
 */
export function definitionJson(config: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(config, (_key, value: unknown) => {
    if (typeof value === 'function') return { type: (value as { name?: string }).name || 'anonymous' };
    if (typeof value === 'object' && value !== null) {
      if (seen.has(value)) return undefined;
      seen.add(value);
    }
    return value;
  });
}
