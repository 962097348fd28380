/**
 * The relay's bridge page: what a person opens to watch this process's runs in Stately's inspector.
 * Stately's inspector is a page hosted at https://stately.ai/inspect; the bridge frames it and
 * posts it each message the relay sends — with that page's exact origin as the target (never '*'),
 * and only after the framed page says it is connected (`@statelyai.connected`, checked to come from
 * that origin). What that page receives is what the relay sends: states, bounded snapshots and step
 * events, never args, results or the intent (protocol.ts, record-events.ts). It needs the internet;
 * `weft inspect` is the offline viewer.
 *
 * The page carries no inline script: /bridge.js is served beside it, under a CSP that allows only
 * this origin's script, the one frame and the relay's own WebSocket.
 */
import { createHash } from 'node:crypto';

export const STATELY_ORIGIN = 'https://stately.ai';
const STYLE = 'html,body{height:100%;margin:0}iframe{width:100%;height:100%;border:0}';
const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

export const BRIDGE_CSP = ["default-src 'none'", "script-src 'self'", `style-src ${hash(STYLE)}`, `frame-src ${STATELY_ORIGIN}`, "connect-src 'self'", "base-uri 'none'", "form-action 'none'"].join('; ');

export function bridgePage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>weft — Stately inspector</title><style>${STYLE}</style></head>
<body><iframe id="inspector" src="${STATELY_ORIGIN}/inspect" title="Stately inspector"></iframe><script type="module" src="/bridge.js"></script></body></html>
`;
}

export const BRIDGE_SCRIPT = `// weft's Stately bridge: relay messages in, posted to ${STATELY_ORIGIN} only.
const frame = document.getElementById('inspector');
const token = new URLSearchParams(location.search).get('token') ?? '';
const waiting = [];
let connected = false;
addEventListener('message', (e) => {
  if (e.origin !== ${JSON.stringify(STATELY_ORIGIN)} || e.data?.type !== '@statelyai.connected') return;
  connected = true;
  for (const data of waiting.splice(0)) frame.contentWindow.postMessage(data, ${JSON.stringify(STATELY_ORIGIN)});
});
const ws = new WebSocket(\`ws://\${location.host}/?token=\${encodeURIComponent(token)}\`);
ws.onmessage = (m) => {
  let data;
  try { data = JSON.parse(m.data); } catch { return; }
  if (connected) frame.contentWindow.postMessage(data, ${JSON.stringify(STATELY_ORIGIN)});
  else if (waiting.length < 5000) waiting.push(data);
};
`;
