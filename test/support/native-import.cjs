// Node's own import(), for ./dist.ts: a CommonJS file loaded by Node's require is not transformed by
// vitest, so the import() here is Node's, and what it loads is loaded by Node (dist/ as the CLI runs it).
module.exports = (url) => import(url);
