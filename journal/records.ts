/**
 * Journal record kinds and their body schemas — one zod schema per kind, the one declaration of
 * every body: the fast validators' shapes (shapes.ts) and the property tests' random bodies are
 * read off these schemas, never written again.
 *
 * A record is `{ seq, kind, epoch, body, prev, hash }` plus an unhashed envelope `meta`
 * (wall time, writer id) that is observability only. Only `{ seq, kind, epoch, body }` and `prev`
 * enter the hash, so "byte-identical journals" means identical hashed parts.
 *
 * Bodies are strict objects: a field nobody declared is an error, not a silent passenger. Bodies
 * may grow in later schema versions by adding optional fields; the record shape never changes.
 */
import { z } from 'zod';

const digest = z.string().regex(/^[0-9a-f]{64}$/, 'a 64-hex SHA-256 digest');
const hex = z.string().regex(/^(?:[0-9a-f]{2})*$/, 'hex bytes');
const json = z.json();
const count = z.number().int().nonnegative();
const failureClass = z.enum(['transient', 'permanent', 'policy']);
const goal = z.strictObject({ task: z.string().min(1), args: z.array(json) });
/** A world effect of an epoch: its step, actuator and idempotency key. */
const effectRef = z.strictObject({ step: count, actuator: z.string().min(1), key: z.string().min(1) });

/** What an invocation fixes at start for its whole life (DESIGN.md, "pin"). */
export const pinSchema = z.strictObject({
  library: digest,
  runtime: z.string().min(1),
  flags: z.array(count),
  model: z.strictObject({ id: z.string().min(1), params: z.record(z.string(), json) }),
  seed: z.string(),
  asOf: z.string().min(1),
  policy: z.string().min(1),
  /** Limits that shape the journal (re-prompts, re-plans, attempts, planner budgets). */
  limits: z.record(z.string(), z.number().int().nonnegative()).optional(),
  /**
   * Under behaviour flag 2: the actuators that declare they spend (`Actuator.spends`), sorted by
   * name — each with its arg that is money out. Empty: none declares (every world effect counts,
   * the rule before flag 2). Admission reads it from here, never from the runtime's actuators.
   */
  spenders: z.array(z.strictObject({ actuator: z.string().min(1), arg: z.string().min(1) })).optional(),
  /**
   * Present only on a shadow run (`start(intent, { shadow: true })`, `weft run --shadow`): nothing
   * reaches the world, each world-effect step is recorded as `step.shadowed`. `results`: whether
   * every world-effect actuator of the pinned library gives a shadow result (`Actuator.shadow`) —
   * `actuators`, the run goes on past shadowed epochs — or not — `none`, the run ends after the
   * first epoch whose world effects were shadowed (docs/operate-shadow.md). Absent: a real run.
   */
  shadow: z.strictObject({ results: z.enum(['none', 'actuators']) }).optional(),
  /**
   * When the invocation must have ended (ISO 8601, the starter's clock): checked between steps and
   * at boundaries, and by `serve` on resting invocations; passing it is recorded (`deadline.passed`)
   * and ends the invocation failed (policy, `invocation.deadline_passed`) after compensating the
   * current epoch. Absent: no deadline.
   */
  deadline: z.string().min(1).optional(),
});
export type Pin = z.infer<typeof pinSchema>;

export const bodySchemas = {
  'invocation.pinned': z.strictObject({
    schema: z.literal(1),
    invocation: z.string().min(1),
    tenant: z.string().min(1),
    intent: z.string(),
    pin: pinSchema,
    /** Present when the intent was over the pinned cap: `intent` then holds a prefix; this, the whole intent's size and digest. */
    intentCut: z.strictObject({ chars: count, digest }).optional(),
    /**
     * A fork's lineage (runtime/fork.ts), on its very first record: the parent, the epoch whose
     * boundary it goes on from, and the seq and hash of the parent's `epoch.closed` there — the same
     * as its `invocation.forked` (seq 1) says, which replay checks. Absent on any other journal.
     */
    forkOf: z.strictObject({ parent: z.string().min(1), atEpoch: count, parentSeq: count, parentHash: digest }).optional(),
  }),
  'admission.decided': z.strictObject({
    subject: z.enum(['authoring', 'epoch', 'step']),
    step: count.optional(),
    decision: z.enum(['allow', 'deny', 'require_approval']),
    policy: z.string().min(1),
    reason: z.string().optional(),
    /** Under flag 7, with a policy that names its rules (a policy pack): the id of the rule that decided. */
    rule: z.string().min(1).optional(),
    /**
     * Under flag 12: the rules that applied with the verdict `warn` (policy/verdict.ts), in pack order,
     * whatever decided — each its rule id and reason. They stopped nothing. At most 32 (a pack has at
     * most 32 warn rules; the runtime records no more), each reason clipped; never empty (absent: none warned).
     */
    warnings: z.array(z.strictObject({ rule: z.string().min(1), reason: z.string().min(1) })).optional(),
  }),
  'model.requested': z.strictObject({ purpose: z.enum(['parse', 'author']), attempt: count, request: json }),
  'model.completed': z.strictObject({
    purpose: z.enum(['parse', 'author']),
    attempt: count,
    reply: json,
    /**
     * Present when the reply could not be kept as it came (over the pinned size cap, or not
     * well-formed Unicode): `reply` then holds a bounded, well-formed prefix; this, the raw reply's
     * length and the SHA-256 of its UTF-16LE code units. The verdict is a rejection.
     */
    refused: z.strictObject({ code: z.string().min(1), chars: count, digest }).optional(),
  }),
  /** The model call itself failed: an HTTP error, a network error, a time-out, a model adapter's error. */
  'model.failed': z.strictObject({
    purpose: z.enum(['parse', 'author']),
    attempt: count,
    class: z.enum(['transient', 'credentials', 'endpoint', 'permanent']),
    code: z.string().min(1),
    message: z.string(),
  }),
  'model.rejected': z.strictObject({ attempt: count, reason: z.string().min(1), reply: json.optional() }),
  'state.observed': z.strictObject({
    actuator: z.string().min(1),
    key: z.string().min(1),
    state: json,
    /** Present when the observation failed (then `state` is null). */
    failure: z.strictObject({ class: failureClass, code: z.string().min(1), message: z.string() }).optional(),
  }),
  'epoch.derived': z.strictObject({
    source: z.enum(['htn', 'authored']),
    goal,
    library: digest,
    plan: digest,
    steps: count,
  }),
  'epoch.certified': z.strictObject({ plan: digest, policy: z.string().min(1) }),
  // An epoch's approval names its plan; an authoring call's (flag 5) names its subject instead.
  'approval.requested': z.strictObject({ subject: z.literal('authoring').optional(), plan: digest.optional(), reason: z.string().min(1) }),
  'approval.decided': z.strictObject({
    decision: z.enum(['approved', 'rejected']),
    by: z.string().min(1),
    note: z.string().optional(),
  }),
  'step.dispatched': z.strictObject({ step: count, actuator: z.string().min(1), args: json, key: z.string().min(1), attempt: count }),
  'step.completed': z.strictObject({ step: count, key: z.string().min(1), attempt: count, result: json }),
  'step.failed': z.strictObject({
    step: count,
    key: z.string().min(1),
    attempt: count,
    class: failureClass,
    code: z.string().min(1),
    message: z.string(),
  }),
  /**
   * Under flag 13: a worker refused this attempt's job without running it — the job's domain is not
   * its own (`worker.wrong_domain`), the store lacks its pinned library (`worker.library_unknown`),
   * its build lacks the actuator (`worker.no_actuator`) or its schema rejects the args
   * (`worker.bad_args`). No attempt is spent: the job goes back on the queue under the same attempt
   * (runtime/epoch/refusals.ts). `worker`: who refused (`<host>:<pid>`; `unnamed` when an older
   * worker did not say). Read back on replay and resume, never re-derived.
   */
  'step.refused': z.strictObject({
    step: count,
    key: z.string().min(1),
    attempt: count,
    code: z.string().min(1),
    reason: z.string(),
    worker: z.string().min(1),
  }),
  /**
   * A shadow run's world-effect step, admitted and NOT dispatched: what the run would have done
   * (actuator, args, the idempotency key it would have carried). `source`: where `result` came from —
   * the actuator's `shadow(args, ctx)` (`actuator`), or nowhere (`none`, result null). Present
   * `failure`: the shadow call itself failed (result null). Never preceded by a `step.dispatched`.
   */
  'step.shadowed': z.strictObject({
    step: count,
    actuator: z.string().min(1),
    args: json,
    key: z.string().min(1),
    source: z.enum(['actuator', 'none']),
    result: json,
    failure: z.strictObject({ class: failureClass, code: z.string().min(1), message: z.string() }).optional(),
  }),
  'compensation.dispatched': z.strictObject({ step: count, actuator: z.string().min(1), args: json, key: z.string().min(1), attempt: count }),
  'compensation.completed': z.strictObject({
    step: count,
    key: z.string().min(1),
    attempt: count,
    result: json,
    /** Present when this attempt of the compensation failed (it may be retried). */
    failure: z.strictObject({ class: failureClass, code: z.string().min(1), message: z.string() }).optional(),
  }),
  /**
   * Under flag 8: compensation stopped at step `at` — a pivot (a world effect with no inverse) or a
   * compensation that failed permanently — before the effects at and before it were undone. `ran`:
   * the epoch's completed world effects in order; `undone`: those compensated, in the order they
   * were; `notUndone`: what stays applied, in order. The invocation then hands off.
   */
  'compensation.halted': z.strictObject({
    at: count,
    why: z.enum(['pivot', 'compensation_failed']),
    ran: z.array(effectRef),
    undone: z.array(effectRef),
    notUndone: z.array(effectRef),
    reason: z.string().min(1),
  }),
  /** A durable sleep step (`weft.sleep`) waits until `until` (ISO 8601): the invocation rests, no actor in memory. */
  'timer.set': z.strictObject({ step: count, until: z.string().min(1) }),
  /** The sleep step's time came: `at` is when the runtime saw it (the wall clock, recorded). */
  'timer.fired': z.strictObject({ step: count, at: z.string().min(1) }),
  'frontier.truncated': z.strictObject({ epoch: count, removed: z.array(count), reason: z.string().min(1) }),
  'epoch.closed': z.strictObject({ outcome: z.enum(['completed', 'compensated', 'denied']), steps: count }),
  /**
   * Someone asked to cancel the invocation (`runtime.cancel`, `weft cancel`): who, why, and when on
   * the requester's clock (ISO 8601). Written before anything acts on it; replay reads it back and
   * never looks at the inbox it came through.
   */
  'cancel.requested': z.strictObject({ by: z.string().min(1), reason: z.string(), at: z.string().min(1) }),
  /** The pinned deadline (`pin.deadline`) had passed when the runtime looked at its clock (`at`, ISO 8601). */
  'deadline.passed': z.strictObject({ deadline: z.string().min(1), at: z.string().min(1) }),
  'invocation.completed': z.strictObject({ summary: z.string() }),
  'invocation.failed': z.strictObject({ code: z.string().min(1), class: failureClass, reason: z.string().min(1) }),
  'invocation.handed_off': z.strictObject({ reason: z.string().min(1) }),
  /**
   * A fork's second record (after its own `invocation.pinned`): the invocation goes on from its
   * parent's epoch boundary `atEpoch` under a new pin (runtime/fork.ts). `parentHash` is the hash of
   * the parent's `epoch.closed` record of that epoch (at `parentSeq`); `repinned` names the pin
   * fields that changed, sorted; `state` is the invocation's state at that boundary, re-derived from
   * the parent's records on replay: the next epoch, the outcomes the model sees, what was spent, the
   * re-plans, the world effects of closed epochs that were not compensated, and the compensations
   * they declare (what undoing them would owe).
   */
  'invocation.forked': z.strictObject({
    parent: z.string().min(1),
    parentSeq: count,
    parentHash: digest,
    atEpoch: count,
    repinned: z.array(z.string().min(1)),
    /** The invocation whose world the fork goes on acting in (its lineage's first; actuators see it as `ActuatorContext.world`). */
    world: z.string().min(1).optional(),
    state: z.strictObject({
      epoch: count,
      outcomes: z.array(json),
      /** A number: what completed epochs spent under the policy's envelope. */
      spent: json,
      replans: count,
      effects: z.array(z.strictObject({ epoch: count, step: count, operator: z.string().min(1), actuator: z.string().min(1), key: z.string().min(1) })),
      obligations: z.array(z.strictObject({ epoch: count, step: count, actuator: z.string().min(1), args: json })),
      /** Flag 11: of `effects`, those a plan from the model made, with what each spent (the lineage's part of a run-wide allowance). */
      authored: z.array(z.strictObject({ epoch: count, step: count, actuator: z.string().min(1), key: z.string().min(1), amount: z.number().finite().nonnegative() })).optional(),
    }),
  }),
  /** The invocation was forked (`weft fork`) and ends here: `by` goes on from the end of epoch `atEpoch`. */
  'invocation.superseded': z.strictObject({ by: z.string().min(1), atEpoch: count, reason: z.string().min(1) }),
  /**
   * The invocation ended cancelled: the current epoch's effects were compensated; `kept` lists the
   * world effects that stay done — steps of epochs already closed (completed, or compensated except
   * for steps with no inverse) and of the current epoch with no inverse — so a person knows what to
   * undo by hand, if anything.
   */
  'invocation.cancelled': z.strictObject({
    by: z.string().min(1),
    reason: z.string(),
    kept: z.array(z.strictObject({ epoch: count, step: count, actuator: z.string().min(1), key: z.string().min(1) })),
  }),
  /**
   * An explicit re-key (`resume(id, { rekey: true })`, `weft resume --rekey`): from here on the
   * journal is sealed by key `to` instead of `from` (key ids; `from` is the key the store's
   * metadata recorded at start, or the previous re-key's `to`). Only a re-keyed journal has one, so
   * a run that is never re-keyed has the same bytes whatever key seals it. Written by the runtime,
   * not by the machine, so resume and replay pass over it wherever it stands (recorder.ts);
   * `verify` then expects the seal by `to`.
   */
  'invocation.rekeyed': z.strictObject({ from: digest, to: digest }),
  'invocation.sealed': z.strictObject({
    algorithm: z.literal('ed25519'),
    fingerprint: digest,
    keyId: digest,
    signature: hex.length(128),
  }),
} as const;

export type RecordKind = keyof typeof bodySchemas;
export const recordKinds = Object.keys(bodySchemas).sort() as RecordKind[];
export type BodyOf<K extends RecordKind> = z.infer<(typeof bodySchemas)[K]>;

export function isRecordKind(kind: unknown): kind is RecordKind {
  return typeof kind === 'string' && Object.hasOwn(bodySchemas, kind);
}

/**
 * The unhashed envelope: observability only, never verified, never part of "byte-identical".
 * `at`: the wall time the record was chained; `writer`: the runtime that wrote it; `worker`: on a
 * completion of an outside call (step.completed / step.failed / compensation.completed), who ran it
 * — a `weft worker`'s `<host>:<pid>`, or `in-process` (the viewer's timeline shows it).
 */
export const metaSchema = z.strictObject({ at: z.string().optional(), worker: z.string().optional(), writer: z.string().optional() });
export type RecordMeta = z.infer<typeof metaSchema>;

/** The hashed content of a record. */
export interface RecordContent<K extends RecordKind = RecordKind> {
  seq: number;
  kind: K;
  epoch: number;
  body: BodyOf<K>;
}

/** A record as stored: content, chain links, optional envelope. */
export interface JournalRecord<K extends RecordKind = RecordKind> extends RecordContent<K> {
  prev: string;
  hash: string;
  meta?: RecordMeta;
}

/** The outer shape every stored record must have, before its body is checked against its kind. */
export const recordShapeSchema = z.strictObject({
  seq: count,
  kind: z.string(),
  epoch: count,
  body: z.unknown(),
  prev: digest,
  hash: digest,
  meta: metaSchema.optional(),
});
