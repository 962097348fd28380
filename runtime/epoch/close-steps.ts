/**
 * The ends of epochs and of the invocation: truncating a failed epoch's frontier, closing an epoch
 * with its outcome (and what of it stays done), and finishing — `invocation.completed` / `failed` /
 * `handed_off` (under flag 11 its reason lists the model-authored effects that stay applied) /
 * `cancelled` / `superseded`, then the seal
 * (an ed25519 signature over the fingerprint; on replay, read back and checked against it).
 */
import { WeftError } from '../../journal/errors.js';
import { signFingerprint } from '../../journal/seal.js';
import type { FinishInput } from '../../machines/actors.js';
import type { InvocationContext } from '../../machines/context.js';
import { authoredOfEpoch, handedOffReason } from '../../machines/authored-allowance.js';
import { epochOutcome } from '../../machines/epoch.js';
import { envelopeSpend } from '../../machines/envelope.js';
import { FLAG_FAIL_CLOSED, hasFlag } from '../../machines/flags.js';
import { pinnedSpendScope } from '../../machines/spenders.js';
import type { EpochServices } from './services.js';
import { stopRequested } from './stop-check.js';
import { keptOf } from './stop-steps.js';

export async function truncate(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const removed = ctx.plan ? ctx.plan.steps.map((_, i) => i) : [];
  await rec.derive({ kind: 'frontier.truncated', epoch: ctx.epoch, body: { epoch: ctx.epoch, removed, reason: ctx.failure?.message ?? 'epoch failed' } });
  return rec.at();
}

export async function closeEpoch(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const outcome = epochOutcome(ctx);
  await rec.derive({ kind: 'epoch.closed', epoch: ctx.epoch, body: { outcome: outcome.outcome, steps: ctx.done.length } });
  // What a completed epoch spent counts against the envelope's per-invocation cap; a compensated one spent nothing.
  const envelope = hasFlag(ctx.pin, FLAG_FAIL_CLOSED) ? s.policy.envelope : undefined;
  const spent = envelope && outcome.outcome === 'completed' && ctx.plan ? envelopeSpend(envelope, ctx.done.map((d) => ctx.plan!.steps[d.step]!), pinnedSpendScope(ctx.pin)) : undefined;
  // What stays done of this epoch (a cancel lists it), and whether the run must stop here (a cancel, the deadline).
  const kept = keptOf(s, ctx, ctx.done, outcome.outcome);
  // Under flag 11, what of it a plan from the model did (and spent) counts against a run-wide allowance.
  const authored = outcome.outcome === 'completed' ? authoredOfEpoch(envelope, ctx, kept, pinnedSpendScope(ctx.pin)) : [];
  const stop = await stopRequested(s, ctx, 'boundary');
  return { ...rec.at(), outcome, ...(spent ? { spent } : {}), ...(kept.length > 0 ? { kept } : {}), ...(authored.length > 0 ? { authored } : {}), ...(stop ? { stop } : {}) };
}



export async function finish(s: EpochServices, input: FinishInput) {
  const { context: ctx, ending } = input;
  const rec = s.recorder();
  if (ending === 'completed') {
    await rec.derive({ kind: 'invocation.completed', epoch: ctx.epoch, body: { summary: ctx.summary ?? '' } });
  } else if (ending === 'failed') {
    const f = ctx.failure ?? { class: 'permanent' as const, code: 'invocation.failed', message: 'failed' };
    await rec.derive({ kind: 'invocation.failed', epoch: ctx.epoch, body: { code: f.code, class: f.class, reason: f.message } });
  } else if (ending === 'superseded') {
    const by = ctx.supersede ?? { by: '?', atEpoch: 0, reason: 'superseded' };
    await rec.derive({ kind: 'invocation.superseded', epoch: ctx.epoch, body: { by: by.by, atEpoch: by.atEpoch, reason: by.reason } });
  } else if (ending === 'cancelled') {
    const stop = ctx.stop?.kind === 'cancel' ? ctx.stop : { by: 'unknown', reason: '' };
    await rec.derive({ kind: 'invocation.cancelled', epoch: ctx.epoch, body: { by: stop.by, reason: stop.reason, kept: ctx.kept ?? [] } });
  } else {
    await rec.derive({ kind: 'invocation.handed_off', epoch: ctx.epoch, body: { reason: handedOffReason(ctx) } });
  }
  const fingerprint = rec.tail;
  await rec.complete(
    {
      kinds: ['invocation.sealed'] as const,
      epoch: ctx.epoch,
      describe: `the seal over fingerprint ${fingerprint}${rec.sealKey === undefined ? '' : ` by key ${rec.sealKey.slice(0, 16)}`}`,
      // The journal is sealed by the key in force (recorded at start, or re-keyed to; seal-key.ts) and no other.
      accepts: (r) => r.body.fingerprint === fingerprint && (rec.sealKey === undefined || r.body.keyId === rec.sealKey),
    },
    async () => {
      if (!s.signingKey) throw new WeftError('runtime.no_signing_key', 'permanent', 'this runtime has no signing key to seal the journal');
      if (rec.sealKey !== undefined && s.signingKey.keyId !== rec.sealKey) {
        throw new WeftError('runtime.seal_key_changed', 'permanent', `refusing to seal with key ${s.signingKey.keyId.slice(0, 16)}: the journal is sealed by key ${rec.sealKey.slice(0, 16)}; resume with that key, or re-key explicitly`);
      }
      return {
        kind: 'invocation.sealed',
        epoch: ctx.epoch,
        body: { algorithm: 'ed25519', fingerprint, keyId: s.signingKey.keyId, signature: signFingerprint(s.signingKey, fingerprint) },
      };
    },
  );
  return { ...rec.at(), fingerprint };
}
