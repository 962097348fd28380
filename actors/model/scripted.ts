/**
 * A scripted model: replies from a transcript, for tests and the offline demo. A reply is chosen
 * by matching the request — its purpose, intent, epoch, the outcomes of earlier epochs, and on a
 * re-prompt the feedback — never by position. A request that carries the wrong context (say, an
 * epoch whose prior outcomes differ from the scripted ones) gets no reply and a clear error, so a
 * runtime bug that loses context cannot hide behind a transcript that answers anything.
 */
import { z } from 'zod';
import { canonicalize } from '../../journal/canonical.js';
import { WeftError } from '../../journal/errors.js';
import type { Model, ModelReply, ModelRequest } from './model.js';

export const transcriptEntrySchema = z.strictObject({
  match: z.strictObject({
    purpose: z.enum(['parse', 'author']).optional(),
    /** Exact intent text. */
    intent: z.string().optional(),
    epoch: z.number().int().nonnegative().optional(),
    /** Exact outcomes of earlier epochs (compared as canonical JSON). */
    outcomes: z.array(z.json()).optional(),
    /** Substring the re-prompt feedback must contain; entries without it match only first prompts. */
    feedback: z.string().optional(),
  }),
  /** A JSON reply (serialized for the model's text), or raw text (to script malformed replies). */
  reply: z.union([z.strictObject({ text: z.string() }), z.record(z.string(), z.json())]),
});

export const transcriptSchema = z.strictObject({
  model: z.string().min(1),
  entries: z.array(transcriptEntrySchema),
});
export type Transcript = z.infer<typeof transcriptSchema>;

/**
 * The scripted model has no reply for a request: it is an offline stand-in that answers only what
 * its transcript scripts (`answers` says what, when its owner knows: a domain's sentence pattern).
 * The message says so and names the way to any other intent — a real model, `--model-url`.
 */
export class NoScriptedReplyError extends WeftError {
  constructor(request: ModelRequest, model?: { id: string; answers?: string | undefined }) {
    super(
      'model.no_scripted_reply',
      'permanent',
      `the offline scripted model${model ? ` ${model.id}` : ''} has no reply for this request: it answers only ${model?.answers ?? 'the requests its transcript scripts'}. ` +
        `For another intent, run with a real model: --model-url URL --model NAME (an OpenAI-compatible endpoint), or add a transcript entry that matches ` +
        `(purpose ${request.purpose}, epoch ${request.epoch}, intent ${JSON.stringify(request.intent)}, outcomes ${canonicalize(request.outcomes)}${request.feedback ? `, feedback ${JSON.stringify(request.feedback)}` : ''})`,
    );
  }
}

export class ScriptedModel implements Model {
  readonly id: string;
  readonly params: Record<string, string | number | boolean | null> = {};
  private readonly transcript: Transcript;
  /** Every request answered, in order — tests assert on it. */
  readonly requests: ModelRequest[] = [];

  /** What this model answers, in a person's words (a domain's sentence pattern): the refusal of any other request says it. */
  readonly answers: string | undefined;

  constructor(transcript: unknown, options: { answers?: string } = {}) {
    this.transcript = transcriptSchema.parse(transcript);
    this.id = `scripted:${this.transcript.model}`;
    this.answers = options.answers;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const entry = this.transcript.entries.find((e) => matches(e.match, request));
    if (!entry) throw new NoScriptedReplyError(request, this);
    this.requests.push(request);
    const reply = entry.reply;
    return { text: typeof reply.text === 'string' && Object.keys(reply).length === 1 ? reply.text : canonicalize(reply) };
  }
}

function matches(match: Transcript['entries'][number]['match'], request: ModelRequest): boolean {
  if (match.purpose !== undefined && match.purpose !== request.purpose) return false;
  if (match.intent !== undefined && match.intent !== request.intent) return false;
  if (match.epoch !== undefined && match.epoch !== request.epoch) return false;
  if (match.outcomes !== undefined && canonicalize(match.outcomes) !== canonicalize(request.outcomes)) return false;
  if (match.feedback === undefined) return request.feedback === undefined;
  return request.feedback !== undefined && request.feedback.includes(match.feedback);
}
