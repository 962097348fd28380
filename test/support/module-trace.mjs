/**
 * `node --import ./test/support/module-trace.mjs …` with WEFT_MODULE_TRACE=<file>: every module the
 * process loads through the ES module loader is appended to that file, one URL a line — what a
 * command pays for at start-up (test/cli-startup.test.ts, bench/startup.ts). A CommonJS package
 * shows as its entry module only (its own require()s bypass the hooks); that is enough to say it
 * was loaded. The hook runs off the main thread and changes nothing it loads.
 */
import { register } from 'node:module';

register('./module-trace-hooks.mjs', import.meta.url, { data: { file: process.env.WEFT_MODULE_TRACE } });
