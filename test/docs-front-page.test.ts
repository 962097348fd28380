/**
 * The README is a front page and the manual lives in docs/ (issue 32, "The front rooms"). What a
 * reader relies on, checked here so that moving a section cannot quietly break it:
 *
 * - every relative link of README.md and docs/*.md reaches a file, and a link to a heading of a
 *   markdown page reaches a heading that is there (GitHub's anchors: lower case, punctuation
 *   dropped, each space a hyphen, a repeated heading numbered `-1`, `-2`…);
 * - the README stays a front page (at most 300 lines) and every page of docs/ is one hop from it;
 * - the README's abridged helpdesk domain is the example file, abridged: each line it shows (its
 *   elisions — comments with a `…` — and its first, titling comment aside) is a line of
 *   examples/helpdesk/helpdesk-domain.js, in the file's order;
 * - the travel demo's world as docs/domains.md writes it (flights, hotels, taxi fares) is the world
 *   the demo seeds (`initialTravelState()`), and the taxi intents it gives are the ones the scripted
 *   model answers, while the sentence it gives as unanswered is not.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { initialTravelState } from '../examples/travel/state.js';
import { parseTransferIntent } from '../examples/travel/transfer-script.js';

const repoRoot = path.resolve(import.meta.dirname, '..');
const read = (file: string): string => readFileSync(path.join(repoRoot, file), 'utf8');
const docsPages = readdirSync(path.join(repoRoot, 'docs')).filter((name) => name.endsWith('.md')).sort();
const markdownFiles = ['README.md', ...docsPages.map((name) => `docs/${name}`)];

/** The text outside fenced code blocks: headings and links inside them are examples, not structure. */
function outsideFences(text: string): string {
  let inFence = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : line;
    })
    .join('\n');
}

/** The anchors GitHub gives a page's headings. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of outsideFences(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The relative links of a markdown file: [text](target) and ![alt](target), web addresses left out. */
function relativeLinks(text: string): string[] {
  return [...outsideFences(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target));
}

describe('the README and the manual in docs/', () => {
  test('every relative link of README.md and docs/*.md reaches a file, and a heading when it names one', () => {
    const broken: string[] = [];
    for (const file of markdownFiles) {
      for (const target of relativeLinks(read(file))) {
        const [pathPart, anchor] = target.split('#') as [string, string | undefined];
        const resolved = pathPart === '' ? path.join(repoRoot, file) : path.resolve(path.dirname(path.join(repoRoot, file)), pathPart);
        if (!existsSync(resolved)) {
          broken.push(`${file}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${file}: ${target} (no heading with that anchor in ${path.relative(repoRoot, resolved)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  test('the README is a front page, and every page of docs/ is one hop from it', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    const linked = new Set(relativeLinks(readme).map((target) => target.split('#')[0]));
    expect(docsPages.filter((name) => !linked.has(`docs/${name}`))).toEqual([]);
  });

  test("the README's abridged helpdesk domain shows lines of examples/helpdesk/helpdesk-domain.js, in its order", () => {
    const block = /```js\n(\/\/ examples\/helpdesk\/helpdesk-domain\.js, abridged\n[\s\S]*?)```/.exec(read('README.md'));
    expect(block, 'README.md has a ```js block starting "// examples/helpdesk/helpdesk-domain.js, abridged"').not.toBeNull();
    const shown = block![1]!
      .split('\n')
      .slice(1)
      .filter((line) => line.trim() !== '' && !/^\s*\/\/.*…/.test(line) && !/^\s*\/\/ {3}/.test(line));
    const file = read('examples/helpdesk/helpdesk-domain.js').split('\n');
    let at = 0;
    const missing: string[] = [];
    for (const line of shown) {
      const found = file.indexOf(line, at);
      if (found < 0) missing.push(line);
      else at = found + 1;
    }
    expect(missing).toEqual([]);
    expect(shown.length).toBeGreaterThan(20);
  });

  test("docs/domains.md writes down the travel demo's world as the demo seeds it", () => {
    const page = read('docs/domains.md');
    const world = initialTravelState();
    const rows = (first: RegExp) => [...page.matchAll(new RegExp(`^\\s*\\| \`(${first.source})\` \\|(.*)\\|\\s*$`, 'gm'))].map((m) => [m[1]!, ...m[2]!.split('|').map((c) => c.trim())]);

    const flights = rows(/f-[a-z0-9]+/);
    expect(flights.map(([id]) => id).sort()).toEqual(world.catalogue.flights.map((f) => f.id).sort());
    for (const [id, fromTo, day, times, stops, price] of flights) {
      const f = world.catalogue.flights.find((x) => x.id === id)!;
      expect([fromTo, day, times, stops, price], id).toEqual([`${f.from} → ${f.to}`, String(f.day), `${f.departs} → ${f.arrives}`, String(f.stops), String(f.price)]);
    }

    const hotels = rows(/h-[a-z]+/);
    expect(hotels.map(([id]) => id).sort()).toEqual(world.catalogue.hotels.map((h) => h.id).sort());
    for (const [id, name, city, checkIn, price, near, taxi] of hotels) {
      const h = world.catalogue.hotels.find((x) => x.id === id)!;
      const fare = world.catalogue.taxis?.find((t) => t.to === id);
      expect([name, city, checkIn, price, near, taxi], id).toEqual([h.name, h.city, String(h.checkIn), String(h.price), h.nearVenue ? 'yes' : 'no', fare ? String(fare.price) : '—']);
      if (fare) expect(page).toContain(`\`${fare.from}\``);
    }
  });

  test('the taxi intents docs/domains.md gives are the ones the scripted model answers, and its counter-example is not', () => {
    const page = read('docs/domains.md');
    const intents = [...page.matchAll(/^\s*npx weft run travel "([^"]+)"$/gm)].map((m) => m[1]!);
    expect(intents).toHaveLength(3);
    for (const intent of intents) expect(parseTransferIntent(intent), intent).toBeDefined();
    const cities = intents.map((intent) => parseTransferIntent(intent)!.city);
    expect(new Set(cities)).toEqual(new Set(initialTravelState().catalogue.airports!.map((a) => a.city)));
    expect(page).toContain('`Take me to Berlin for the fair on the 3rd, under 700 EUR`');
    expect(parseTransferIntent('Take me to Berlin for the fair on the 3rd, under 700 EUR')).toBeUndefined();
  });
});
