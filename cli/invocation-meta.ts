/**
 * What the CLI remembers about an invocation it started: `<dir>/meta/<id>.json` in a workspace —
 * the domain module and the model endpoint. A convenience for `resume`/`approve`/`replay`, never
 * part of the hashed pin: the pin decides what must match, the metadata only where to find it (an
 * endpoint is not pinned; a module path is this host's own). Unlike the store's metadata
 * (journal/store.ts), another host does not see it.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertInvocationId } from '../stores/checks.js';
import type { DomainRef } from './domain-loader.js';

/** What the CLI remembers about an invocation it started (workspace metadata, unhashed). */
export interface InvocationMeta {
  domain: DomainRef;
  /** The OpenAI-compatible endpoint the invocation started with, if any (endpoints are not pinned). */
  modelUrl?: string;
}

/** The id is checked like the store checks it, so it can never name a path outside `meta/`. */
function metaFile(dir: string, id: string): string {
  assertInvocationId(id);
  return path.join(dir, 'meta', `${id}.json`);
}

export function writeInvocationMeta(dir: string, id: string, meta: InvocationMeta): void {
  const file = metaFile(dir, id);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(meta) + '\n');
  renameSync(`${file}.tmp`, file);
}

export function readInvocationMeta(dir: string, id: string): InvocationMeta | undefined {
  const file = metaFile(dir, id);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as InvocationMeta;
  } catch {
    return undefined;
  }
}
