/**
 * Which of a payload's lineage ids — a fork's parent, the fork that superseded a run
 * (journal/lineage.ts; a list row's `forkOf`/`supersededBy`, a description's `lineage`) — the
 * requester may open, sent beside them as `lineageLinks`. The page links an id only when it is
 * listed there, and otherwise shows it as text: a tenant's token is never shown a link to another
 * tenant's invocation. A fork keeps its parent's tenant, so the two agree by construction; this is
 * the guard for when they would not.
 *
 * Each id is asked `visibleInvocation` (access.ts), the same question the gate asks of a path about
 * one invocation — so a link offered here is one the gate lets through. An id a journal names is
 * untrusted text: one that is not a valid invocation id is never linked.
 */
import { isValidInvocationId, type JournalStore } from '../journal/store.js';
import { visibleInvocation, type Scope } from './access.js';

/** Whether the requester may open invocation `id`. */
export type Openable = (id: string) => Promise<boolean>;

/** `visibleInvocation` for one request's scope, each id asked once (a page of rows may name one id twice). */
export function openableFor(store: JournalStore, scope: Scope): Openable {
  const asked = new Map<string, Promise<boolean>>();
  return (id) => {
    let answer = asked.get(id);
    if (answer === undefined) {
      answer = isValidInvocationId(id) ? visibleInvocation(store, scope, id) : Promise.resolve(false);
      asked.set(id, answer);
    }
    return answer;
  };
}

interface LineageCarrier {
  forkOf?: { parent?: unknown } | null;
  supersededBy?: unknown;
  lineage?: { forkOf?: { parent?: unknown } | null; supersededBy?: unknown } | null;
}

/** The ids a row or a description names as its lineage (strings only, each once). */
export function lineageIds(value: LineageCarrier): string[] {
  const ids = [value.forkOf?.parent, value.supersededBy, value.lineage?.forkOf?.parent, value.lineage?.supersededBy];
  return [...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''))];
}

/** `value` with `lineageLinks`: the lineage ids it names that the requester may open (absent when it names none). */
export async function withLineageLinks<T extends object>(value: T, openable: Openable): Promise<T & { lineageLinks?: string[] }> {
  const ids = lineageIds(value as LineageCarrier);
  if (ids.length === 0) return value;
  const open = await Promise.all(ids.map(openable));
  return { ...value, lineageLinks: ids.filter((_, i) => open[i]) };
}

/** Each row with its `lineageLinks` (rows that name no lineage are passed as they are). */
export function rowsWithLineageLinks<T extends object>(rows: readonly T[], openable: Openable): Promise<Array<T & { lineageLinks?: string[] }>> {
  return Promise.all(rows.map((row) => withLineageLinks(row, openable)));
}
