/**
 * What the epoch's actors need from the runtime: the recorder (the one path to the journal), the
 * pinned library and policy, the observation actuator, and — live only — the model, the
 * dispatcher and the signing key. Replay passes none of the live ones, so it cannot call out.
 */
import type { Model } from '../../actors/model/model.js';
import type { SigningKey } from '../../journal/seal.js';
import type { InboxMessage } from '../../journal/store.js';
import type { EvaluableRegistry } from '../../htn/library/evaluables.js';
import type { Library } from '../../htn/library/schema.js';
import type { AdmissionPolicy } from '../../machines/policy.js';
import type { Dispatcher } from '../../queue/dispatcher.js';
import type { Recorder } from '../recorder.js';

export interface EpochServices {
  /** The recorder of the invocation this machine runs (swapped on resume). */
  recorder(): Recorder;
  library: Library;
  libraryDigest: string;
  policy: AdmissionPolicy;
  /** The read-only `state` actuator observed at the start of every epoch. */
  observe: string;
  evaluables?: EvaluableRegistry;
  /** Live only (replay never calls out). */
  model?: Model;
  dispatcher?: Dispatcher;
  signingKey?: SigningKey;
  sleep(ms: number): Promise<void>;
  /** The wall clock (ms): when a durable sleep step is due — live only; replay reads the recorded firing. */
  now(): number;
  /**
   * Live only: the message waiting in the invocation's inbox (a cancel is what the epoch looks for),
   * asked before each step (`step`: a runtime may skip a look made moments before) and as an epoch
   * closes (`boundary`: always looked at).
   */
  inbox?(where: 'step' | 'boundary'): Promise<InboxMessage | undefined>;
  /** Live only: how long a step refused by workers waits for a capable one before the run rests suspended (refusals.ts; default 5 min). */
  refusalWaitMs?: number;
  /** The command that starts a worker of this runtime's domain, for the reason a refused step suspends with. */
  workerHint?: string;
  /** Told of every error an actor throws (the machine then suspends with its message). */
  onActorError?(err: unknown): void;
}

/** The name of the one-off task the gap path certifies an authored fragment under. */
export const AUTHORED_TASK = 'weft:authored';
