/**
 * Admission policy — a pure, versioned decision (allow / deny / require approval) for an epoch
 * before it runs and for each step at dispatch. Its id (`name@version`) is pinned, so a replay runs
 * the decisions of the policy the invocation started with; changing what a policy decides means
 * a new version.
 *
 * A policy may also carry a contract envelope (envelope.ts: spend cap, actuators, recipients, sizes),
 * pinned with it through its id, and decide on the model-authoring call of the gap path itself
 * (`admitAuthoring`; absent = allow).
 */
import type { EpochPlan, EpochStep, Goal } from './context.js';
import type { ContractEnvelope } from './envelope.js';

/**
 * A decision, with its reason and — for a policy that names its rules (a policy pack, policy/) — the
 * id of the rule that decided; recorded on `admission.decided` under behaviour flag 7.
 */
export type Admission =
  | { decision: 'allow'; rule?: string; warnings?: readonly AdmissionWarning[] }
  | { decision: 'deny'; reason: string; rule?: string; warnings?: readonly AdmissionWarning[] }
  | { decision: 'require_approval'; reason: string; rule?: string; warnings?: readonly AdmissionWarning[] };

/**
 * A rule that applied with the verdict `warn` (a policy pack's, policy/verdict.ts): it stops nothing —
 * the admission is decided by the other rules — and is recorded on `admission.decided` beside the
 * decision, whichever rule decided it (behaviour flag 12).
 */
export interface AdmissionWarning {
  rule: string;
  reason: string;
}

/** Which part of the contract envelope each envelope rule of a pack set (envelope.ts `EnvelopePart` → rule id). */
export type EnvelopeRuleIds = Partial<Record<'spend' | 'actuators' | 'recipients' | 'stepsPerFragment' | 'dispatchesPerEpoch' | 'authoredEffects', string>>;

export interface EpochAdmissionRequest {
  tenant: string;
  epoch: number;
  goal: Goal;
  plan: EpochPlan;
  /**
   * Under behaviour flag 2: the actuators the invocation pinned as spending (`Actuator.spends`,
   * `pin.spenders`). A policy that sums money should count only their steps; absent (count every
   * world effect, as before) for journals pinned before flag 2 and for domains that declare none.
   */
  spenders?: ReadonlySet<string>;
}

export interface StepAdmissionRequest {
  tenant: string;
  epoch: number;
  index: number;
  step: EpochStep;
}

/** The model-authoring call of the gap path (no method covered the goal), before the model is asked. */
export interface AuthoringAdmissionRequest {
  tenant: string;
  epoch: number;
  goal: Goal;
}

export interface AdmissionPolicy {
  /** `name@version`, pinned in `invocation.pinned`. */
  readonly id: string;
  admitEpoch(request: EpochAdmissionRequest): Admission;
  admitStep?(request: StepAdmissionRequest): Admission;
  /** The admission of the model-authoring call itself; absent = allow. */
  admitAuthoring?(request: AuthoringAdmissionRequest): Admission;
  /** What any invocation under this policy may do at most (envelope.ts); absent = no envelope. */
  readonly envelope?: ContractEnvelope;
  /**
   * True for a policy whose every decision names the rule that decided (a policy pack): under flag 7
   * the runtime records it, and names its own checks too (`weft:certify`, `weft:task-constraints`,
   * the envelope rule from `envelopeRules`). Absent: nothing is named, as before.
   */
  readonly namesRules?: boolean;
  /** The rule id behind each part of `envelope` (a policy pack's envelope rules). */
  readonly envelopeRules?: EnvelopeRuleIds;
}

export const allowAll: AdmissionPolicy = {
  id: 'allow-all@1',
  admitEpoch: () => ({ decision: 'allow' }),
};

/**
 * A common policy: an epoch whose world-effect steps move more than `limit` (summed over the
 * numeric actuator arg named `amountArg`) needs a person's approval; steps on actuators in `deny`
 * are refused outright. Under flag 2, when the pin names spending actuators, only their steps are
 * summed (a message that mentions an amount is not counted); when it names none, every world effect
 * is, as before — an undeclared domain asks a person more often, never less. `envelope`, if given,
 * is carried on the policy as it is (its id format is unchanged, so a new envelope needs a new
 * version).
 */
export function spendApprovalPolicy(options: {
  version: string;
  limit: number;
  amountArg: string;
  deny?: readonly string[];
  envelope?: ContractEnvelope;
}): AdmissionPolicy {
  const denied = new Set(options.deny ?? []);
  return {
    id: `spend-approval@${options.version}`,
    ...(options.envelope === undefined ? {} : { envelope: options.envelope }),
    admitEpoch({ plan, spenders }) {
      const refused = plan.steps.find((s) => s.actuator !== undefined && denied.has(s.actuator));
      if (refused) return { decision: 'deny', reason: `actuator ${refused.actuator} is not allowed by policy` };
      let total = 0;
      for (const step of plan.steps) {
        const amount = step.actuatorArgs?.[options.amountArg];
        const spends = spenders === undefined || spenders.size === 0 || (step.actuator !== undefined && spenders.has(step.actuator));
        if (!step.readOnly && spends && typeof amount === 'number') total += amount;
      }
      return total > options.limit
        ? { decision: 'require_approval', reason: `the epoch spends ${total}, above the ${options.limit} limit` }
        : { decision: 'allow' };
    },
  };
}
