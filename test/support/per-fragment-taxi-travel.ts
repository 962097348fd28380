/**
 * A travel library where booking a taxi again is lawful: today's travel library, but
 * `book_transfer` counts its `taxi.book` per fragment (at most one booking in each fragment, no
 * `per: 'run'`), its bindings kept. Tests of the run-wide *allowance* (the pack's
 * `authored-effects … per: 'run'`, flag 11) run on it, so that what they prove — a model that names
 * `book_transfer` again each epoch gets at most 80 EUR without a person this run — is the
 * allowance's doing, not the library's run-wide count, which on stock travel refuses the second
 * booking before the pack is asked (test/authored-allowance-run.test.ts shows how the two compose).
 *
 * A library of its own: its digest differs from stock travel's, so a run pins it and its journal
 * says which library let the rides through. Pass it to `createRuntime({ domain: travelDomain,
 * libraries: [travelLibraryTaxiPerFragment] })`.
 */
import type { Library } from '../../htn/library/schema.js';
import { travelLibrary } from '../../examples/travel/library.js';

export const travelLibraryTaxiPerFragment: Library = {
  ...travelLibrary,
  tasks: travelLibrary.tasks.map((task) =>
    task.name === 'book_transfer' && task.constraints
      ? { ...task, constraints: task.constraints.map((c) => ('count' in c && c.per === 'run' ? { count: c.count, atMost: c.atMost } : c)) }
      : task,
  ),
};
