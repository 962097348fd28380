// The HDDL front end on hand-written input: the AST shape (names as written, ordering
// normalised, constraints kept, positions), and errors that point at file:line:col.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { HddlParseError, parseDomain, parseHddl, parseProblem, readSexprs, type Formula } from '../htn/hddl/index.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/hddl/${name}`, import.meta.url), 'utf8');

describe('domain AST (courier fixture)', () => {
  const d = parseDomain(fixture('courier-domain.hddl'), 'courier-domain.hddl');

  test('header, requirements, types, constants, predicates', () => {
    expect(d.kind).toBe('domain');
    expect(d.name).toBe('courier');
    expect(d.file).toBe('courier-domain.hddl');
    expect(d.requirements).toContain(':negative-preconditions');
    expect(d.types.map((t) => [t.name, t.supertype])).toEqual([
      ['place', 'object'],
      ['parcel', 'object'],
      ['vehicle', 'object'],
      ['truck', 'vehicle'],
    ]);
    expect(d.constants).toEqual([{ name: 'depot', type: 'place', pos: { line: 12, column: 15 } }]);
    const road = d.predicates.find((p) => p.name === 'road')!;
    expect(road.params.map((p) => `${p.name}:${p.type}`)).toEqual(['?a:place', '?b:place']);
  });

  test('tasks and methods in declaration order', () => {
    expect(d.tasks.map((t) => t.name)).toEqual(['deliver', 'goto', 'wash-all']);
    expect(d.methods.map((m) => m.name)).toEqual(['m-deliver', 'm-goto-here', 'm-goto-drive', 'm-wash']);
  });

  test(':subtasks + :ordering is normalised into one total order, ids kept', () => {
    const m = d.methods[0]!;
    expect(m.task.name).toBe('deliver');
    expect(m.task.args.map((a) => a.name)).toEqual(['?x', '?to']);
    expect(m.subtasks.map((s) => `${s.id}:${s.name}`)).toEqual(['t1:goto', 't2:load', 't3:goto', 't4:unload']);
    expect(m.subtasks[1]!.args.map((a) => `${a.kind}:${a.name}`)).toEqual(['variable:?v', 'variable:?from', 'variable:?x']);
  });

  test('empty (and), a bare single task, constants in subtasks, :constraints kept', () => {
    expect(d.methods[1]!.subtasks).toEqual([]);
    const drive = d.methods[2]!;
    expect(drive.subtasks.map((s) => s.name)).toEqual(['drive']);
    expect(drive.constraints).toMatchObject({ kind: 'not', arg: { kind: 'equals', left: { name: '?from' }, right: { name: '?to' } } });
    const wash = d.methods[3]!;
    expect(wash.subtasks[0]!.args.map((a) => `${a.kind}:${a.name}`)).toEqual(['variable:?v', 'constant:depot']);
    expect(wash.precondition).toMatchObject({ kind: 'and', args: [{ kind: 'atom' }, { kind: 'forall', params: [{ name: '?x', type: 'parcel' }] }] });
  });

  test('actions: preconditions with or/exists, effects with delete/forall/when', () => {
    const drive = d.actions.find((a) => a.name === 'drive')!;
    expect(drive.effect).toMatchObject({
      kind: 'and',
      effects: [{ kind: 'delete', atom: { predicate: 'at' } }, { kind: 'add', atom: { predicate: 'at' } }, { kind: 'add' }],
    });
    const wash = d.actions.find((a) => a.name === 'wash')!;
    expect(wash.precondition).toMatchObject({ kind: 'or', args: [{ kind: 'atom' }, { kind: 'exists' }] });
    expect(wash.effect).toMatchObject({ kind: 'forall', effect: { kind: 'when', condition: { kind: 'atom' }, effect: { kind: 'add' } } });
  });

  test('every node carries a 1-based source position', () => {
    const m = d.methods[0]!;
    expect(m.pos).toEqual({ line: 26, column: 3 });
    expect(m.params[0]!.pos).toEqual({ line: 27, column: 18 });
    expect(m.subtasks[0]!.pos.line).toBe(32); // t1, written second
  });

  test('the AST is plain JSON data', () => {
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
  });
});

describe('problem AST (courier fixture)', () => {
  const p = parseProblem(fixture('courier-problem.hddl'), 'courier-problem.hddl');
  test('objects, init, htn, goal', () => {
    expect(p.name).toBe('courier-1');
    expect(p.domain).toBe('courier');
    expect(p.objects.map((o) => `${o.name}:${o.type}`)).toEqual(['t1:truck', 't2:truck', 'a:place', 'b:place', 'p1:parcel', 'p2:parcel']);
    expect(p.init).toHaveLength(10);
    expect(p.init[0]).toMatchObject({ predicate: 'at', args: [{ name: 't1' }, { name: 'depot' }] });
    expect(p.htn!.subtasks.map((s) => `${s.id}:${s.name}`)).toEqual(['task0:deliver', 'task1:deliver', 'task2:wash-all']);
    expect(p.htn!.params).toEqual([]);
    expect(p.goal).toMatchObject({ kind: 'and' });
  });
});

describe('syntax variants', () => {
  test('case: keywords fold, names are kept exactly as written', () => {
    const d = parseDomain(
      '(DEFINE (DOMAIN Shout) (:REQUIREMENTS :TYPING) (:Types Ring - OBJ) (:TASK Move :Parameters (?R - Ring))' +
        '( :METHOD M-Move :PARAMETERS (?R - Ring) :TASK (Move ?R) :Ordered-Tasks (AND (Act ?R)))' +
        '(:Action Act :Parameters (?R - Ring) :Precondition (AND (NOT (Busy ?R)) (FORALL (?X - Ring) (= ?X ?X)))))',
      'shout.hddl',
    );
    expect(d.name).toBe('Shout');
    expect(d.types[0]).toMatchObject({ name: 'Ring', supertype: 'OBJ' });
    expect(d.methods[0]!.name).toBe('M-Move');
    expect(d.methods[0]!.subtasks[0]!.args[0]!.name).toBe('?R');
    expect(d.actions[0]!.precondition).toMatchObject({ kind: 'and', args: [{ kind: 'not' }, { kind: 'forall' }] });
  });

  test('untyped parameters get type object; (sortof ?x - T) constraints; :tasks + single ordering', () => {
    const d = parseDomain(
      `(define (domain d)
        (:predicates (p ?x ?y))
        (:task t :parameters (?a))
        (:method m :parameters (?a ?b) :task (t ?a)
          :tasks (and (x (a1 ?a)) (y (a1 ?b))) :ordering (< y x)
          :constraints (and (sortof ?b - thing) (not (= ?a ?b))))
        (:action a1 :parameters (?z) :effect ()))`,
      'd.hddl',
    );
    expect(d.tasks[0]!.params[0]!.type).toBe('object');
    const m = d.methods[0]!;
    expect(m.subtasks.map((s) => s.id)).toEqual(['y', 'x']);
    expect(m.constraints).toMatchObject({ kind: 'and', args: [{ kind: 'sortof', term: { name: '?b' }, type: 'thing' }, { kind: 'not' }] });
    expect(d.actions[0]!.effect).toEqual({ kind: 'and', effects: [], pos: expect.anything() });
    expect(d.actions[0]!.precondition).toBeUndefined();
  });

  test(':htn with parameters and :subtasks + :ordering; problem without :htn', () => {
    const p = parseProblem(
      `(define (problem q) (:domain d) (:objects o1 o2)
        (:htn :parameters (?v - thing) :subtasks (and (a (t ?v)) (b (t o1))) :ordering (and (> a b)))
        (:init (p o1 o2)))`,
      'q.hddl',
    );
    expect(p.htn!.params).toEqual([{ name: '?v', type: 'thing', pos: expect.anything() }]);
    expect(p.htn!.subtasks.map((s) => s.id)).toEqual(['b', 'a']);
    expect(p.objects.map((o) => o.type)).toEqual(['object', 'object']);
    expect(parseProblem('(define (problem r) (:domain d) (:init))', 'r.hddl').htn).toBeUndefined();
  });

  test('parseHddl tells domains from problems', () => {
    expect(parseHddl('(define (domain d))', 'x').kind).toBe('domain');
    expect(parseHddl('(define (problem p) (:domain d))', 'x').kind).toBe('problem');
  });

  test('the reader is iterative: 200k nested lists and 1 MB of facts', () => {
    const depth = 200_000;
    const deep = readSexprs('('.repeat(depth) + ')'.repeat(depth), 'deep');
    expect(deep).toHaveLength(1);
    const facts = Array.from({ length: 50_000 }, (_, i) => `(on b${i} b${i + 1})`).join('\n');
    const p = parseProblem(`(define (problem big) (:domain bw) (:init ${facts}))`, 'big');
    expect(p.init).toHaveLength(50_000);
    expect(p.init[49_999]!.pos).toEqual({ line: 50_000, column: 1 });
  });
});

describe('errors name file:line:col', () => {
  const cases: [string, string, number, number, RegExp][] = [
    ['unclosed list', '(define (domain d)\n  (:task t :parameters ()\n', 2, 3, /unclosed "\("/],
    ['stray close', '(define (domain d))\n)', 2, 1, /unexpected "\)"/],
    ['symbol outside list', 'define', 1, 1, /outside any list/],
    ['empty file', '; nothing here\n', 1, 1, /empty file/],
    ['not define', '(domain d)', 1, 1, /expected \(define/],
    ['unknown section', '(define (domain d)\n\n   (:axiom x))', 3, 4, /unknown domain section ":axiom"/],
    ['method without task', '(define (domain d)\n (:method m :parameters ()))', 2, 2, /method "m" has no :task/],
    ['unknown method key', '(define (domain d)\n (:method m\n   :task (t) :effect ()))', 3, 14, /unexpected ":effect"/],
    ['parameter without ?', '(define (domain d) (:task t :parameters (x - y)))', 1, 42, /expected a variable/],
    ['type missing after -', '(define (domain d) (:types a -))', 1, 30, /expected a type after "-"/],
    ['either', '(define (domain d) (:types a - (either b c)))', 1, 32, /either/],
    ['not with two args', '(define (domain d)\n(:action a :precondition (not (p) (q))))', 2, 26, /"not" takes 1/],
    ['non-atom delete', '(define (domain d)\n(:action a :effect (not (and (p)))))', 2, 25, /only atoms can be deleted/],
    ['or in effect', '(define (domain d)\n(:action a :effect (or (p) (q))))', 2, 20, /not allowed in an effect/],
    [
      'partial ordering',
      '(define (domain d)\n(:method m :task (t)\n :subtasks (and (x (a)) (y (b)) (z (c))) :ordering (< x y)))',
      2,
      1,
      /ordering is not total/,
    ],
    ['ordering cycle', '(define (domain d)\n(:method m :task (t) :subtasks (and (x (a)) (y (b))) :ordering (and (< x y) (< y x))))', 2, 1, /cycle/],
    ['unknown ordering id', '(define (domain d)\n(:method m :task (t) :subtasks (and (x (a))) :ordering (< x w)))', 2, 61, /unknown subtask id "w"/],
    ['variable in init', '(define (problem p) (:domain d)\n (:init (p ?x)))', 2, 12, /variable "\?x" in an initial fact/],
    ['problem without domain', '(define (problem p) (:init))', 1, 1, /no \(:domain NAME\)/],
  ];
  test.each(cases)('%s', (_name, text, line, column, re) => {
    let err: unknown;
    try {
      parseHddl(text, 'bad.hddl');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HddlParseError);
    const e = err as HddlParseError;
    expect(e.message).toMatch(re);
    expect([e.file, e.line, e.column]).toEqual(['bad.hddl', line, column]);
    expect(e.message.startsWith(`bad.hddl:${line}:${column}: `)).toBe(true);
  });

  test('parseDomain rejects a problem and vice versa', () => {
    expect(() => parseDomain('(define (problem p) (:domain d))', 'p.hddl')).toThrow(/expected a domain/);
    expect(() => parseProblem('(define (domain d))', 'd.hddl')).toThrow(/expected a problem/);
  });
});

// Keep the Formula type import exercised for the type checker.
export type _F = Formula;
