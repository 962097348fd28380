/**
 * The record bodies' shapes as data: one declarative mirror of the zod schemas in records.ts, in
 * the small vocabulary journal bodies use — strings, lowercase-hex digests, counts, enums and
 * literals, JSON values, arrays, string-keyed records, and strict objects with optional members.
 *
 * Two fast validators are compiled from this table, so their structure is written once:
 * validate-fast.ts (parsed values: the writer's check of every body, the text reader's fast path)
 * and scan-shapes.ts (canonical JSON bytes: the byte verifier's fast path). zod stays the
 * specification and the source of every error message; the compiled validators only ever ACCEPT
 * on their own, and test/journal-fast-path.test.ts and test/journal-verify-bytes.test.ts prove
 * "fast accepts ⇒ zod accepts" for both.
 *
 * Pure: data and builders only.
 */
import type { RecordKind } from './records.js';

export type Shape =
  /** `z.string()`, or `z.string().min(1)` when `nonEmpty`. */
  | { readonly type: 'string'; readonly nonEmpty: boolean }
  /** A string of exactly `length` lowercase hex characters (a digest, a signature). */
  | { readonly type: 'hex'; readonly length: number }
  /** `z.number().int().nonnegative()`: a safe non-negative integer. */
  | { readonly type: 'count' }
  /** `z.enum([...])` or `z.literal(v)`: one of these exact values. */
  | { readonly type: 'oneOf'; readonly values: readonly (string | number)[] }
  /** `z.json()`: any JSON value (finite numbers; plain objects and arrays of JSON). */
  | { readonly type: 'json' }
  /** `z.array(of)`. */
  | { readonly type: 'array'; readonly of: Shape }
  /** `z.record(z.string(), of)`. */
  | { readonly type: 'record'; readonly of: Shape }
  /** `z.strictObject({...})`: these members and no others; optional ones may be absent. */
  | { readonly type: 'object'; readonly fields: readonly Field[] };

export interface Field {
  readonly name: string;
  readonly shape: Shape;
  readonly optional: boolean;
}

// ---- builders (the vocabulary records.ts speaks in zod) ------------------------------------------

export const str: Shape = { type: 'string', nonEmpty: false };
export const nonEmpty: Shape = { type: 'string', nonEmpty: true };
export const digest: Shape = { type: 'hex', length: 64 };
export const count: Shape = { type: 'count' };
export const json: Shape = { type: 'json' };
export const oneOf = (...values: readonly (string | number)[]): Shape => ({ type: 'oneOf', values });
export const arrayOf = (of: Shape): Shape => ({ type: 'array', of });
export const recordOf = (of: Shape): Shape => ({ type: 'record', of });

/** An optional member of a strict object. */
export interface Optional {
  readonly optional: Shape;
}
export const optional = (shape: Shape): Optional => ({ optional: shape });

export function strict(members: Record<string, Shape | Optional>): Shape {
  const fields = Object.keys(members).map((name): Field => {
    const member = members[name]!;
    return 'optional' in member ? { name, shape: member.optional, optional: true } : { name, shape: member, optional: false };
  });
  return { type: 'object', fields };
}

// ---- the bodies -----------------------------------------------------------------------------

const failureClass = oneOf('transient', 'permanent', 'policy');
const purpose = oneOf('parse', 'author');
const goal = strict({ task: nonEmpty, args: arrayOf(json) });
const dispatched = strict({ step: count, actuator: nonEmpty, args: json, key: nonEmpty, attempt: count });
const effectRef = strict({ step: count, actuator: nonEmpty, key: nonEmpty });

export const pinShape = strict({
  library: digest,
  runtime: nonEmpty,
  flags: arrayOf(count),
  model: strict({ id: nonEmpty, params: recordOf(json) }),
  seed: str,
  asOf: nonEmpty,
  policy: nonEmpty,
  limits: optional(recordOf(count)),
  shadow: optional(strict({ results: oneOf('none', 'actuators') })),
  deadline: optional(nonEmpty),
});

export const bodyShapes: Record<RecordKind, Shape> = {
  'invocation.pinned': strict({ schema: oneOf(1), invocation: nonEmpty, tenant: nonEmpty, intent: str, pin: pinShape, intentCut: optional(strict({ chars: count, digest })), forkOf: optional(strict({ parent: nonEmpty, atEpoch: count, parentSeq: count, parentHash: digest })) }),
  'admission.decided': strict({
    subject: oneOf('authoring', 'epoch', 'step'),
    step: optional(count),
    decision: oneOf('allow', 'deny', 'require_approval'),
    policy: nonEmpty,
    reason: optional(str),
    rule: optional(nonEmpty),
    warnings: optional(arrayOf(strict({ rule: nonEmpty, reason: nonEmpty }))),
  }),
  'model.requested': strict({ purpose, attempt: count, request: json }),
  'model.completed': strict({ purpose, attempt: count, reply: json, refused: optional(strict({ code: nonEmpty, chars: count, digest })) }),
  'model.failed': strict({ purpose, attempt: count, class: oneOf('transient', 'credentials', 'endpoint', 'permanent'), code: nonEmpty, message: str }),
  'model.rejected': strict({ attempt: count, reason: nonEmpty, reply: optional(json) }),
  'state.observed': strict({ actuator: nonEmpty, key: nonEmpty, state: json, failure: optional(strict({ class: failureClass, code: nonEmpty, message: str })) }),
  'epoch.derived': strict({ source: oneOf('htn', 'authored'), goal, library: digest, plan: digest, steps: count }),
  'epoch.certified': strict({ plan: digest, policy: nonEmpty }),
  'approval.requested': strict({ subject: optional(oneOf('authoring')), plan: optional(digest), reason: nonEmpty }),
  'approval.decided': strict({ decision: oneOf('approved', 'rejected'), by: nonEmpty, note: optional(str) }),
  'step.dispatched': dispatched,
  'step.completed': strict({ step: count, key: nonEmpty, attempt: count, result: json }),
  'step.failed': strict({ step: count, key: nonEmpty, attempt: count, class: failureClass, code: nonEmpty, message: str }),
  'step.refused': strict({ step: count, key: nonEmpty, attempt: count, code: nonEmpty, reason: str, worker: nonEmpty }),
  'step.shadowed': strict({
    step: count,
    actuator: nonEmpty,
    args: json,
    key: nonEmpty,
    source: oneOf('actuator', 'none'),
    result: json,
    failure: optional(strict({ class: failureClass, code: nonEmpty, message: str })),
  }),
  'compensation.dispatched': dispatched,
  'compensation.completed': strict({
    step: count,
    key: nonEmpty,
    attempt: count,
    result: json,
    failure: optional(strict({ class: failureClass, code: nonEmpty, message: str })),
  }),
  'compensation.halted': strict({
    at: count,
    why: oneOf('pivot', 'compensation_failed'),
    ran: arrayOf(effectRef),
    undone: arrayOf(effectRef),
    notUndone: arrayOf(effectRef),
    reason: nonEmpty,
  }),
  'timer.set': strict({ step: count, until: nonEmpty }),
  'timer.fired': strict({ step: count, at: nonEmpty }),
  'frontier.truncated': strict({ epoch: count, removed: arrayOf(count), reason: nonEmpty }),
  'epoch.closed': strict({ outcome: oneOf('completed', 'compensated', 'denied'), steps: count }),
  'cancel.requested': strict({ by: nonEmpty, reason: str, at: nonEmpty }),
  'deadline.passed': strict({ deadline: nonEmpty, at: nonEmpty }),
  'invocation.completed': strict({ summary: str }),
  'invocation.failed': strict({ code: nonEmpty, class: failureClass, reason: nonEmpty }),
  'invocation.handed_off': strict({ reason: nonEmpty }),
  'invocation.forked': strict({
    parent: nonEmpty,
    parentSeq: count,
    parentHash: digest,
    atEpoch: count,
    repinned: arrayOf(nonEmpty),
    world: optional(nonEmpty),
    state: strict({
      epoch: count,
      outcomes: arrayOf(json),
      spent: json,
      replans: count,
      effects: arrayOf(strict({ epoch: count, step: count, operator: nonEmpty, actuator: nonEmpty, key: nonEmpty })),
      obligations: arrayOf(strict({ epoch: count, step: count, actuator: nonEmpty, args: json })),
    }),
  }),
  'invocation.superseded': strict({ by: nonEmpty, atEpoch: count, reason: nonEmpty }),
  'invocation.cancelled': strict({ by: nonEmpty, reason: str, kept: arrayOf(strict({ epoch: count, step: count, actuator: nonEmpty, key: nonEmpty })) }),
  'invocation.rekeyed': strict({ from: digest, to: digest }),
  'invocation.sealed': strict({ algorithm: oneOf('ed25519'), fingerprint: digest, keyId: digest, signature: { type: 'hex', length: 128 } }),
};

/** The unhashed envelope `meta`: `z.strictObject({ at: z.string().optional(), worker: z.string().optional(), writer: z.string().optional() })`. */
export const metaShape = strict({ at: optional(str), worker: optional(str), writer: optional(str) });
