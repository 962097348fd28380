/**
 * The model contract. A model is an actuator of kind "model": given a request (the intent, the
 * outcomes of the epochs so far, the catalogue of tasks the pinned library knows, and — on a
 * re-prompt — the validation error of its previous reply), it returns the reply's raw text.
 *
 * The runtime records that text verbatim (`model.completed`) and parses and validates it as a pure
 * step, so replay re-derives the same acceptance or rejection from the recorded text and never
 * asks the model again. Model output is data; it is never evaluated as code.
 */
import { WeftError } from '../../journal/errors.js';

export interface TaskSignature {
  name: string;
  params: Array<{ name: string; type: string }>;
  description?: string;
}

export interface ModelRequest {
  purpose: 'parse' | 'author';
  intent: string;
  epoch: number;
  /** What happened in epochs before this one (plain JSON, oldest first). */
  outcomes: unknown[];
  /** The tasks of the pinned library the reply may name. */
  tasks: TaskSignature[];
  /** Why the previous reply in this epoch was rejected; present only on a re-prompt. */
  feedback?: string;
}

export interface ModelReply {
  /** The reply exactly as the model produced it. */
  text: string;
}

export interface Model {
  /** Pinned: recorded in `invocation.pinned` so a replay knows which model spoke. */
  readonly id: string;
  readonly params: Record<string, string | number | boolean | null>;
  complete(request: ModelRequest, options?: { signal?: AbortSignal }): Promise<ModelReply>;
}

/** The model could not be reached or kept failing (after the adapter's own retries). */
export class ModelUnavailableError extends WeftError {
  constructor(
    readonly modelId: string,
    detail: string,
  ) {
    super('model.unavailable', 'transient', `model ${modelId} is unavailable: ${detail}; check the endpoint and key, then resume the invocation`);
  }
}

/** The model endpoint refused the request itself (4xx other than 408/429): retrying will not help. */
export class ModelRequestError extends WeftError {
  constructor(
    readonly modelId: string,
    readonly status: number,
    detail: string,
  ) {
    super('model.request_refused', 'permanent', `model ${modelId} refused the request (HTTP ${status}): ${detail}; fix the model configuration (base URL, model name, key)`);
  }
}
