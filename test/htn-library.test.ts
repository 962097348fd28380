/**
 * Method libraries as data: the builder produces the same JSON (and digest) as hand-written data,
 * validation lists every broken reference, the digest pins evaluable versions, and the registry
 * keeps every version by digest (fail closed on an unknown one).
 */
import { describe, expect, test } from 'vitest';
import {
  LibraryBuilder,
  LibraryRegistry,
  LibraryValidationError,
  UnknownLibraryError,
  atom,
  libraryDigest,
  validateLibrary,
  type Library,
} from '../htn/index.js';
import { digestOf } from '../journal/digest.js';
import { travelLibrary } from './fixtures/htn/travel.js';

const handWritten: Library = {
  format: 'weft.htn-library/1',
  name: 'lamp',
  types: [{ name: 'lamp' }],
  constants: [],
  predicates: [{ name: 'on', params: [{ name: '?l', type: 'lamp' }] }],
  evaluables: [],
  tasks: [{ name: 'light', params: [{ name: '?l', type: 'lamp' }] }],
  operators: [
    {
      name: 'switch-on',
      params: [{ name: '?l', type: 'lamp' }],
      precondition: { op: 'not', arg: { op: 'atom', pred: 'on', args: ['?l'] } },
      effect: { op: 'and', effects: [{ op: 'add', pred: 'on', args: ['?l'] }] },
      actuator: { actuator: 'lamp.switch', args: { lamp: '?l', state: 'on' } },
      readOnly: false,
    },
  ],
  methods: [
    { name: 'already-on', task: { task: 'light', args: ['?l'] }, params: [{ name: '?l', type: 'lamp' }], precondition: { op: 'atom', pred: 'on', args: ['?l'] }, subtasks: [] },
    { name: 'switch', task: { task: 'light', args: ['?l'] }, params: [{ name: '?l', type: 'lamp' }], precondition: { op: 'true' }, subtasks: [{ task: 'switch-on', args: ['?l'] }] },
  ],
};

const built = (): Library =>
  new LibraryBuilder('lamp')
    .type('lamp')
    .predicate('on', { '?l': 'lamp' })
    .task('light', { '?l': 'lamp' })
    .operator('switch-on', {
      params: { '?l': 'lamp' },
      precondition: { op: 'not', arg: atom('on', '?l') },
      effect: [{ op: 'add', pred: 'on', args: ['?l'] }],
      actuator: { actuator: 'lamp.switch', args: { lamp: '?l', state: 'on' } },
    })
    .method('already-on', { task: ['light', '?l'], params: { '?l': 'lamp' }, precondition: atom('on', '?l'), subtasks: [] })
    .method('switch', { task: ['light', '?l'], params: { '?l': 'lamp' }, subtasks: [['switch-on', '?l']] })
    .build();

describe('library data', () => {
  test('the builder produces exactly the hand-written JSON, hence the same digest', () => {
    expect(built()).toEqual(handWritten);
    expect(libraryDigest(built())).toBe(libraryDigest(handWritten));
    expect(libraryDigest(handWritten)).toBe(digestOf(handWritten));
    expect(libraryDigest(handWritten)).toMatch(/^[0-9a-f]{64}$/);
  });

  test('the digest survives a JSON round trip and ignores key order', () => {
    const roundTrip = JSON.parse(JSON.stringify(built())) as Library;
    const reordered = Object.fromEntries(Object.entries(roundTrip).reverse()) as Library;
    expect(libraryDigest(reordered)).toBe(libraryDigest(handWritten));
  });

  test('method order is part of the digest (it is the order methods are tried)', () => {
    const swapped = { ...handWritten, methods: [...handWritten.methods].reverse() };
    expect(libraryDigest(swapped)).not.toBe(libraryDigest(handWritten));
  });

  test("an evaluable's version is part of the digest", () => {
    expect(libraryDigest(travelLibrary('1'))).not.toBe(libraryDigest(travelLibrary('2')));
  });

  test('validation lists every broken reference', () => {
    const broken = structuredClone(handWritten) as Library;
    broken.methods[1]!.subtasks.push({ task: 'fly', args: [] });
    broken.operators[0]!.precondition = { op: 'atom', pred: 'lit', args: ['?x'] };
    broken.tasks[0]!.params[0]!.type = 'lantern';
    let error: unknown;
    try {
      validateLibrary(broken);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LibraryValidationError);
    const problems = (error as LibraryValidationError).problems;
    expect(problems).toContain('method switch: unknown task fly');
    expect(problems).toContain('operator switch-on: unknown predicate lit');
    expect(problems).toContain('operator switch-on: variable ?x is not declared');
    expect(problems).toContain('task light: ?l has unknown type lantern');
  });

  test('zod rejects malformed data with the path', () => {
    expect(() => validateLibrary({ ...handWritten, methods: [{ name: 'x' }] })).toThrow(/methods\.0\.task/);
  });
});

describe('library registry', () => {
  test('keeps every version by digest; re-registering is idempotent', () => {
    const registry = new LibraryRegistry();
    const v1 = registry.register(handWritten);
    const v2 = registry.register({ ...handWritten, methods: [...handWritten.methods].reverse() });
    expect(registry.register(built())).toBe(v1);
    expect(registry.get(v1.digest).library).toEqual(handWritten);
    expect(registry.get(v2.digest).library.methods[0]!.name).toBe('switch');
    expect(registry.versions('lamp').map((v) => v.digest)).toEqual([v1.digest, v2.digest]);
    expect(registry.latest('lamp')?.digest).toBe(v2.digest);
  });

  test('a pinned version cannot be changed behind its digest', () => {
    const registry = new LibraryRegistry();
    const mine = structuredClone(handWritten) as Library;
    const v = registry.register(mine);
    mine.methods.reverse();
    expect(registry.get(v.digest).library.methods[0]!.name).toBe('already-on');
    expect(Object.isFrozen(registry.get(v.digest).library)).toBe(true);
  });

  test('an unknown digest fails closed', () => {
    expect(() => new LibraryRegistry().get('0'.repeat(64))).toThrow(UnknownLibraryError);
  });
});
