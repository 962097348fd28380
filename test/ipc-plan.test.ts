// The IPC 2020 plan format: formatting, parsing (planner chatter, optional <==, __top), and
// parse errors that name the line.
import { describe, expect, test } from 'vitest';
import { formatIpcPlan, IpcPlanParseError, parseIpcPlan, type IpcPlan } from '../htn/ipc-plan.js';

const strip = (p: IpcPlan): IpcPlan => ({
  actions: p.actions.map(({ id, name, args }) => ({ id, name, args })),
  root: p.root,
  decompositions: p.decompositions.map(({ id, task, args, method, children }) => ({ id, task, args, method, children })),
});

const sample: IpcPlan = {
  actions: [
    { id: 0, name: 'drive', args: ['truck-0', 'city-loc-1', 'city-loc-2'] },
    { id: 1, name: 'noop', args: [] },
  ],
  root: [2, 3],
  decompositions: [
    { id: 2, task: 'get-to', args: ['truck-0', 'city-loc-2'], method: 'm-drive-to', children: [0] },
    { id: 3, task: 'task1', args: [], method: 'donothing', children: [1] },
    { id: 4, task: 'task2', args: ['x'], method: 'empty', children: [] },
  ],
};

describe('formatIpcPlan', () => {
  test('writes the IPC layout', () => {
    expect(formatIpcPlan(sample)).toBe(
      [
        '==>',
        '0 drive truck-0 city-loc-1 city-loc-2',
        '1 noop',
        'root 2 3',
        '2 get-to truck-0 city-loc-2 -> m-drive-to 0',
        '3 task1 -> donothing 1',
        '4 task2 x -> empty',
        '<==',
        '',
      ].join('\n'),
    );
  });

  test('round-trips through parseIpcPlan', () => {
    expect(strip(parseIpcPlan(formatIpcPlan(sample)))).toEqual(sample);
  });

  test('an empty plan', () => {
    const empty: IpcPlan = { actions: [], root: [], decompositions: [] };
    expect(formatIpcPlan(empty)).toBe('==>\nroot\n<==\n');
    expect(strip(parseIpcPlan(formatIpcPlan(empty)))).toEqual(empty);
  });
});

describe('parseIpcPlan', () => {
  test('ignores chatter before ==> and after <==, blank lines, extra whitespace, CRLF', () => {
    const text = 'found a plan!\r\nsteps: 1\r\n==>\r\n\r\n 5   noop  a\t\r\nroot   7 \r\n7 task1 a  ->  m  5\r\n<==\r\ntime 0.1s\r\n';
    const p = parseIpcPlan(text);
    expect(strip(p)).toEqual({
      actions: [{ id: 5, name: 'noop', args: ['a'] }],
      root: [7],
      decompositions: [{ id: 7, task: 'task1', args: ['a'], method: 'm', children: [5] }],
    });
    expect(p.actions[0]!.line).toBe(5);
    expect(p.rootLine).toBe(6);
    expect(p.decompositions[0]!.line).toBe(7);
  });

  test('the closing <== is optional', () => {
    expect(strip(parseIpcPlan('==>\n0 a\nroot 1\n1 t -> m 0\n')).decompositions).toHaveLength(1);
  });

  test('keeps the artificial __top root as an ordinary line', () => {
    const p = parseIpcPlan('==>\n0 a\nroot 2\n1 t -> m 0\n2 __top -> __top_method 1\n');
    expect(p.root).toEqual([2]);
    expect(p.decompositions[1]).toMatchObject({ task: '__top', method: '__top_method', children: [1] });
  });

  const bad: [string, string, number, RegExp][] = [
    ['no start marker', '0 a\nroot 0\n', 1, /no "==>"/],
    ['text after ==>', 'x\n==> 0 a\nroot\n', 2, /after "==>"/],
    ['non-numeric id', '==>\nx a\nroot\n', 2, /action id "x"/],
    ['negative id', '==>\n-1 a\nroot\n', 2, /action id "-1"/],
    ['action without name', '==>\n0\nroot\n', 2, /no name/],
    ['decomposition before root', '==>\n0 a\n1 t -> m 0\nroot 1\n', 3, /before the "root" line/],
    ['missing root', '==>\n0 a\n1 b\n<==\n', 4, /no "root" line/],
    ['bad root id', '==>\nroot 1 x\n', 2, /root id "x"/],
    ['missing arrow', '==>\nroot 1\n1 t m 0\n', 3, /no "->"/],
    ['missing method', '==>\nroot 1\n1 t ->\n', 3, /no method name/],
    ['missing task name', '==>\nroot 1\n1 -> m\n', 3, /no name before/],
    ['bad child id', '==>\n0 a\nroot 1\n1 t -> m 0 z\n', 4, /child id "z"/],
    ['duplicate id', '==>\n0 a\nroot 0\n0 t -> m\n', 4, /id 0 already used on line 2/],
    ['second root line', '==>\nroot 1\nroot 2\n', 3, /second "root" line/],
  ];
  test.each(bad)('rejects %s with its line number', (_name, text, line, re) => {
    let err: unknown;
    try {
      parseIpcPlan(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(IpcPlanParseError);
    expect((err as IpcPlanParseError).line).toBe(line);
    expect((err as Error).message).toMatch(new RegExp(`^plan line ${line}: `));
    expect((err as Error).message).toMatch(re);
  });
});
