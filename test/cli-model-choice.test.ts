/**
 * Which model `resume` and `approve` run with: the pinned one. An OpenAI-compatible pin is rebuilt
 * with its pinned name and temperature at the endpoint given or remembered (endpoints are not
 * pinned); without an endpoint the command says which flag to pass; flags that name another model
 * are passed through as given, for the runtime's pin check to refuse by field.
 */
import { describe, expect, test } from 'vitest';
import type { Pin } from '../journal/records.js';
import { UsageError } from '../cli/args.js';
import { modelForPin } from '../cli/model-choice.js';
import { compareModel } from '../runtime/pin-check.js';
import { pinnedModelParams } from '../runtime/runtime.js';

const pin = (id: string, params: Pin['model']['params'] = {}): Pin => ({ library: '0'.repeat(64), runtime: 'weft@0.1.0', flags: [], model: { id, params }, seed: '1', asOf: '2026-06-01T09:00:00.000Z', policy: 'allow-all@1' });
const none = { url: undefined, name: undefined };
const offered = (m: ReturnType<typeof modelForPin>) => (m ? { id: m.id, params: pinnedModelParams(m) } : undefined);

describe('the model a resumed invocation runs with', () => {
  test('an OpenAI-compatible pin is rebuilt at the remembered endpoint and matches the pin', () => {
    const p = pin('openai-compatible:llama3.1', { model: 'llama3.1', temperature: 0.2 });
    const model = modelForPin('inv-1', p, none, { domain: { builtin: 'travel' }, modelUrl: 'http://127.0.0.1:11434/v1' });
    expect(model?.id).toBe('openai-compatible:llama3.1');
    expect(compareModel(p.model, offered(model))).toEqual([]);
  });

  test('an older pin that recorded baseUrl still matches at another endpoint', () => {
    const p = pin('openai-compatible:m', { baseUrl: 'http://old.example/v1', model: 'm', temperature: 0 });
    expect(compareModel(p.model, offered(modelForPin('inv-1', p, { url: 'http://new.example/v1', name: undefined }, undefined)))).toEqual([]);
  });

  test('without an endpoint the command names the flag to pass', () => {
    expect(() => modelForPin('inv-1', pin('openai-compatible:m', { model: 'm', temperature: 0 }), none, undefined)).toThrow(UsageError);
    expect(() => modelForPin('inv-1', pin('openai-compatible:m'), none, undefined)).toThrow(/pass --model-url URL/);
  });

  test('a scripted pin uses the domain\'s model; flags naming another model reach the pin check, which refuses them', () => {
    const p = pin('scripted:travel-demo');
    expect(modelForPin('inv-1', p, none, undefined)).toBeUndefined();
    const other = modelForPin('inv-1', p, { url: 'http://127.0.0.1:9/v1', name: 'someone-else' }, undefined);
    expect(compareModel(p.model, offered(other))).toEqual([expect.objectContaining({ field: 'model.id', offered: 'openai-compatible:someone-else' })]);
    const renamed = modelForPin('inv-1', pin('openai-compatible:a', { model: 'a', temperature: 0 }), { url: 'http://x/v1', name: 'b' }, undefined);
    expect(compareModel(pin('openai-compatible:a', { model: 'a', temperature: 0 }).model, offered(renamed)).map((m) => m.field)).toEqual(['model.id']);
  });
});
