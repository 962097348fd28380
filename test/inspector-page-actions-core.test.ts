/**
 * The pure parts of the page's actions, without a browser: what a request body may hold and how
 * "who asked" is recorded (inspector/page-actions.ts parseActionRequest), what `/api/actions` offers
 * a read-only viewer (actionsOffered), the lineage tree built from listing rows
 * (inspector/lineage-tree.ts), and the inbox request that serve carries out (runtime/serve.ts
 * servable, why `resume`). The end-to-end flows are in inspect-page-actions.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { actionsOffered, parseActionRequest, type PageActions } from '../inspector/page-actions.js';
import { lineageTree } from '../inspector/lineage-tree.js';
import { isInboxMessage } from '../journal/store.js';
import { servable } from '../runtime/serve.js';

const ME = 'inspect:host:42';

describe('a request from the page', () => {
  test('who asked is the name typed with the viewer, or the viewer alone; bad bodies say what to fix', () => {
    expect(parseActionRequest('cancel', { by: ' ops lead ', reason: 'wrong city' }, ME)).toEqual({ by: `ops lead (${ME})`, reason: 'wrong city' });
    expect(parseActionRequest('resume', {}, ME)).toEqual({ by: ME, reason: '' });
    expect(parseActionRequest('fork', { atEpoch: 2 }, ME)).toEqual({ by: ME, reason: '', atEpoch: 2 });
    expect(parseActionRequest('fork', { atEpoch: 0 }, ME)).toMatchObject({ error: expect.stringContaining('atEpoch') });
    expect(parseActionRequest('cancel', { atEpoch: 1 }, ME)).toMatchObject({ error: expect.stringContaining('unknown field "atEpoch"') });
    expect(parseActionRequest('cancel', { by: 3 }, ME)).toMatchObject({ error: expect.stringContaining('by must be text') });
    expect(parseActionRequest('cancel', [], ME)).toMatchObject({ error: expect.stringContaining('JSON object') });
    expect(parseActionRequest('cancel', { by: 'x'.repeat(201) }, ME)).toMatchObject({ error: expect.stringContaining('at most 200') });
  });

  test('a read-only viewer offers none of them, naming the flag', () => {
    const actions: PageActions = { readOnly: true, identity: ME, available: { cancel: { ok: true }, resume: { ok: true }, fork: { ok: true } }, act: () => Promise.reject(new Error('never')) };
    const offered = actionsOffered(actions);
    expect(offered.readOnly).toBe(true);
    for (const action of ['cancel', 'resume', 'fork'] as const) expect(offered[action]).toEqual({ enabled: false, reason: expect.stringContaining('--read-only') });
    expect(actionsOffered({ ...actions, readOnly: false }).fork).toEqual({ enabled: true, reason: null });
  });
});

describe('the lineage tree', () => {
  const row = (id: string, parent?: string, atEpoch = 1) => ({ id, status: 'completed' as const, ...(parent ? { forkOf: { parent, atEpoch } } : {}) });

  test('from the oldest ancestor shown, every fork below it, ordered by epoch then id', () => {
    const rows = [row('inv-a'), row('inv-c', 'inv-a', 2), row('inv-b', 'inv-a', 1), row('inv-d', 'inv-b'), row('inv-x')];
    const tree = lineageTree(rows, 'inv-d')!;
    expect(tree.id).toBe('inv-a');
    expect(tree.children.map((c) => [c.id, c.atEpoch])).toEqual([['inv-b', 1], ['inv-c', 2]]);
    expect(tree.children[0]!.children.map((c) => c.id)).toEqual(['inv-d']);
    expect(lineageTree(rows, 'inv-x')).toBeNull(); // no fork, no parent: no tree
    expect(lineageTree(rows, 'inv-nobody')).toBeNull();
  });

  test('a parent the scope does not show is not drawn, and a cycle is cut', () => {
    expect(lineageTree([row('inv-b', 'inv-hidden')], 'inv-b')).toBeNull();
    const tree = lineageTree([row('inv-a', 'inv-b'), row('inv-b', 'inv-a')], 'inv-a')!;
    expect(tree.id).toBe('inv-b');
    expect(tree.children.map((c) => c.id)).toEqual(['inv-a']);
    expect(tree.children[0]!.children).toEqual([]);
  });
});

describe('a resume request', () => {
  test('is an inbox message; serve takes up a hibernated or suspended invocation that has one, and no other', () => {
    expect(isInboxMessage({ type: 'resume', by: ME, reason: '', at: 1 })).toBe(true);
    expect(isInboxMessage({ type: 'resume', by: '', reason: '', at: 1 })).toBe(false);
    const base = { id: 'inv-a', tenant: 't', intent: 'i', records: 9 };
    expect(servable({ ...base, status: 'hibernated', resumeRequested: true })).toBe('resume');
    expect(servable({ ...base, status: 'suspended', suspendedAs: 'credentials', resumeRequested: true })).toBe('resume');
    expect(servable({ ...base, status: 'hibernated' })).toBeUndefined();
    expect(servable({ ...base, status: 'hibernated', cancelRequested: true, resumeRequested: true })).toBe('cancel');
  });
});
