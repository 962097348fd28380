/**
 * Which model a CLI command runs with. `run` takes `--model-url URL --model NAME` (an
 * OpenAI-compatible endpoint) or the domain's own model. `resume` and `approve` take the model the
 * invocation PINNED: an OpenAI-compatible pin is rebuilt with its pinned name and parameters at the
 * endpoint given by `--model-url` or remembered from the start (endpoints are not pinned); any
 * other pin uses the domain's model. Flags that name another model are passed through as given, so
 * the runtime's pin check refuses them by field — nothing here decides silently.
 */
import type { Model } from '../actors/model/model.js';
import { OpenAiModel } from '../actors/model/openai.js';
import type { Pin } from '../journal/records.js';
import { UsageError } from './args.js';
import type { InvocationMeta } from './invocation-meta.js';

/** A chat model at an OpenAI-compatible endpoint; the key from WEFT_MODEL_KEY or OPENAI_API_KEY. */
export function endpointModel(baseUrl: string, model: string, params: { temperature?: number } = {}): Model {
  const apiKey = process.env.WEFT_MODEL_KEY ?? process.env.OPENAI_API_KEY;
  return new OpenAiModel({ baseUrl, model, ...(apiKey ? { apiKey } : {}), ...(params.temperature === undefined ? {} : { temperature: params.temperature }) });
}

export interface ModelFlags {
  url: string | undefined;
  name: string | undefined;
}

/** `run`: a model endpoint from the flags, or undefined for the domain's own model. */
export function modelFromFlags(flags: ModelFlags): Model | undefined {
  if ((flags.url === undefined) !== (flags.name === undefined)) {
    throw new UsageError('--model-url and --model go together (an OpenAI-compatible endpoint and a model name)');
  }
  return flags.url && flags.name ? endpointModel(flags.url, flags.name) : undefined;
}

/** `resume` / `approve`: the pinned model, or what the flags name (for the pin check to judge). */
export function modelForPin(id: string, pin: Pin, flags: ModelFlags, meta: InvocationMeta | undefined): Model | undefined {
  const pinnedName = /^openai-compatible:(.+)$/.exec(pin.model.id)?.[1];
  const temperature = typeof pin.model.params.temperature === 'number' ? pin.model.params.temperature : undefined;
  if (pinnedName === undefined) {
    if (flags.url === undefined && flags.name === undefined) return undefined;
    return endpointModel(flags.url ?? 'http://endpoint.not.given/v1', flags.name ?? '(no --model given)');
  }
  const url = flags.url ?? meta?.modelUrl;
  if (url === undefined) {
    throw new UsageError(`${id} is pinned to model ${pin.model.id}, and endpoints are not pinned: pass --model-url URL (the endpoint that serves ${pinnedName})`);
  }
  return endpointModel(url, flags.name ?? pinnedName, temperature === undefined ? {} : { temperature });
}
