/**
 * `weft mine --otel` (telemetry/mine-span.ts, issue 34): one `weft mine` span, exported over OTLP,
 * with the candidates accepted and rejected — by verdict, the same counts as the command's JSON
 * line — and one `mine.candidate` event per candidate; no goal or task text (it came from a model).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { fromDist } from './support/dist.js';
import { runInWorkspace } from './support/runs-here.js';

const { TRAVEL_TRANSFER_INTENTS } = await fromDist<typeof import('../dist/examples/travel/transfer-script.js')>('examples/travel/transfer-script.js');

const root = mkdtempSync(join(tmpdir(), 'weft-otel-mine-'));
const ws = join(root, 'ws');
const bodies: string[] = [];
let receiver: Server;
let endpoint = '';

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
type OtlpSpan = { name: string; attributes?: Array<{ key: string; value: OtlpValue }>; events?: Array<{ name: string; attributes?: Array<{ key: string; value: OtlpValue }> }> };

beforeAll(async () => {
  assertBuilt();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const run = await runInWorkspace('travel', { dir: ws, intent: TRAVEL_TRANSFER_INTENTS.lisbon, seed: '11', asOf: '2026-06-01T09:00:00Z' });
  expect(run).toMatchObject({ status: 'completed' });
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

const spans = (): OtlpSpan[] =>
  bodies.flatMap((b) => {
    try {
      const o = JSON.parse(b) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
      return (o.resourceSpans ?? []).flatMap((rs) => (rs.scopeSpans ?? []).flatMap((ss) => ss.spans ?? []));
    } catch {
      return [];
    }
  });
const value = (v: OtlpValue | undefined) => (v?.intValue !== undefined ? Number(v.intValue) : (v?.stringValue ?? v?.boolValue));
const attrs = (list: Array<{ key: string; value: OtlpValue }> | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

describe('weft mine --otel', () => {
  test('one span with the candidates accepted and rejected by verdict, as the JSON line counts them', async () => {
    const r = await weft(['mine', '--dir', ws, '--library', 'travel', '--out', join(root, 'mined.json'), '--otel', '--json'], { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', WEFT_REDIS_URL: '' });
    expect(r.code, r.stderr).toBe(0);
    const line = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { accepted: number; candidates: Array<{ verdict: string; task: string }> };
    expect(line.candidates.length).toBeGreaterThan(0);
    const mine = spans().find((s) => s.name === 'weft mine');
    expect(mine, `spans: ${spans().map((s) => s.name).join(', ')}`).toBeDefined();
    const a = attrs(mine!.attributes);
    expect(a['weft.mine.candidates']).toBe(line.candidates.length);
    expect(a['weft.mine.accepted']).toBe(line.accepted);
    expect(a['weft.mine.rejected']).toBe(line.candidates.length - line.accepted);
    const byVerdict = new Map<string, number>();
    for (const c of line.candidates) byVerdict.set(c.verdict, (byVerdict.get(c.verdict) ?? 0) + 1);
    for (const [verdict, n] of byVerdict) expect(a[`weft.mine.verdict.${verdict}`]).toBe(n);
    expect((mine!.events ?? []).filter((e) => e.name === 'mine.candidate').map((e) => attrs(e.attributes)['weft.mine.verdict'])).toEqual(line.candidates.map((c) => c.verdict));
    const text = JSON.stringify(mine);
    for (const c of line.candidates) expect(text).not.toContain(`"${c.task}"`);
  }, 120_000);
});
