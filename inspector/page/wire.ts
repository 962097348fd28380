/**
 * What the viewer's JSON endpoints send — the fields of runtime/list.ts `InvocationSummary` and
 * runtime/describe.ts `InvocationDescription` (version 1) that the page reads. Declared here, not
 * imported: the page is compiled for the browser and must not pull the runtime (Node) into its
 * program. Both shapes only ever gain fields, so a page reading a subset keeps working.
 */

export interface ListedInvocation {
  id: string;
  tenant: string;
  intent: string;
  records: number;
  status: string;
  problem?: string;
  reason?: string;
  fix?: string;
  /** The last record's epoch, kind and envelope time (ISO 8601), when the store knows them. */
  epoch?: number;
  last?: { kind: string; at?: string };
  /** When it started: its first record's envelope time (ISO 8601, the writer's clock), when the store knows it. */
  startedAt?: string;
  /** A fork: its parent and the epoch it goes on from. */
  forkOf?: { parent: string; atEpoch: number };
  /** A run a fork superseded: that fork. */
  supersededBy?: string;
  /** Of the ids above, those this viewer's token may open (inspector/lineage-links.ts): the page links only these. */
  lineageLinks?: string[];
}

export interface StepView {
  step: number;
  operator: string | null;
  actuator: string | null;
  args: unknown;
  outcome: string;
  attempts: number;
  result: unknown;
  failure: { class: string; code: string; message: string } | null;
  compensation: { actuator: string; attempts: number; outcome: string } | null;
  /** Workers that refused the step's job without running it (flag 13); absent when none did. */
  refusals?: Array<{ attempt: number; worker: string; code: string; reason: string }>;
}

export interface EpochView {
  epoch: number;
  goal: { task: string; args: unknown[] } | null;
  source: string | null;
  plan: string | null;
  admission: { decision: string; policy: string; reason: string | null } | null;
  /** The rules that warned on this epoch's admissions (flag 12); absent from a server before it. */
  warnings?: Array<{ subject: string; step: number | null; rule: string; reason: string }>;
  approval: { reason: string | null; decision: string | null; by: string | null; note: string | null } | null;
  outcome: string;
  truncated: { removed: number[]; reason: string } | null;
  steps: StepView[];
}

export interface DescriptionView {
  version: number;
  id: string;
  tenant: string | null;
  intent: string | null;
  status: string;
  reason: string | null;
  problem: string | null;
  fix: string | null;
  records: number;
  journal: { verified: boolean; problem: string | null };
  pin: { library: string; runtime: string; seed: string; asOf: string; policy: string; flags: number[]; model: { id: string } } | null;
  epochs: EpochView[];
  waiting: WaitingView | null;
  ending: { status: string; summary: string | null; reason: string | null } | null;
  seal: { fingerprint: string; keyId: string } | null;
  commands: Array<{ command: string; does: string }>;
  /** A fork's parent (the pin's `forkOf`) and the fork that superseded a run; absent from an older viewer's answer. */
  lineage?: { forkOf: { parent: string; atEpoch: number; parentSeq: number; parentHash: string } | null; supersededBy: string | null };
  /** Of the lineage ids, those this viewer's token may open (inspector/lineage-links.ts). */
  lineageLinks?: string[];
}

export type WaitingView =
  | { kind: 'approval'; reason: string | null; plan: string | null; steps: Array<{ step: number; operator: string; actuator: string | null; args: unknown; readOnly: boolean }> | null; decided: { decision: string; by: string; note: string | null } | null }
  | { kind: 'timer'; step: number | null; until: string | null }
  | { kind: 'hibernated' }
  | { kind: 'suspended'; class: string | null; code: string | null; reason: string | null; state: string | null };

/** Where the viewer reads from, as the CLI's location flags (`--dir D`, `--redis URL`), to complete the commands shown. */
export interface ViewerInfo {
  store: string;
  location: string;
}

/** The key the person who started `weft inspect` trusts (`--public-key`), or null. */
export interface TrustedKey {
  publicKey: string;
  keyId: string;
  /** Where it came from, shown beside the verdict. */
  label: string;
}

/** `/api/machine`: the invocation statechart laid out on the server (inspector/machine-graph.ts `MachineGraph`). */
export interface MachineGraphView {
  machine: string;
  initial: string;
  width: number;
  height: number;
  nodes: Array<{ id: string; kind: 'initial' | 'state' | 'resting' | 'final'; invokes: string | null; x: number; y: number; width: number; height: number }>;
  edges: Array<{ id: string; source: string; target: string; event: string; guard: string | null; otherwise: boolean; fan: boolean; points: Array<{ x: number; y: number }>; label: { x: number; y: number } }>;
}

/** `/api/invocations/<id>/trail`: the journal replayed through the machine (inspector/replay-trail.ts `Trail`). */
export type TrailView =
  | {
      replayed: true;
      domain: string;
      status: string;
      error: { code: string; seq: number | null; message: string } | null;
      records: number;
      passed: number;
      /** The state once record k was passed; null past where replay got. */
      states: Array<string | null>;
      transitions: Array<{ after: number; from: string; to: string; event: string; guard: string | null; edge: string }>;
    }
  | { replayed: false; reason: string; hint?: string; records: number };
/** A journal line as the page parsed it (journal/records.ts JournalRecord; `meta` unhashed: at, worker, writer). */
export interface LineRecord {
  seq?: unknown;
  kind?: unknown;
  epoch?: unknown;
  body?: unknown;
  hash?: unknown;
  prev?: unknown;
  meta?: { at?: unknown; worker?: unknown; writer?: unknown };
}

/** inspector/plan-trees.ts PlansView (`/api/invocations/<id>/plans`): each epoch's plan tree, re-derived on the server. */
export interface PlanNodeView {
  task: string;
  args: Array<string | number>;
  method?: string;
  step?: number;
  actuator?: string;
  readOnly?: boolean;
  authored?: boolean;
  children: PlanNodeView[];
}

export type PlanVerdictView =
  | { kind: 'matches'; digest: string }
  | { kind: 'mismatch'; expected: string; got: string | null; reason: string }
  | { kind: 'not-derived'; reason: string };

export interface EpochPlanView {
  epoch: number;
  goal: { task: string; args: unknown[] } | null;
  source: 'htn' | 'authored' | null;
  seq: number;
  derived: { seq: number; plan: string } | null;
  verdict: PlanVerdictView;
  tree: PlanNodeView | null;
  noMethod: {
    seq: number;
    explanation: string;
    recorded: string | null;
    goal: { task: string; args: unknown[]; methods?: Array<{ method: string; outcome: string; failed?: string }>; failed?: string };
  } | null;
  authored: { seq: number; attempt: number; constraints: string | null; admission: { seq: number; decision: string; policy: string; reason: string | null } | null } | null;
  rejected: Array<{ seq: number; attempt: number; reason: string }>;
}

export interface PlansView {
  version: number;
  library: { digest: string; name: string | null };
  problem: string | null;
  epochs: EpochPlanView[];
}
