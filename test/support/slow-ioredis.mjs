/**
 * `node --import ./test/support/slow-ioredis.mjs …`: loading ioredis takes WEFT_TEST_SLOW_IMPORT_MS
 * (default 6000) longer — what twenty processes starting at once on two cores did to it. The delay
 * is in a module-loading hook, off the main thread: the process's own timers keep running meanwhile,
 * as they did under load. Nothing else is changed.
 */
import { register } from 'node:module';

register('./slow-ioredis-hooks.mjs', import.meta.url);
