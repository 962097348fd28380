// Types for refunds-library.mjs (plain JS so that a domain file a `weft` process loads can use it).
import type { LibraryBuilder, atom, add, not } from '../../htn/library/builder.js';
import type { Library } from '../../htn/library/schema.js';

export function refundsLibrary(htn: { LibraryBuilder: typeof LibraryBuilder; atom: typeof atom; not: typeof not; add: typeof add }, name: string): Library;
