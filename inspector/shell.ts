/**
 * The HTML the viewer serves: one shell per page, which loads the page's module, and the import map
 * that lets the browser resolve the pure journal modules' bare imports (@noble/hashes,
 * @noble/curves, zod) to files the viewer serves from the installed packages — no bundler, no CDN.
 * The shell holds no data: the page fetches it from the JSON endpoints and renders it as text.
 */
import { escapeActive } from '../journal/active-text.js';
import { STYLE } from './style.js';

/** The import map's text (its hash is in the Content-Security-Policy: server.ts). */
export const IMPORT_MAP = JSON.stringify({
  imports: {
    zod: '/vendor/zod/index.js',
    '@noble/hashes/': '/vendor/@noble/hashes/',
    '@noble/curves/': '/vendor/@noble/curves/',
  },
});

export type PageName = 'list' | 'invocation';

/**
 * The modules a page imports at once, fetched beside its own (modulepreload) instead of after it
 * has been read: the list's table waits for no second round trip.
 */
const PRELOAD: Record<PageName, readonly string[]> = { list: ['dom', 'lineage', 'list-verdicts', 'live'], invocation: [] };

/** The document for `page` (its module is dist/inspector/page/<page>.js, served under /assets/). */
export function pageShell(page: PageName, title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(escapeActive(title))}</title>
<style>${STYLE}</style>
<script type="importmap">${IMPORT_MAP}</script>
<script type="module" src="/assets/inspector/page/${page}.js"></script>
${PRELOAD[page].map((m) => `<link rel="modulepreload" href="/assets/inspector/page/${m}.js">`).join('\n')}
</head>
<body>
<header class="top"><a class="brand" href="/">weft inspect</a><span class="where" id="where"></span></header>
<main id="app"><p class="loading">loading…</p></main>
<noscript><p class="error">This page needs JavaScript: it lists and verifies in the browser.</p></noscript>
</body>
</html>
`;
}

/** For the few server-made strings that go into markup (the title, made inert first: an id from the URL may hold a bidi override). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
