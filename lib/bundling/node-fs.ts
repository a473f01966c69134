/**
 * Node's `fs` module, bundled in place of `import ... from 'node:fs'` for the reason given in
 * lib/bundling/node-http.ts: its ES module facade reads every export (about 2 ms of init).
 *
 * @example
 * // esbuild --alias:node:fs=lib/bundling/node-fs.ts
 * import { readFileSync } from 'node:fs';
 */
import { createRequire } from 'node:module';

const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

export default fs;
export const {
  ReadStream,
  WriteStream,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  promises,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} = fs;
