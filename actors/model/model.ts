/**
 * The model contract. A model is an actuator of kind "model": given a request (the intent, the
 * outcomes of the epochs so far, the catalogue of tasks the pinned library knows, and — on a
 * re-prompt — the validation error of its previous reply), it returns the reply's raw text.
 *
 * The runtime records that text verbatim (`model.completed`) and parses and validates it as a pure
 * step, so replay re-derives the same acceptance or rejection from the recorded text and never
 * asks the model again. Model output is data; it is never evaluated as code.
 */
import { isWeftError, WeftError } from '../../journal/errors.js';
import { bounded } from '../../machines/untrusted-text.js';

export interface TaskSignature {
  name: string;
  params: Array<{ name: string; type: string }>;
  description?: string;
}

/** An operator the model may use in an authored fragment, with the actuator it dispatches. */
export interface OperatorSignature {
  name: string;
  params: Array<{ name: string; type: string }>;
  /** The actuator and its explicit args (terms over the params); absent for a pure bookkeeping operator. */
  actuator?: { name: string; args: Record<string, string | number> };
  readOnly: boolean;
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
  /** Authoring only: the goal no method covered, why, the operators a fragment may use, and the observed state. */
  goal?: { task: string; args: Array<string | number> };
  explanation?: string;
  operators?: OperatorSignature[];
  state?: unknown;
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

/** The endpoint answered 2xx with something that is not a chat-completions response (HTML, SSE, empty, cut off). */
export class ModelEnvelopeError extends WeftError {
  constructor(
    readonly modelId: string,
    detail: string,
  ) {
    super('model.bad_envelope', 'permanent', `model ${modelId}'s endpoint did not answer with a chat-completions JSON response: ${detail}; check --model-url points at an OpenAI-compatible /v1 endpoint without streaming`);
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

/** How a failed model call is recorded (`model.failed`) and what the invocation does next. */
export interface ModelFailure {
  /** transient: retried, then suspended · credentials / endpoint: suspended until fixed · permanent: the invocation fails. */
  class: 'transient' | 'credentials' | 'endpoint' | 'permanent';
  code: string;
  message: string;
}

const MESSAGE_CHARS = 500;

/**
 * Classify a model call's error. `beforeAnyReply`: no reply has come in this invocation yet, so a
 * 404 (an unknown model or path) is a configuration the pin makes permanent; after replies, the
 * endpoint moved, which a person can fix.
 */
export function classifyModelFailure(err: unknown, beforeAnyReply: boolean, timeoutMs?: number): ModelFailure {
  const raw = err instanceof Error ? err.message : String(err);
  const message = bounded(raw, MESSAGE_CHARS);
  const name = (err as { name?: unknown })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return { class: 'transient', code: 'model.timeout', message: `no reply within ${timeoutMs ?? '?'} ms` };
  }
  const weft = isWeftError(err) ? err : undefined;
  if (weft?.code === 'model.request_refused' && typeof (err as { status?: unknown }).status === 'number') {
    const status = (err as { status: number }).status;
    if (status === 401 || status === 403) return { class: 'credentials', code: 'model.credentials', message };
    if (status === 404) return beforeAnyReply ? { class: 'permanent', code: 'model.not_found', message: `${message}; start a new run with the right model and endpoint` } : { class: 'endpoint', code: 'model.not_found', message };
    return { class: 'permanent', code: weft.code, message };
  }
  if (weft?.code === 'model.bad_envelope') return { class: 'endpoint', code: weft.code, message };
  if (weft) return { class: weft.failureClass === 'transient' ? 'transient' : 'permanent', code: weft.code, message };
  return { class: 'transient', code: 'model.error', message };
}
