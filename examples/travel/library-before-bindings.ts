/**
 * The travel method library as it was before issue 30 — the version journals pinned until
 * `book_transfer` bound its effects to the goal and counted its booking per run. The travel domain
 * keeps it (after today's library, which new runs pin) so that a journal pinned to it replays and
 * resumes — a hibernated run, an approval waiting since then — with the domain alone, no blob
 * filed in the store: the way the domain keeps the travel@4 pack in `policies`.
 *
 * Invariant: its digest is 7e848cef61d5a62ecfd371d9ae236a170e1f93a6b87e3774f002302d777876da,
 * forever (test/travel-library-versions.test.ts). It is derived from today's library: the same
 * data, but `book_transfer` without its `bind` constraints and with its count of `taxi.book` per
 * fragment (no `per`). A later change to today's library that is not a change of `book_transfer`'s
 * bindings or run-wide count changes this one too, and that test fails: freeze this version as a
 * committed JSON blob then (the library is plain data; test/fixtures/runtime/travel-v5/blobs holds
 * it byte for byte).
 */
import type { Library, TaskConstraint } from '../../htn/library/schema.js';
import { freezeValidLibrary, validateLibrary } from '../../htn/library/validate.js';
import { travelLibrary } from './library.js';

/** The digest journals pinned from the taxi task (travel-v3) until issue 30. */
export const TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST = '7e848cef61d5a62ecfd371d9ae236a170e1f93a6b87e3774f002302d777876da';

/** A constraint of `book_transfer` as it was then: no binding, every count per fragment. */
function beforeBindings(constraints: readonly TaskConstraint[]): TaskConstraint[] {
  return constraints.filter((c) => !('bind' in c)).map((c) => ('count' in c ? { count: c.count, atMost: c.atMost } : c));
}

/** Validated and frozen once, here (as a builder's library is): the domain and every runtime then take it as valid. */
export const travelLibraryBeforeBindings: Library = freezeValidLibrary(
  validateLibrary({
    ...travelLibrary,
    tasks: travelLibrary.tasks.map((task) => (task.name === 'book_transfer' && task.constraints ? { ...task, constraints: beforeBindings(task.constraints) } : task)),
  }),
);
