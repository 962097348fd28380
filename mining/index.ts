/**
 * Method mining — the public face of mining/: the gap path recedes as methods are learned from
 * recorded runs. Read the gap-path epochs and the derived epochs of journals (sources.ts),
 * generalise each authored fragment into a candidate method (generalise.ts), and accept the
 * candidates that re-derive their fragments and change no recorded decomposition (mine.ts), into
 * a new library version. Pure: the CLI (`weft mine`) reads the journals and writes the file.
 */
export { gapSourcesOf, derivedEpochsOf, fragmentOf, type GapSource, type DerivedEpoch } from './sources.js';
export { mergeJournal, invocationOf, DivergentJournalsError, type SourcedJournal } from './journals.js';
export { generalise, minedMethodName, type Generalised } from './generalise.js';
export { mine, shapeOf, withMethod, type MiningInput, type MiningResult } from './mine.js';
export { renderReport, type CandidateReport, type MiningReport, type SourceRef, type Verdict } from './report.js';
export { planOn, type PlanningOptions } from './planning.js';
