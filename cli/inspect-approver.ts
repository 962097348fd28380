/**
 * How `weft inspect` acts on a decision made in its page (inspector/approve.ts's Approver):
 *
 * - embedded (file store) with `--domain D`: the viewer's own runtime continues the invocation
 *   (`runtime.approve(id, decision)` with run, as `weft approve` does), in the background — the
 *   page follows it to its end;
 * - otherwise the decision is put in the inbox as `weft approve --leave-to-serve` puts it
 *   (`{ type: 'approval', decision, by, note, at }`), after the same checks runtime.approve makes
 *   (not ended, resting in awaitingApproval); `weft serve` or `weft resume` goes on from there.
 *
 * A Redis store the viewer opened for reading is checked as the writers check it: one that would
 * lose acknowledged writes (checkRedisDurability) takes no decision from the page: it shows the
 * `weft approve` command instead.
 */
import type { Approver, Decision } from '../inspector/approve.js';
import { isValidInvocationId, type JournalStore } from '../journal/store.js';
import { checkRedisDurability, type RedisStore } from '../stores/redis.js';
import { InvocationNotFoundError, RuntimeUsageError } from '../runtime/errors.js';
import { openWorkspaceFor } from './open-invocation.js';
import type { StoreChoice } from './store-choice.js';

/** The Approver for a viewer over `store` (opened as `choice` says), resuming itself when it has `domain` in the embedded mode. */
export async function inspectApprover(store: JournalStore, choice: StoreChoice, domain: string | undefined): Promise<Approver> {
  let writable: Approver['writable'] = { ok: true };
  if (choice.redis) {
    const verdict = await checkRedisDurability(await (store as RedisStore).connection());
    if (!verdict.ok) writable = { ok: false, reason: `${store.name} fails the writers' durability check (${verdict.problems.join('; ')})` };
  }
  if (!choice.redis && domain !== undefined) {
    return {
      writable,
      resumes: 'viewer',
      decide: async (id, decision) => {
        await checkAwaitingApproval(store, id);
        const ws = await openWorkspaceFor({ dir: choice.dir, id, domain, model: { url: undefined, name: undefined } });
        const handle = await ws.runtime.approve(id, decision, { run: true });
        handle.done
          .then((result) => process.stdout.write(`weft inspect: ${id} ${decision.decision} by ${decision.by} in the page; it ended ${result.status}\n`))
          .catch((err: unknown) => process.stderr.write(`weft inspect: ${id} after its approval: ${err instanceof Error ? err.message : String(err)}\n`))
          .finally(() => void ws.runtime.close().catch(() => undefined));
      },
    };
  }
  return {
    writable,
    resumes: 'serve',
    decide: async (id, decision) => {
      await checkAwaitingApproval(store, id);
      await store.putInbox(id, inboxMessage(decision, Date.now()));
    },
  };
}

/** The inbox message runtime.approve writes for a decision. */
export function inboxMessage(decision: Decision, at: number) {
  return { type: 'approval' as const, ...decision, at };
}

/** Refuse (RuntimeUsageError) a decision on an invocation that is unknown, ended, or not resting awaiting approval — as runtime.approve does. */
async function checkAwaitingApproval(store: JournalStore, id: string): Promise<void> {
  if (!isValidInvocationId(id)) throw new RuntimeUsageError('runtime.bad_invocation_id', `${JSON.stringify(id.slice(0, 80))} is not an invocation id`);
  const tail = await store.tail(id);
  if (tail === undefined) throw new InvocationNotFoundError(id, store.name);
  if (tail.kind === 'invocation.sealed') throw new RuntimeUsageError('runtime.not_awaiting_approval', `invocation ${id} is not awaiting approval: it has ended`);
  const value = ((await store.getSnapshot(id))?.data as { value?: unknown } | undefined)?.value;
  if (value !== 'awaitingApproval') throw new RuntimeUsageError('runtime.not_awaiting_approval', `invocation ${id} is not awaiting approval (its last snapshot is in ${JSON.stringify(value ?? 'no snapshot')})`);
  // A cancel waiting in the inbox is never replaced by a decision (as runtime.approve refuses).
  if ((await store.peekInbox(id).catch(() => undefined))?.type === 'cancel') {
    throw new RuntimeUsageError('runtime.cancel_pending', `invocation ${id} has a cancel waiting in its inbox: it ends cancelled when it is next taken up; an approval cannot replace it`);
  }
}
