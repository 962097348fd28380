/**
 * Spans from records: one process segment of one invocation (a run, a resume, an approve, a cancel,
 * a fork, serve's take-over) traced as the recorder passes its records (runtime/executor.ts hands
 * each one here with whether it was read back).
 *
 *   invoke_agent weft            the invocation (ids derived from its id: ids.ts), exported once, when it ends
 *   └ weft <segment>             this process's part: from the run's start to its rest or end
 *     └ epoch <n>                  the records of epoch n this segment wrote (goal, source, outcome)
 *       ├ chat <model>               a model call (CLIENT; GenAI conventions: semconv.ts)
 *       ├ execute_tool <actuator>    a step attempt: dispatch to outcome (admission decision and rule)
 *       │  └ (a worker's span, in another process: its job carries this span's traceparent)
 *       └ compensate <actuator>      a compensation attempt
 *
 * Waits and one-off facts are events, never spans held open: approval asked and decided, a timer set
 * and fired, a cancel asked, a deadline passed, a step shadowed, a re-key, a compensation halted.
 * A span is ended when its segment comes to rest, so nothing is held across hibernation or lost
 * with a crash other than the crashed process's own open spans.
 *
 * Replay emits nothing: a record read back only teaches the redactor (what was dispatched where).
 * Tracing reads records and never writes one: no record, hash or fingerprint depends on it.
 *
 * Redaction: free text (failure messages, reasons) is scrubbed of the values the invocation's
 * redaction marks remove (journal/redaction.ts), read from the store's metadata; until the marks are
 * read, spans that carry text wait (their times are taken when the records pass); if they cannot be
 * read, text attributes are dropped. Args, results and model content are never put in a span.
 *
 * Over 400 lines on purpose: one segment's span tree is one state machine over the record kinds
 * (which span a record opens, ends or adds an event to); split by kind, each part would need the
 * others' open spans.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api';
import { JournalRedactor, marksAnything, scrubText, type RedactionMarks } from '../journal/redaction.js';
import type { JournalRecord } from '../journal/records.js';
import type { Pin } from '../journal/records.js';
import { forgetJob, rememberJob } from './job-context.js';
import { invocationSpanIdOf, traceIdOf, withForcedIds } from './ids.js';
import { ERROR_TYPE, GEN_AI, genAiLatestOnly, modelNameOf, providerOf, WEFT } from './semconv.js';
import { processSegment } from './segment.js';

const ENDED = new Set(['completed', 'failed', 'handed_off', 'cancelled', 'superseded']);

/** Milliseconds since the epoch, sub-millisecond (a span's times). */
const nowMs = (): number => performance.timeOrigin + performance.now();

/** Weft's tracer (the instrumentation scope `weft`; telemetry/ sits below runtime/, so the runtime's version is the invocation's pinned one, on its spans as `weft.runtime`, not here). */
export function weftTracer(): Tracer {
  return trace.getTracer('weft');
}

/** The context whose span is invocation `id`'s own (its segments' parent), known from the id alone. */
export function invocationContext(id: string): Context {
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: traceIdOf(id), spanId: invocationSpanIdOf(id), traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

export interface SegmentInfo {
  invocation: string;
  tenant: string;
  pin: Pin;
  /** True when this segment starts the invocation (nothing read back, no snapshot): its segment is `run`, or `fork` for a fork. */
  fresh: boolean;
  /** A fork's parent (its trace is linked), read from the fork's genesis; undefined for any other invocation. */
  forkOf?: () => Promise<string | undefined>;
  /** The invocation's redaction marks: undefined when it has none; a rejection when they cannot be read. */
  marks: () => Promise<RedactionMarks | undefined>;
  /** Whether an actuator only reads (its operator is readOnly), from the pinned library. */
  readOnly?: (actuator: string) => boolean | undefined;
}

interface Open {
  span: Span;
  started: number;
  label: string;
}

export class SegmentTracer {
  private readonly tracer: Tracer;
  private readonly segment: Span;
  private readonly segmentContext: Context;
  private readonly startedAt = nowMs();
  private epoch: { n: number; span: Span; context: Context } | undefined;
  private readonly models = new Map<string, Open>();
  private readonly steps = new Map<string, Open>();
  private readonly compensations = new Map<string, Open>();
  private readonly admissions = new Map<number, { decision: string; rule?: string | undefined; policy: string }>();
  private lastAt = nowMs();
  /** The redactor once the marks are read; `none` when there are none; null when they could not be read (text is dropped). */
  private redactor: JournalRedactor | 'none' | null | undefined;
  private readonly waiting: Array<() => void> = [];
  private readonly genAiLatest = genAiLatestOnly();
  private parentId: string | undefined;
  private readonly readOnlyOf = new Map<string, boolean>();

  static start(info: SegmentInfo, tracer: Tracer = weftTracer()): SegmentTracer | undefined {
    const name = processSegment(info.fresh ? (info.forkOf ? 'fork' : 'run') : 'resume');
    const span = tracer.startSpan(`weft ${name}`, { kind: SpanKind.INTERNAL, attributes: { [WEFT.segment]: name, ...invocationAttributes(info) } }, invocationContext(info.invocation));
    // No provider (or not sampled): nothing to do for this segment, at the cost of one no-op span.
    if (!span.isRecording()) return undefined;
    return new SegmentTracer(info, tracer, span);
  }

  private constructor(
    private readonly info: SegmentInfo,
    tracer: Tracer,
    span: Span,
  ) {
    this.tracer = tracer;
    this.segment = span;
    this.segmentContext = trace.setSpan(ROOT_CONTEXT, span);
    // A fork is a trace of its own, linked to its parent's (the genesis names the parent).
    const forkOf = info.forkOf?.() ?? Promise.resolve(undefined);
    Promise.all([info.marks(), forkOf.catch(() => undefined)]).then(
      ([marks, parent]) => {
        this.parentId = parent;
        if (parent !== undefined) {
          span.setAttribute(WEFT.parent, parent);
          span.addLink?.(parentLink(parent));
        }
        // No marks: nothing to scrub, and no redactor to feed each record.
        this.ready(marksAnything(marks) ? new JournalRedactor(marks) : 'none');
      },
      () => this.ready(null),
    );
  }

  private ready(redactor: JournalRedactor | 'none' | null): void {
    this.redactor = redactor;
    for (const fn of this.waiting.splice(0)) fn();
  }

  /** Let the redactor see a record (what was dispatched where, the values the marks remove). */
  private learn(record: JournalRecord): void {
    if (this.redactor === 'none' || this.redactor === null) return;
    this.later(() => {
      if (this.redactor instanceof JournalRedactor) this.redactor.structural([record]);
    });
  }

  /** Run `fn` once the marks are known (in record order). */
  private later(fn: () => void): void {
    if (this.redactor !== undefined && this.waiting.length === 0) fn();
    else this.waiting.push(fn);
  }

  /** Free text as a span may carry it: scrubbed of the marked values, or nothing when the marks are unknown. */
  private text(value: string | undefined): string | undefined {
    if (value === undefined || this.redactor === null || this.redactor === undefined) return undefined;
    return (this.redactor === 'none' ? value : scrubText(value, this.redactor.secrets)).slice(0, 500);
  }

  private parent(): Context {
    return this.epoch?.context ?? this.segmentContext;
  }

  private startChild(name: string, kind: SpanKind, attributes: Attributes, startTime?: number): Span {
    return this.tracer.startSpan(name, { kind, attributes, ...(startTime === undefined ? {} : { startTime }) }, this.parent());
  }

  private event(span: Span, name: string, attributes: () => Attributes, at: number): void {
    this.later(() => span.addEvent(name, clean(attributes()), at));
  }

  /** A record the recorder passed: read back (`replayed`: nothing is emitted) or written now. */
  onRecord(record: JournalRecord, replayed: boolean): void {
    if (replayed) {
      this.learn(record);
      return;
    }
    const at = nowMs();
    const since = this.lastAt;
    this.lastAt = at;
    if (record.kind !== 'invocation.rekeyed' && record.kind !== 'invocation.sealed' && (this.epoch === undefined || this.epoch.n !== record.epoch) && record.epoch > 0) this.openEpoch(record.epoch, at);
    this.learn(record);
    const body = record.body as Record<string, unknown>;
    const epochSpan = this.epoch?.span ?? this.segment;
    switch (record.kind) {
      case 'epoch.derived': {
        const goal = (body.goal as { task?: unknown } | undefined)?.task;
        epochSpan.setAttributes(clean({ [WEFT.source]: body.source as string, [WEFT.goal]: typeof goal === 'string' ? goal : undefined }));
        break;
      }
      case 'epoch.closed':
        epochSpan.setAttribute(WEFT.outcome, body.outcome as string);
        if (body.outcome !== 'completed') epochSpan.setStatus({ code: SpanStatusCode.ERROR, message: `epoch ${body.outcome as string}` });
        this.closeEpoch(at);
        break;
      case 'admission.decided':
        if (body.subject === 'step' && typeof body.step === 'number') this.admissions.set(body.step, { decision: body.decision as string, rule: body.rule as string | undefined, policy: body.policy as string });
        if (body.decision !== 'allow') this.event(epochSpan, `admission.${body.decision as string}`, () => ({ [WEFT.step]: body.step as number | undefined, [WEFT.rule]: body.rule as string | undefined, subject: body.subject as string, reason: this.text(body.reason as string | undefined) }), at);
        break;
      case 'model.requested': {
        const modelId = this.info.pin.model.id;
        const model = modelNameOf(modelId);
        const span = this.startChild(`chat ${model}`, SpanKind.CLIENT, {
          [GEN_AI.operation]: 'chat',
          [GEN_AI.provider]: providerOf(modelId),
          ...(this.genAiLatest ? {} : { [GEN_AI.system]: providerOf(modelId) }),
          [GEN_AI.requestModel]: model,
          [GEN_AI.conversationId]: this.info.invocation,
          [WEFT.purpose]: body.purpose as string,
          [WEFT.attempt]: body.attempt as number,
        }, at);
        this.models.set(`${body.purpose as string}#${body.attempt as number}`, { span, started: at, label: body.purpose as string });
        break;
      }
      case 'model.completed':
      case 'model.failed': {
        const open = this.take(this.models, `${body.purpose as string}#${body.attempt as number}`);
        if (!open) break;
        if (record.kind === 'model.failed') open.span.setAttributes({ [ERROR_TYPE]: body.code as string, [WEFT.failureClass]: body.class as string });
        this.later(() => {
          if (record.kind === 'model.failed') open.span.setStatus(clean({ code: SpanStatusCode.ERROR, message: this.text(body.message as string) }) as never);
          open.span.end(at);
        });
        break;
      }
      case 'model.rejected':
        this.event(epochSpan, 'model.rejected', () => ({ [WEFT.attempt]: body.attempt as number, reason: this.text(body.reason as string) }), at);
        break;
      case 'state.observed': {
        // The observation's job is not written ahead: its span runs from the record before it to this one.
        const span = this.startChild(`execute_tool ${body.actuator as string}`, SpanKind.INTERNAL, this.toolAttributes(body.actuator as string, body.key as string, 1, true), since);
        const failure = body.failure as { class: string; code: string; message: string } | undefined;
        span.setAttribute(WEFT.stepOutcome, failure ? failure.class : 'ok');
        this.later(() => {
          if (failure) span.setStatus(clean({ code: SpanStatusCode.ERROR, message: this.text(failure.message) }) as never);
          span.end(at);
        });
        break;
      }
      case 'step.dispatched': {
        // The hot path (one per step): one attribute object, built in place.
        const step = body.step as number;
        const actuator = body.actuator as string;
        const key = body.key as string;
        const attempt = body.attempt as number;
        const attributes = this.toolAttributes(actuator, key, attempt, this.isReadOnly(actuator));
        attributes[WEFT.step] = step;
        const admitted = this.admissions.get(step);
        if (admitted !== undefined) {
          attributes[WEFT.admission] = admitted.decision;
          if (admitted.rule !== undefined) attributes[WEFT.rule] = admitted.rule;
          if (admitted.policy !== undefined) attributes[WEFT.policy] = admitted.policy;
        }
        const span = this.startChild(`execute_tool ${actuator}`, SpanKind.INTERNAL, attributes, at);
        this.steps.set(`${key}#${attempt}`, { span, started: at, label: actuator });
        rememberJob(key, attempt, span);
        break;
      }
      case 'step.refused': {
        const open = this.steps.get(`${body.key as string}#${body.attempt as number}`);
        if (open) this.event(open.span, 'step.refused', () => ({ [ERROR_TYPE]: body.code as string, [WEFT.worker]: body.worker as string, reason: this.text(body.reason as string) }), at);
        break;
      }
      case 'step.completed':
      case 'step.failed': {
        const key = body.key as string;
        const attempt = body.attempt as number;
        const open = this.take(this.steps, `${key}#${attempt}`);
        forgetJob(key, attempt);
        if (!open) break;
        const span = open.span;
        if (record.meta?.worker !== undefined) span.setAttribute(WEFT.worker, record.meta.worker);
        if (record.kind === 'step.completed') {
          span.setAttribute(WEFT.stepOutcome, 'ok');
          // Nothing to scrub: ended at once unless earlier spans still wait for the marks (record order).
          if (this.redactor !== undefined && this.waiting.length === 0) span.end(at);
          else this.later(() => span.end(at));
          break;
        }
        span.setAttributes({ [WEFT.stepOutcome]: body.class as string, [ERROR_TYPE]: body.code as string, [WEFT.failureClass]: body.class as string });
        this.later(() => {
          span.setStatus(clean({ code: SpanStatusCode.ERROR, message: this.text(body.message as string) }) as never);
          span.end(at);
        });
        break;
      }
      case 'step.shadowed':
        this.event(epochSpan, 'step.shadowed', () => ({ [WEFT.step]: body.step as number, [WEFT.actuator]: body.actuator as string, [WEFT.key]: body.key as string, source: body.source as string }), at);
        break;
      case 'compensation.dispatched': {
        const span = this.startChild(`compensate ${body.actuator as string}`, SpanKind.INTERNAL, { ...this.toolAttributes(body.actuator as string, body.key as string, body.attempt as number, false), [WEFT.step]: body.step as number }, at);
        this.compensations.set(`${body.key as string}#${body.attempt as number}`, { span, started: at, label: body.actuator as string });
        rememberJob(body.key as string, body.attempt as number, span);
        break;
      }
      case 'compensation.completed': {
        const open = this.take(this.compensations, `${body.key as string}#${body.attempt as number}`);
        forgetJob(body.key as string, body.attempt as number);
        if (!open) break;
        const failure = body.failure as { class: string; code: string; message: string } | undefined;
        open.span.setAttribute(WEFT.stepOutcome, failure ? failure.class : 'ok');
        if (failure) open.span.setAttribute(ERROR_TYPE, failure.code);
        this.later(() => {
          if (failure) open.span.setStatus(clean({ code: SpanStatusCode.ERROR, message: this.text(failure.message) }) as never);
          open.span.end(at);
        });
        break;
      }
      case 'compensation.halted':
        epochSpan.setStatus({ code: SpanStatusCode.ERROR, message: `compensation halted (${body.why as string})` });
        this.event(epochSpan, 'compensation.halted', () => ({ why: body.why as string, [WEFT.step]: body.at as number, reason: this.text(body.reason as string) }), at);
        break;
      case 'timer.set':
      case 'timer.fired':
        this.event(this.segment, record.kind, () => ({ [WEFT.step]: body.step as number, ...clean({ until: body.until as string | undefined, at: body.at as string | undefined }) }), at);
        break;
      case 'approval.requested':
        this.event(this.segment, 'approval.requested', () => ({ reason: this.text(body.reason as string), ...clean({ subject: body.subject as string | undefined }) }), at);
        break;
      case 'approval.decided':
        this.event(this.segment, 'approval.decided', () => ({ decision: body.decision as string, by: this.text(body.by as string) }), at);
        break;
      case 'cancel.requested':
        this.event(this.segment, 'cancel.requested', () => ({ by: this.text(body.by as string), reason: this.text(body.reason as string) }), at);
        break;
      case 'deadline.passed':
        this.event(this.segment, 'deadline.passed', () => ({ deadline: body.deadline as string }), at);
        break;
      case 'invocation.rekeyed':
        this.event(this.segment, 'invocation.rekeyed', () => ({ from: body.from as string, to: body.to as string }), at);
        break;
      case 'frontier.truncated':
        this.event(epochSpan, 'frontier.truncated', () => ({ removed: (body.removed as number[]).length, reason: this.text(body.reason as string) }), at);
        break;
      case 'invocation.failed':
        this.segment.setAttributes({ [ERROR_TYPE]: body.code as string, [WEFT.failureClass]: body.class as string });
        break;
      default:
        break;
    }
  }

  /** Whether `actuator` only reads, asked of the library once per actuator (not once per step). */
  private isReadOnly(actuator: string): boolean {
    let readOnly = this.readOnlyOf.get(actuator);
    if (readOnly === undefined) this.readOnlyOf.set(actuator, (readOnly = this.info.readOnly?.(actuator) ?? false));
    return readOnly;
  }

  private toolAttributes(actuator: string, key: string, attempt: number, readOnly: boolean): Attributes {
    return { [GEN_AI.operation]: 'execute_tool', [GEN_AI.toolName]: actuator, [GEN_AI.toolCallId]: `${key}#${attempt}`, [WEFT.actuator]: actuator, [WEFT.key]: key, [WEFT.attempt]: attempt, [WEFT.readOnly]: readOnly };
  }

  private take(map: Map<string, Open>, id: string): Open | undefined {
    const open = map.get(id);
    map.delete(id);
    return open;
  }

  private openEpoch(n: number, at: number): void {
    this.closeEpoch(at);
    const span = this.tracer.startSpan(`epoch ${n}`, { attributes: { [WEFT.epoch]: n }, startTime: at }, this.segmentContext);
    this.epoch = { n, span, context: trace.setSpan(ROOT_CONTEXT, span) };
    this.admissions.clear();
  }

  private closeEpoch(at: number): void {
    const epoch = this.epoch;
    if (!epoch) return;
    this.epoch = undefined;
    this.later(() => epoch.span.end(at));
  }

  /**
   * The segment came to rest or ended (`status`; `fingerprint` once sealed): the spans still open end
   * here (an epoch resting on approval goes on in a later segment's span of its own), and an ended
   * invocation's own span is exported.
   */
  finish(result: { status: string; fingerprint?: string | undefined; reason?: string | undefined }): void {
    const at = nowMs();
    for (const map of [this.models, this.steps, this.compensations]) {
      for (const [, open] of map) {
        open.span.setAttribute(WEFT.stepOutcome, 'unfinished');
        this.later(() => open.span.end(at));
      }
      map.clear();
    }
    if (this.epoch && !ENDED.has(result.status)) this.epoch.span.setAttribute(WEFT.outcome, `rested: ${result.status}`);
    this.closeEpoch(at);
    const attrs = clean({ [WEFT.status]: result.status, [WEFT.fingerprint]: result.fingerprint });
    this.segment.setAttributes(attrs);
    if (result.status === 'failed' || result.status === 'suspended') this.later(() => this.segment.setStatus(clean({ code: SpanStatusCode.ERROR, message: this.text(result.reason) ?? result.status }) as never));
    this.later(() => this.segment.end(at));
    if (!ENDED.has(result.status)) return;
    const inv = this.info.invocation;
    // The invocation's own span, with the ids its segments named as their parent from the start (ids.ts).
    const root = withForcedIds({ traceId: traceIdOf(inv), spanId: invocationSpanIdOf(inv) }, () =>
      this.tracer.startSpan('invoke_agent weft', { kind: SpanKind.INTERNAL, root: true, startTime: this.info.fresh ? this.startedAt : at, attributes: { ...invocationAttributes(this.info), [GEN_AI.operation]: 'invoke_agent', [GEN_AI.agentName]: 'weft', [GEN_AI.agentId]: inv, ...attrs } }, ROOT_CONTEXT),
    );
    this.later(() => {
      if (this.parentId !== undefined) {
        root.setAttribute(WEFT.parent, this.parentId);
        root.addLink?.(parentLink(this.parentId));
      }
    });
    if (!this.info.fresh) root.setAttribute('weft.invocation.span_covers', 'the last segment only (earlier segments ran in other processes)');
    if (result.status !== 'completed' && result.status !== 'superseded') root.setStatus({ code: SpanStatusCode.ERROR, message: result.status });
    this.later(() => root.end(at));
  }
}

function invocationAttributes(info: SegmentInfo): Attributes {
  return clean({
    [WEFT.invocation]: info.invocation,
    [WEFT.tenant]: info.tenant,
    [WEFT.library]: info.pin.library,
    [WEFT.model]: info.pin.model.id,
    [WEFT.runtime]: info.pin.runtime,
    [GEN_AI.conversationId]: info.invocation,
  });
}

/** The link from a fork's spans to its parent invocation's span. */
function parentLink(parent: string): Link {
  return { context: { traceId: traceIdOf(parent), spanId: invocationSpanIdOf(parent), traceFlags: TraceFlags.SAMPLED, isRemote: true }, attributes: { [WEFT.parent]: parent } };
}

/** Attributes without the undefined ones. */
function clean<T extends Record<string, unknown>>(attrs: T): T {
  return Object.fromEntries(Object.entries(attrs).filter(([, v]) => v !== undefined)) as T;
}
