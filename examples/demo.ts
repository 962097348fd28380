/**
 * `npm start` — the demo on the embedded default: the travel example's intent runs end to end in
 * ./.weft (file store, in-process dispatcher, scripted model), printing each epoch and its steps;
 * then the journal is verified offline with the workspace's public key. Run it again and the same
 * invocation (same tenant, intent, seed and asOf ⇒ same id) is found sealed, so it is replayed
 * from its journal instead — calling nothing — and must reproduce the same fingerprint.
 */
import '../journal/sha256-node.js';
import '../journal/ed25519-node.js';
import { loadPublicKey } from '../runtime/keys.js';
import { followRun, printOutcome } from '../cli/follow.js';
import { progressLine } from '../cli/progress.js';
import { locationOf } from '../cli/hints.js';
import { openWorkspace } from '../cli/workspace.js';
import { writeInvocationMeta } from '../cli/invocation-meta.js';
import { Runtime } from '../runtime/runtime.js';
import { travelDomain } from './travel/domain.js';

async function main(): Promise<number> {
  const ws = await openWorkspace({ dir: process.argv[2], domain: { domain: travelDomain, ref: { builtin: 'travel' } } });
  const intent = travelDomain.intent!;
  const start = { tenant: 'demo', seed: '1', asOf: travelDomain.asOf! };
  const id = Runtime.defaultId(intent, start);
  writeInvocationMeta(ws.dir, id, { domain: ws.domainRef });
  process.stdout.write(`Weft demo — ${travelDomain.description}\nintent: "${intent}"\nworkspace: ${ws.dir}\n\n`);

  const existing = (await ws.runtime.list()).find((r) => r.id === id);
  let code = 0;
  if (existing && existing.status !== 'running') {
    process.stdout.write(`This invocation already ran (${existing.status}, ${existing.records} records). Replaying it from its journal, calling nothing:\n`);
    const journal = ws.runtime.journalPath(id)!;
    const replay = await ws.runtime.replay({ journalPath: journal });
    process.stdout.write(`replayed ${replay.records} records: identical, fingerprint ${replay.fingerprint}\n`);
    process.stdout.write(`(delete ${ws.dir} to run it live again)\n`);
  } else {
    const handle = existing ? await ws.runtime.resume(id) : await ws.runtime.start(intent, start);
    const pinned = (await ws.store.read(id, 0, 1))[0];
    if (pinned) process.stdout.write(`${progressLine(pinned, false)}\n`);
    const result = await followRun(handle, true);
    code = printOutcome(ws, result, false, locationOf({ dir: ws.dir }));
  }

  const report = await ws.runtime.verify({ journalPath: ws.runtime.journalPath(id)! }, await loadPublicKey(ws.publicKeyFile));
  process.stdout.write(
    report.ok
      ? `\nverified offline with ${ws.publicKeyFile}: ${report.records.length} records intact, sealed, fingerprint ${report.fingerprint}\n`
      : `\nverification: ${report.error?.message}\n`,
  );
  await ws.runtime.close();
  return report.ok ? code : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
