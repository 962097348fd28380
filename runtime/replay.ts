/**
 * Replay: run the invocation machine over a recorded journal without calling anything. Model
 * replies, observations and actuator completions are read back; everything else — goals judged
 * from replies, every HTN decomposition, admissions, dispatches — is re-derived over the pinned
 * library and compared with the journal, record by record. Every record is re-chained, so a
 * replay that reaches the end has reproduced the journal's bytes and its fingerprint.
 *
 * Replay needs no actuators: which of them spend (behaviour flag 2) is read from the pin, as every
 * admission is re-derived from what the invocation pinned, not from what this process has.
 *
 * Resting states are driven by the journal: a recorded `approval.decided` is replayed as the
 * person's decision; a recorded `cancel.requested` or `deadline.passed` right after a resting state
 * as the `cancel` / `deadline` event that brought it (never the inbox, never a clock); a hibernation or a recorded suspension (a model or observation failure) is
 * resumed if the journal goes on. An actor's error during replay (a divergence) is the replay's
 * error, not a suspension.
 *
 * A recorded `invocation.superseded` (runtime/fork.ts) is replayed as the fork's `supersede` event
 * in the resting state the run was in; one right after an `epoch.closed` means the run had
 * hibernated at that boundary (a hibernation is not recorded), so the replay hibernates there too.
 * A fork's journal starts from its `invocation.forked` record's state (limits.ts inputFromJournal);
 * checking that state against the parent's journal is the runtime's part (runtime/fork.ts).
 */
import type { InspectionEvent, Observer } from 'xstate';
import { verifyRecords } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import type { EvaluableRegistry } from '../htn/library/evaluables.js';
import type { Library } from '../htn/library/schema.js';
import type { InvocationContext } from '../machines/context.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import { restingStates } from '../machines/invocation-machine.js';
import { createInvocationActor, type EpochServices } from './epoch-actors.js';
import { ReplayDivergenceError, ReplayEndedError } from './errors.js';
import { Recorder } from './recorder.js';
import { inputFromJournal } from './limits.js';

export interface ReplayDeps {
  loadLibrary(digest: string): Promise<Library>;
  policy(id: string): AdmissionPolicy;
  observe: string;
  evaluables?: EvaluableRegistry;
  /** Used only to re-check actuator names and arg schemas at certification; never dispatched. */
  dispatcher?: Dispatcher;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Called for each record replay passes, in order (the viewer's time travel: inspector/replay-trail.ts). */
  onRecord?: (record: JournalRecord) => void;
  /** Called with every state the replayed machine reaches and its context (runtime/fork.ts reads a run's state at an epoch boundary). */
  onState?: (value: string, context: InvocationContext) => void;
}

export interface ReplayResult {
  id: string;
  /** Where the replayed machine stopped: a final state, or a resting state the journal ends in. */
  status: 'completed' | 'failed' | 'handed_off' | 'cancelled' | 'superseded' | 'awaiting_approval' | 'waiting_timer' | 'hibernated' | 'suspended' | 'unfinished';
  records: number;
  sealed: boolean;
  /** The fingerprint replay computed (the hash before the seal; the last hash if unsealed). */
  fingerprint: string;
}

const FINAL: Record<string, ReplayResult['status']> = { completed: 'completed', failed: 'failed', handedOff: 'handed_off', cancelled: 'cancelled', superseded: 'superseded' };
const RESTING: ReadonlySet<string> = new Set<string>(restingStates);

export async function replayJournal(records: readonly JournalRecord[], deps: ReplayDeps): Promise<ReplayResult> {
  const report = verifyRecords(records);
  if (!report.ok) throw report.error!;
  const first = records[0] as JournalRecord<'invocation.pinned'>;
  const { invocation, pin } = first.body;
  const library = await deps.loadLibrary(pin.library);
  // No key is in force until a re-key names one: the recorder then holds the seal to it.
  const input = inputFromJournal(records);
  const recorder = new Recorder({ seq: input.seq, tail: input.tail, existing: records.slice(input.seq), ...(deps.onRecord ? { onRecord: deps.onRecord } : {}) });
  const hibernatedAt = hibernationBeforeSupersession(records);
  let actorError: unknown;
  const services: EpochServices = {
    onActorError: (err) => {
      actorError = err;
    },
    recorder: () => recorder,
    library,
    libraryDigest: pin.library,
    policy: deps.policy(pin.policy),
    observe: deps.observe,
    evaluables: deps.evaluables,
    dispatcher: deps.dispatcher,
    sleep: async () => undefined,
    now: () => 0, // never asked: replay reads every recorded timer firing
  };
  const actor = createInvocationActor(services, {
    input,
    ...(deps.inspect ? { inspect: deps.inspect as Observer<InspectionEvent> } : {}),
  });

  const stoppedAt = await new Promise<ReplayResult['status']>((resolve, reject) => {
    actor.subscribe({
      next(snapshot) {
        const value = String(snapshot.value);
        deps.onState?.(value, snapshot.context);
        if (FINAL[value]) return resolve(FINAL[value]!);
        const next = recorder.peek();
        // The run hibernated at this epoch's boundary before a fork superseded it: so does the replay.
        if (hibernatedAt === snapshot.context.epoch && !snapshot.context.hibernateRequested && value !== 'hibernated') actor.send({ type: 'hibernate' });
        // A runtime-side suspension is never in a journal: during replay it is the replay's own error.
        if (value === 'suspended' && snapshot.context.suspension?.class === 'runtime') {
          if (actorError instanceof ReplayEndedError) return resolve('unfinished');
          return reject(actorError ?? new Error(snapshot.context.suspension.message));
        }
        if (next?.kind === 'invocation.superseded' && RESTING.has(value)) {
          const body = (next as JournalRecord<'invocation.superseded'>).body;
          queueMicrotask(() => actor.send({ type: 'supersede', by: body.by, atEpoch: body.atEpoch, reason: body.reason }));
          return;
        }
        if (RESTING.has(value) && next?.kind === 'cancel.requested') {
          const body = (next as JournalRecord<'cancel.requested'>).body;
          queueMicrotask(() => actor.send({ type: 'cancel', by: body.by, reason: body.reason, at: body.at }));
        } else if (RESTING.has(value) && next?.kind === 'deadline.passed') {
          const body = (next as JournalRecord<'deadline.passed'>).body;
          queueMicrotask(() => actor.send({ type: 'deadline', deadline: body.deadline, at: body.at }));
        } else if (value === 'awaitingApproval') {
          if (next?.kind !== 'approval.decided') return resolve('awaiting_approval');
          const body = (next as JournalRecord<'approval.decided'>).body;
          queueMicrotask(() => actor.send({ type: 'approval.decided', decision: body.decision, by: body.by, ...(body.note === undefined ? {} : { note: body.note }) }));
        } else if (value === 'awaitingTimer') {
          if (!next) return resolve('waiting_timer');
          queueMicrotask(() => actor.send({ type: 'resume' }));
        } else if (value === 'hibernated') {
          if (!next) return resolve('hibernated');
          queueMicrotask(() => actor.send({ type: 'resume' }));
        } else if (value === 'suspended') {
          if (snapshot.context.suspension?.class === 'runtime') {
            if (actorError instanceof ReplayEndedError) return resolve('unfinished');
            return reject(actorError ?? new Error(snapshot.context.suspension.message));
          }
          if (!next) return resolve('suspended');
          queueMicrotask(() => actor.send({ type: 'resume' }));
        }
      },
      error(err) {
        if (err instanceof ReplayEndedError) resolve('unfinished');
        else reject(err);
      },
    });
    actor.start();
  }).finally(() => actor.stop());

  recorder.passOverRekeys();
  const extra = recorder.peek();
  if (extra && stoppedAt !== 'unfinished') {
    throw new ReplayDivergenceError(extra.seq, extra.kind, { kind: extra.kind, epoch: extra.epoch, body: extra.body }, `no further record: the replayed invocation stopped in ${stoppedAt}`);
  }
  const sealed = records.at(-1)?.kind === 'invocation.sealed';
  return { id: invocation, status: stoppedAt, records: recorder.seq, sealed, fingerprint: sealed ? records.at(-1)!.prev : recorder.tail };
}

/**
 * The epoch at whose boundary the run rested (hibernated) before a fork superseded it: the record
 * before `invocation.superseded` (re-keys aside) is that epoch's `epoch.closed`. Undefined otherwise.
 */
function hibernationBeforeSupersession(records: readonly JournalRecord[]): number | undefined {
  const at = records.findIndex((r) => r.kind === 'invocation.superseded');
  let i = at - 1;
  while (i > 0 && records[i]!.kind === 'invocation.rekeyed') i--;
  return at > 0 && records[i]!.kind === 'epoch.closed' ? records[i]!.epoch : undefined;
}
