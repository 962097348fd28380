/**
 * The attribute names Weft's spans carry: OpenTelemetry's semantic conventions where one applies,
 * Weft's own (`weft.*`) beside them.
 *
 * The GenAI conventions are still at Development status, so the version followed is pinned:
 * SEMCONV_VERSION (1.37.0, the first with `gen_ai.provider.name`; it is the schema URL of Weft's
 * tracer). `OTEL_SEMCONV_STABILITY_OPT_IN` is honoured as the conventions ask: with
 * `gen_ai_latest_experimental` in it, only the pinned (latest) names are emitted; without it the
 * name older backends read, `gen_ai.system`, is emitted too, beside `gen_ai.provider.name`.
 *
 * Prompt and completion content is never captured (Weft records the model's request and reply in
 * its journal; a trace carries only their shape).
 */
export const SEMCONV_VERSION = '1.37.0';
export const SCHEMA_URL = `https://opentelemetry.io/schemas/${SEMCONV_VERSION}`;

/** Whether the latest experimental GenAI names alone are wanted (OTEL_SEMCONV_STABILITY_OPT_IN). */
export function genAiLatestOnly(optIn: string | undefined = process.env.OTEL_SEMCONV_STABILITY_OPT_IN): boolean {
  return (optIn ?? '').split(',').map((s) => s.trim()).includes('gen_ai_latest_experimental');
}

export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  /** Before 1.37; emitted beside `provider` unless the latest names alone are asked for. */
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
} as const;

export const ERROR_TYPE = 'error.type';

/** Weft's own attributes. */
export const WEFT = {
  invocation: 'weft.invocation.id',
  tenant: 'weft.tenant',
  library: 'weft.library.digest',
  model: 'weft.model.id',
  runtime: 'weft.runtime',
  status: 'weft.invocation.status',
  fingerprint: 'weft.fingerprint',
  segment: 'weft.segment',
  parent: 'weft.fork.parent',
  epoch: 'weft.epoch',
  goal: 'weft.epoch.goal',
  source: 'weft.epoch.source',
  outcome: 'weft.epoch.outcome',
  purpose: 'weft.model.purpose',
  attempt: 'weft.attempt',
  failureClass: 'weft.failure.class',
  failureCode: 'weft.failure.code',
  failureMessage: 'weft.failure.message',
  step: 'weft.step',
  actuator: 'weft.actuator',
  key: 'weft.idempotency_key',
  stepOutcome: 'weft.step.outcome',
  readOnly: 'weft.step.read_only',
  admission: 'weft.admission.decision',
  rule: 'weft.admission.rule',
  policy: 'weft.admission.policy',
  worker: 'weft.worker',
  queue: 'weft.queue',
  domain: 'weft.domain',
} as const;

/**
 * The provider a model id names, as `gen_ai.provider.name` takes it: the part before `:` or `/`
 * when it is a well-known one (`openai:gpt-4o-mini`), else `weft.<prefix>` (a scripted model: a
 * custom value, as the conventions allow).
 */
export function providerOf(modelId: string): string {
  const prefix = modelId.split(/[:/]/)[0]!.toLowerCase();
  const known = new Set(['openai', 'anthropic', 'aws.bedrock', 'azure.ai.openai', 'gcp.gemini', 'gcp.vertex_ai', 'mistral_ai', 'groq', 'deepseek', 'cohere', 'ibm.watsonx.ai', 'perplexity', 'x_ai']);
  return known.has(prefix) ? prefix : `weft.${prefix || 'model'}`;
}

/** The model name a model id names (`openai:gpt-4o-mini` → `gpt-4o-mini`). */
export function modelNameOf(modelId: string): string {
  const at = modelId.search(/[:/]/);
  return at < 0 ? modelId : modelId.slice(at + 1) || modelId;
}
