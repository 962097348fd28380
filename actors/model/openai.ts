/**
 * An OpenAI-compatible chat-completions client (OpenAI, Ollama, vLLM, llama.cpp server, hosted
 * APIs): POST {baseUrl}/chat/completions with JSON output requested and a per-call timeout.
 * Transient failures (network errors, timeouts, HTTP 408, 429 and 5xx) throw ModelUnavailableError
 * — the runtime retries them itself, recording each attempt, up to its pinned `modelAttempts`
 * (standalone users may ask this client to retry with `maxAttempts`). A 4xx refusal throws
 * ModelRequestError; a 2xx that is not a chat-completions response (HTML, an SSE stream, an empty
 * or cut-off body) throws ModelEnvelopeError.
 *
 * It returns the reply text untouched — even when it is not JSON: judging the reply is the pure
 * validation step's job, so a malformed reply is recorded and re-prompted, not thrown away here.
 * Backoff jitter is derived from the attempt number, never from Math.random.
 */
import { ModelEnvelopeError, ModelRequestError, ModelUnavailableError, type Model, type ModelReply, type ModelRequest } from './model.js';
import { renderPrompt } from './prompt.js';

export interface OpenAiModelOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  temperature?: number;
  /** Per-attempt timeout. Default 60 s. */
  timeoutMs?: number;
  /** Attempts for transient failures, including the first. Default 1: the runtime owns retries. */
  maxAttempts?: number;
  /** First backoff delay; doubles each retry. Default 500 ms. */
  backoffMs?: number;
  /** Injected for tests. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

export class OpenAiModel implements Model {
  readonly id: string;
  readonly params: Record<string, string | number | boolean | null>;

  constructor(private readonly options: OpenAiModelOptions) {
    this.id = `openai-compatible:${options.model}`;
    // Pinned: what shapes the replies. The endpoint (baseUrl), key, timeout and retries are not: endpoints move.
    this.params = { model: options.model, temperature: options.temperature ?? 0 };
  }

  async complete(request: ModelRequest, { signal }: { signal?: AbortSignal } = {}): Promise<ModelReply> {
    const maxAttempts = this.options.maxAttempts ?? 1;
    let lastProblem = 'no attempt made';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const outcome = await this.attempt(request, signal);
      if (outcome.kind === 'reply') return { text: outcome.text };
      lastProblem = outcome.problem;
      if (outcome.kind === 'refused') throw new ModelRequestError(this.id, outcome.status, outcome.problem);
      if (outcome.kind === 'envelope') throw new ModelEnvelopeError(this.id, outcome.problem);
      if (attempt < maxAttempts) await this.pause(attempt);
    }
    throw new ModelUnavailableError(this.id, maxAttempts === 1 ? lastProblem : `${maxAttempts} attempts failed, last: ${lastProblem}`);
  }

  private async attempt(
    request: ModelRequest,
    outer: AbortSignal | undefined,
  ): Promise<{ kind: 'reply'; text: string } | { kind: 'transient'; problem: string } | { kind: 'refused'; status: number; problem: string } | { kind: 'envelope'; problem: string }> {
    const timeoutMs = this.options.timeoutMs ?? 60_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = outer ? AbortSignal.any([outer, timeout]) : timeout;
    const doFetch = this.options.fetch ?? fetch;
    let response: Response;
    let raw: string;
    try {
      response = await doFetch(`${this.options.baseUrl.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: this.options.model,
          temperature: this.options.temperature ?? 0,
          response_format: { type: 'json_object' },
          messages: renderPrompt(request),
        }),
        signal,
      });
      raw = await response.text();
    } catch (err) {
      if (outer?.aborted) throw err;
      const problem = timeout.aborted ? `no reply within ${timeoutMs} ms` : `network error: ${networkError(err)}`;
      return { kind: 'transient', problem };
    }
    if (response.status === 408 || response.status === 429 || response.status >= 500) {
      return { kind: 'transient', problem: `HTTP ${response.status}: ${raw.slice(0, 200)}` };
    }
    if (!response.ok) return { kind: 'refused', status: response.status, problem: raw.slice(0, 300) };
    return extractContent(raw);
  }

  private pause(attempt: number): Promise<void> {
    const base = (this.options.backoffMs ?? 500) * 2 ** (attempt - 1);
    const jitter = ((attempt * 2654435761) % 1000) / 4000; // 0–25 %, derived, not random
    const ms = Math.round(base * (1 + jitter));
    return (this.options.sleep ?? ((t) => new Promise((resolve) => setTimeout(resolve, t))))(ms);
  }
}

/** Pull `choices[0].message.content` out of a chat-completions response body. */
function extractContent(raw: string): { kind: 'reply'; text: string } | { kind: 'envelope'; problem: string } {
  if (raw.trim() === '') return { kind: 'envelope', problem: 'the body is empty' };
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { kind: 'envelope', problem: `the body is not JSON: ${JSON.stringify(raw.slice(0, 120))}${raw.length > 120 ? '…' : ''}` };
  }
  const content = (body as { choices?: Array<{ message?: { content?: unknown } }> } | null)?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') {
    return { kind: 'envelope', problem: 'the response has no choices[0].message.content string' };
  }
  return { kind: 'reply', text: content };
}

/** fetch's error with its cause ("fetch failed" alone does not say a socket closed or a host was refused). */
function networkError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error ? (err.cause as { message?: unknown; code?: unknown } | undefined) : undefined;
  const detail = [cause?.message, cause?.code].filter((part) => typeof part === 'string' && part !== '').join(', ');
  return detail ? `${message} (${detail})` : message;
}
