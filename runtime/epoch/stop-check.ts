/**
 * Whether the run must stop before its next step or as its epoch closes: a cancel someone asked for,
 * or the pinned deadline passed. Neither may be read from a clock or an inbox on replay, so each is
 * a journal input, recorded before anything acts on it: replaying, `stopRequested` reads a recorded
 * `cancel.requested` / `deadline.passed` back if that is the next record, and nothing else; live, at
 * the end of the journal, it looks at the clock (a pinned deadline) and then at the inbox (a
 * waiting cancel), and records what it found. What the machine does then: stop-steps.ts.
 */
import type { JournalRecord } from '../../journal/records.js';
import type { RecordDraft } from '../../journal/writer.js';
import type { InvocationContext, Stop } from '../../machines/context.js';
import type { EpochServices } from './services.js';

/**
 * The stop recorded next, or — live, at the end of the journal — the one the clock or the inbox
 * shows now (recorded first); else undefined. A stop seen as an epoch closes (`boundary`) belongs to
 * the next epoch: it is recorded under that epoch's number, exactly as a cancel of the invocation
 * hibernated at that boundary is — so replay, which cannot know the run hibernated there, reads
 * both alike at the boundary.
 */
export async function stopRequested(s: EpochServices, ctx: InvocationContext, where: 'step' | 'boundary'): Promise<Stop | undefined> {
  const rec = s.recorder();
  const epoch = where === 'boundary' ? ctx.epoch + 1 : ctx.epoch;
  if (rec.replaying) {
    const next = rec.peek();
    if ((next?.kind !== 'cancel.requested' && next?.kind !== 'deadline.passed') || next.epoch !== epoch) return undefined;
    return readStop(s, epoch, async () => {
      throw new Error('unreachable: a recorded stop is read back');
    });
  }
  if (!rec.live) return undefined;
  const deadline = ctx.pin.deadline;
  if (deadline !== undefined && s.now() >= Date.parse(deadline)) {
    return readStop(s, epoch, async () => ({ kind: 'deadline.passed' as const, epoch, body: { deadline, at: new Date(s.now()).toISOString() } }));
  }
  const message = await s.inbox?.(where);
  if (message?.type !== 'cancel') return undefined;
  return readStop(s, epoch, async () => ({ kind: 'cancel.requested' as const, epoch, body: { by: message.by, reason: message.reason, at: new Date(message.at).toISOString() } }));
}

type StopDraft = RecordDraft<'cancel.requested'> | RecordDraft<'deadline.passed'>;

async function readStop(s: EpochServices, epoch: number, live: () => Promise<StopDraft>): Promise<Stop> {
  const record = await s.recorder().complete(
    { kinds: ['cancel.requested', 'deadline.passed'] as const, epoch, describe: 'a cancel or a passed deadline', accepts: () => true },
    live as never,
  );
  if (record.kind === 'cancel.requested') {
    const b = (record as JournalRecord<'cancel.requested'>).body;
    return { kind: 'cancel', by: b.by, reason: b.reason, at: b.at, recorded: true };
  }
  const b = (record as JournalRecord<'deadline.passed'>).body;
  return { kind: 'deadline', deadline: b.deadline, at: b.at, recorded: true };
}
