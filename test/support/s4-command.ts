/**
 * A `weft` command's own code run in the test's process: the command module's `run(argv)` from dist/
 * (what cli/main.ts calls), with what it writes to stdout and stderr captured and its exit code
 * returned, and the stores it opened closed after it (as main.ts does) — the same result as `weft()`
 * (./cli.ts) without a process start (0.3–0.5 s of CPU each). For a command run many times over where
 * its process is not the subject (a sample of exports to verify); the command keeps a real
 * end-to-end run beside it.
 *
 * Capturing swaps process.stdout.write and process.stderr.write while the command runs: use it only
 * in a test nothing else in the file runs beside (no concurrent tests writing meanwhile). A command
 * prints its `--json` line once per process (cli/json-line.ts), so a command whose JSON line is
 * asked for goes through `verifyBundleInProcess` or a real process instead.
 *
 * `verifyBundleInProcess(file, keyFile)` is `weft verify <bundle> --public-key F --json` made of the
 * command's own exported steps (cli/commands/verify.ts: the bundle parsed, its journal verified in
 * memory against the key, the bundle's consistency checked — its invocation, its libraries, its
 * lineage — and the JSON and exit code computed by reportJson and verifyExitCode).
 */
import type { CliResult } from './cli.js';
import { fromDist } from './dist.js';

/** `weft <name> ...argv` in this process (see the header). */
export async function commandInProcess(name: string, argv: string[]): Promise<CliResult> {
  await fromDist('journal/sha256-node.js');
  await fromDist('journal/ed25519-node.js');
  const command = await fromDist<{ run(argv: string[]): Promise<number> }>(`cli/commands/${name}.js`);
  const { closeStores } = await fromDist<typeof import('../../dist/cli/closing.js')>('cli/closing.js');
  let stdout = '';
  let stderr = '';
  const [out, err] = [process.stdout.write, process.stderr.write];
  const capture = (append: (text: string) => void) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture((text) => (stdout += text));
  process.stderr.write = capture((text) => (stderr += text));
  let code: number;
  try {
    code = await command.run(argv);
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    await closeStores();
  }
  return { code, signal: null, stdout, stderr };
}

/** `weft verify <bundle file> --public-key <keyFile> --json` in this process (see the header): its exit code and JSON. */
export async function verifyBundleInProcess(file: string, keyFile: string): Promise<{ code: number; json: Record<string, unknown> }> {
  await fromDist('journal/sha256-node.js');
  await fromDist('journal/ed25519-node.js');
  const verify = await fromDist<typeof import('../../dist/cli/commands/verify.js')>('cli/commands/verify.js');
  const { looksLikeBundle, parseBundle } = await fromDist<typeof import('../../dist/journal/bundle.js')>('journal/bundle.js');
  const { bundleLineage } = await fromDist<typeof import('../../dist/journal/bundle-lineage.js')>('journal/bundle-lineage.js');
  const { loadPublicKey } = await fromDist<typeof import('../../dist/runtime/keys.js')>('runtime/keys.js');
  const bytes = await verify.readJournalFile(file);
  if (!looksLikeBundle(bytes)) throw new Error(`${file} is not a bundle`);
  const bundle = parseBundle(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  const key = await loadPublicKey(keyFile);
  const report = verify.verifyJournalInMemory(new TextEncoder().encode(bundle.journal), key);
  // The bundle's own consistency, as the command checks it (verify.ts bundleProblem).
  let problem: string | undefined;
  if (report.invocation !== undefined && report.invocation !== bundle.invocation) problem = `the bundle is for invocation ${bundle.invocation}, but its journal is the journal of ${report.invocation}`;
  else if (report.pin?.library !== undefined && !Object.hasOwn(bundle.libraries, report.pin.library)) problem = `the journal pins library ${report.pin.library}, which the bundle does not carry`;
  else if (report.ok) {
    const head = bundle.journal.split('\n', 2).filter((line) => line !== '').map((line) => JSON.parse(line) as never);
    const lineage = bundleLineage(bundle, head);
    if ('problem' in lineage) problem = lineage.problem;
  }
  const context = { signature: { by: 'file' as const, file: keyFile, key }, input: 'bundle' as const, ...(problem === undefined ? {} : { bundleProblem: problem }) };
  return { code: verify.verifyExitCode(report, context), json: verify.reportJson(report, context) as unknown as Record<string, unknown> };
}
