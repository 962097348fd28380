/**
 * The mining report: one entry per candidate — accepted, or why not — in a fixed order (by
 * candidate name, then by first source), and its text form for the terminal. Pure data.
 *
 * Verdicts:
 * - `accepted`: the method is in the new library version;
 * - `already-in-library`: the library already has this method (an earlier round mined it);
 * - `does-not-generalise`: the fragment uses a constant from nowhere, or no precondition binds one;
 * - `fails-rederivation`: on a recorded state it came from, the new version does not re-derive the fragment exactly;
 * - `breaks-constraints`: the plan it derives on a recorded state breaks a constraint of its task
 *   (a binding above all: a method mined from a fragment that drifted from its goal books that drift again);
 * - `conflicts`: it changes a decomposition the library already produced on a recorded epoch;
 * - `failed-or-compensated`: an epoch it came from did not complete, or was compensated;
 * - `below-min-support`: seen in fewer epochs than `--min-support` asks for.
 */
import type { Method } from '../htn/library/schema.js';

export type Verdict = 'accepted' | 'already-in-library' | 'does-not-generalise' | 'fails-rederivation' | 'breaks-constraints' | 'conflicts' | 'failed-or-compensated' | 'below-min-support';

export interface SourceRef {
  invocation: string;
  epoch: number;
}

export interface CandidateReport {
  /** The mined method's name, or `<invocation>#<epoch>` when the fragment did not generalise. */
  candidate: string;
  task: string;
  verdict: Verdict;
  /** Why not (absent when accepted). */
  reason?: string;
  /** The gap-path epochs it came from (sorted). */
  sources: SourceRef[];
  /** The method (absent when the fragment did not generalise). */
  method?: Method;
}

export interface MiningReport {
  /** The library mined from, and the new version (equal when nothing was accepted). */
  base: string;
  library: string;
  accepted: number;
  candidates: CandidateReport[];
  /** Gap-path epochs read, and derived epochs checked for conflicts. */
  gapEpochs: number;
  checkedEpochs: number;
}

const sources = (c: CandidateReport) => c.sources.map((s) => `${s.invocation}#${s.epoch}`).join(', ');

/** The report as lines for a person. */
export function renderReport(r: MiningReport): string[] {
  const lines = [`mined ${r.gapEpochs} gap-path epoch(s) into ${r.candidates.length} candidate(s); checked ${r.checkedEpochs} recorded decomposition(s) for conflicts`];
  for (const c of r.candidates) {
    const what = c.verdict === 'accepted' ? 'accepted' : `not added: ${c.verdict.replace(/-/g, ' ')}`;
    lines.push(`  ${c.candidate} (${c.task}) ${what}${c.reason ? ` — ${c.reason}` : ''}`);
    lines.push(`    from ${sources(c)}`);
  }
  lines.push(r.accepted > 0 ? `new library version ${r.library} (${r.accepted} method(s) added to ${r.base})` : `no method accepted: the library stays ${r.base}`);
  return lines;
}
