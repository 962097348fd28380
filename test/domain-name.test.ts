/**
 * A domain's name has one rule (journal/store.ts DOMAIN_NAME): defineDomain refuses what the
 * store's metadata would refuse, so a domain that defines can always start. A name read back from
 * the store is looked up among the workspace's own mappings only: `constructor` is no member of
 * Object.prototype there.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { domainByName, DOMAIN_MAP_FILE } from '../cli/domain-map.js';
import { DomainLoadError } from '../cli/domain-loader.js';
import { travelEvaluables, travelLibrary } from '../examples/travel/library.js';
import { TRAVEL_OBSERVE } from '../examples/travel/app.js';
import { isInvocationMetadata } from '../journal/store.js';
import { defineDomain } from '../runtime/domain.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-domain-name-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const define = (name: string) => defineDomain({ name, libraries: [travelLibrary], evaluables: travelEvaluables(), observe: TRAVEL_OBSERVE, actuators: () => [] });
const storable = (name: string) => isInvocationMetadata({ domain: name, library: 'a'.repeat(64) });

describe('one rule for a domain name', () => {
  test.each([
    ['100 characters', 'd'.repeat(100), true],
    ['101 characters', 'd'.repeat(101), false],
    ['dots, dashes and underscores inside', 'a.b_c-d', true],
    ['a leading dot', '.travel', false],
    ['a slash', 'a/b', false],
  ])('%s: defineDomain and the store agree', (_what, name, ok) => {
    expect(storable(name)).toBe(ok);
    if (ok) expect(define(name).name).toBe(name);
    else expect(() => define(name)).toThrow(/name must be 1–100 letters/);
  });
});

describe('a domain name read from the store', () => {
  test.each(['constructor', 'toString', 'hasOwnProperty', '__proto__'])('%s is not mapped unless domains.json maps it', async (name) => {
    const dir = path.join(root, name.replace(/_/g, 'u'));
    await expect(domainByName(name, 'inv-1', dir)).rejects.toThrow(DomainLoadError);
    await expect(domainByName(name, 'inv-1', dir)).rejects.toThrow(`not mapped in ${path.join(dir, DOMAIN_MAP_FILE)}`);
  });

  test('with a domains.json that maps another name', async () => {
    const dir = mkdtempSync(path.join(root, 'mapped-'));
    writeFileSync(path.join(dir, DOMAIN_MAP_FILE), JSON.stringify({ other: './other.js' }));
    await expect(domainByName('constructor', 'inv-1', dir)).rejects.toThrow(/which is not a built-in and not mapped in/);
  });
});
