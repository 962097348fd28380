/**
 * The scripted model answers by matching the request's context, not by position: the right
 * intent/epoch/outcomes get their reply; a request with the wrong context gets none; re-prompts
 * match on the feedback; raw-text replies script malformed output.
 */
import { describe, expect, test } from 'vitest';
import { NoScriptedReplyError, ScriptedModel } from '../actors/model/scripted.js';
import type { ModelRequest } from '../actors/model/model.js';

const intent = 'Take me to Lisbon on the 12th';
const base: ModelRequest = { purpose: 'parse', intent, epoch: 0, outcomes: [], tasks: [] };

const model = () =>
  new ScriptedModel({
    model: 'travel-v1',
    entries: [
      { match: { intent, epoch: 1, outcomes: [{ booked: 'TP123' }] }, reply: { done: true, summary: 'booked' } },
      { match: { intent, epoch: 0 }, reply: { text: 'I think Lisbon?' } },
      { match: { intent, epoch: 0, feedback: 'not valid JSON' }, reply: { goal: { task: 'travel', args: ['lisbon'] } } },
    ],
  });

describe('ScriptedModel', () => {
  test('picks the reply whose match fits, regardless of order in the transcript', async () => {
    const m = model();
    expect((await m.complete({ ...base, epoch: 1, outcomes: [{ booked: 'TP123' }] })).text).toBe('{"done":true,"summary":"booked"}');
    expect((await m.complete(base)).text).toBe('I think Lisbon?');
    expect(m.id).toBe('scripted:travel-v1');
  });

  test('a re-prompt matches on its feedback', async () => {
    const reply = await model().complete({ ...base, feedback: 'reply is not valid JSON: Unexpected token' });
    expect(JSON.parse(reply.text)).toEqual({ goal: { task: 'travel', args: ['lisbon'] } });
  });

  test('a request carrying the wrong context gets no reply', async () => {
    const m = model();
    await expect(m.complete({ ...base, epoch: 1, outcomes: [{ booked: 'OTHER' }] })).rejects.toThrow(NoScriptedReplyError);
    await expect(m.complete({ ...base, intent: 'Take me to Porto' })).rejects.toThrow(/no reply for this request/);
    expect(m.requests).toHaveLength(0);
  });

  test('a malformed transcript is refused when loaded', () => {
    expect(() => new ScriptedModel({ model: 'x', entries: [{ reply: {} }] })).toThrow();
  });
});
