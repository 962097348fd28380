/**
 * The `weft` commands' own modules, loaded once in the test's process: the compiled library in dist/
 * (what the `weft` process runs), imported by Node itself (./dist.ts), with the node:crypto fast
 * paths installed first, as cli/main.ts installs them. The one place the in-process stand-ins for a
 * command (./runs-here.ts, ./journals-here.ts, ./command-in-process.ts) get the command's code from:
 * a user domain written for the tests (./strict-travel.ts, ./private-travel.ts) imports dist/, so
 * the runtime that runs it must be that copy of the library.
 *
 * The library's modules are spread into one object (their exports do not collide); a command's
 * own module (its `run` and `usage`) stays under its name (`commands.verify`, `commands.export`).
 */
import { fromDist } from './dist.js';

async function load() {
  await fromDist('journal/sha256-node.js');
  await fromDist('journal/ed25519-node.js');
  return {
    ...(await fromDist<typeof import('../../dist/cli/domain-loader.js')>('cli/domain-loader.js')),
    ...(await fromDist<typeof import('../../dist/cli/workspace.js')>('cli/workspace.js')),
    ...(await fromDist<typeof import('../../dist/cli/open-invocation.js')>('cli/open-invocation.js')),
    ...(await fromDist<typeof import('../../dist/cli/invocation-meta.js')>('cli/invocation-meta.js')),
    ...(await fromDist<typeof import('../../dist/cli/domain-map.js')>('cli/domain-map.js')),
    ...(await fromDist<typeof import('../../dist/cli/key-files.js')>('cli/key-files.js')),
    ...(await fromDist<typeof import('../../dist/runtime/open.js')>('runtime/open.js')),
    ...(await fromDist<typeof import('../../dist/cli/store-choice.js')>('cli/store-choice.js')),
    ...(await fromDist<typeof import('../../dist/cli/dispatch-choice.js')>('cli/dispatch-choice.js')),
    ...(await fromDist<typeof import('../../dist/cli/policy-choice.js')>('cli/policy-choice.js')),
    ...(await fromDist<typeof import('../../dist/cli/library-choice.js')>('cli/library-choice.js')),
    ...(await fromDist<typeof import('../../dist/cli/journal-source.js')>('cli/journal-source.js')),
    ...(await fromDist<typeof import('../../dist/cli/tenant-scope.js')>('cli/tenant-scope.js')),
    ...(await fromDist<typeof import('../../dist/cli/given-key.js')>('cli/given-key.js')),
    ...(await fromDist<typeof import('../../dist/cli/json-line.js')>('cli/json-line.js')),
    ...(await fromDist<typeof import('../../dist/cli/exit-codes.js')>('cli/exit-codes.js')),
    ...(await fromDist<typeof import('../../dist/cli/closing.js')>('cli/closing.js')),
    ...(await fromDist<typeof import('../../dist/cli/terminal-guard.js')>('cli/terminal-guard.js')),
    ...(await fromDist<typeof import('../../dist/journal/store.js')>('journal/store.js')),
    ...(await fromDist<typeof import('../../dist/stores/file.js')>('stores/file.js')),
    ...(await fromDist<typeof import('../../dist/journal/stored-lines.js')>('journal/stored-lines.js')),
    ...(await fromDist<typeof import('../../dist/journal/seal.js')>('journal/seal.js')),
    ...(await fromDist<typeof import('../../dist/journal/bundle.js')>('journal/bundle.js')),
    ...(await fromDist<typeof import('../../dist/journal/bundle-check.js')>('journal/bundle-check.js')),
    ...(await fromDist<typeof import('../../dist/runtime/index.js')>('runtime/index.js')),
    ...(await fromDist<typeof import('../../dist/runtime/list.js')>('runtime/list.js')),
    ...(await fromDist<typeof import('../../dist/runtime/keys.js')>('runtime/keys.js')),
    commands: {
      verify: await fromDist<typeof import('../../dist/cli/commands/verify.js')>('cli/commands/verify.js'),
      export: await fromDist<typeof import('../../dist/cli/commands/export.js')>('cli/commands/export.js'),
      replay: await fromDist<typeof import('../../dist/cli/commands/replay.js')>('cli/commands/replay.js'),
    },
  };
}

let loaded: ReturnType<typeof load> | undefined;

/** The commands' modules (see the header), loaded on first use. */
export function commandModules(): ReturnType<typeof load> {
  return (loaded ??= load());
}

/** A command's own module by its name (dist/cli/commands/<name>.js): its `run(argv)` and `usage`. */
export async function commandModule(name: string): Promise<{ run(argv: string[]): Promise<number>; usage: string }> {
  await commandModules();
  return fromDist(`cli/commands/${name}.js`);
}
