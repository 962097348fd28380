/**
 * Judging model replies against the pinned library — pure, so replay re-derives the same verdict
 * from the recorded text. Model output is data: parsed, schema-checked, matched to the library.
 */
import { describe, expect, test } from 'vitest';
import { judgeAuthorReply, judgeParseReply } from '../machines/reply.js';
import { notifyLibrary } from './support/notify-app.js';

const judge = (reply: unknown) => judgeParseReply(typeof reply === 'string' ? reply : JSON.stringify(reply), notifyLibrary);

describe('parse replies', () => {
  test('a goal naming a known task with the right args is accepted', () => {
    expect(judge({ goal: { task: 'notify', args: ['alice'] } })).toEqual({ kind: 'goal', goal: { task: 'notify', args: ['alice'] } });
    expect(judge({ done: true, summary: 'all done' })).toEqual({ kind: 'done', summary: 'all done' });
  });

  test.each([
    ['prose', 'I will notify Alice now.', /not valid JSON/],
    ['an unknown task', { goal: { task: 'teleport', args: ['alice'] } }, /unknown task "teleport"; the library knows: charge, charge_and_notify, notify, reach, send/],
    ['too few args', { goal: { task: 'notify', args: [] } }, /task notify takes 1 argument\(s\) \(\?p: person\), the reply gave 0/],
    ['a number for an object', { goal: { task: 'notify', args: [42] } }, /argument 1 \(\?p\) must be the name of a person, got 42/],
    ['a variable for an object', { goal: { task: 'notify', args: ['?p'] } }, /must be ground, got the variable \?p/],
    ['an extra field', { goal: { task: 'notify', args: ['alice'] }, plan: ['send'] }, /does not match/],
    ['done without a summary', { done: true }, /does not match/],
    ['code', '(() => process.exit(1))()', /not valid JSON/],
  ])('%s is rejected with a reason the model can act on', (_what, reply, reason) => {
    const verdict = judge(reply);
    expect(verdict.kind).toBe('rejected');
    expect((verdict as { reason: string }).reason).toMatch(reason);
  });
});

describe('author replies (the gap path)', () => {
  test('a fragment of known operators with the right args is accepted', () => {
    expect(judgeAuthorReply(JSON.stringify({ steps: [{ operator: 'send', args: ['bob'] }] }), notifyLibrary)).toEqual({ kind: 'fragment', steps: [{ task: 'send', args: ['bob'] }] });
  });

  test('an unknown operator or an empty fragment is rejected', () => {
    expect(judgeAuthorReply(JSON.stringify({ steps: [{ operator: 'fly', args: [] }] }), notifyLibrary)).toMatchObject({ kind: 'rejected', reason: expect.stringMatching(/unknown operator "fly"/) });
    expect(judgeAuthorReply(JSON.stringify({ steps: [] }), notifyLibrary)).toMatchObject({ kind: 'rejected' });
    expect(judgeAuthorReply(JSON.stringify({ steps: [{ operator: 'notify', args: ['bob'] }] }), notifyLibrary)).toMatchObject({ kind: 'rejected', reason: expect.stringMatching(/unknown operator "notify"/) });
  });
});
