/** The hook behind slow-ioredis.mjs: ioredis's entry module is loaded late; everything else as usual. */
const DELAY_MS = Number(process.env.WEFT_TEST_SLOW_IMPORT_MS || 6000);

export async function load(url, context, nextLoad) {
  if (/\/node_modules\/ioredis\/built\/index\.js$/.test(url)) await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
  return nextLoad(url, context);
}
