/**
 * Node's `process` module, bundled in place of `import ... from 'node:process'` for the reason
 * given in lib/bundling/node-http.ts: its ES module facade reads every property of `process`,
 * lazy ones included (about 3 ms of init).
 *
 * @example
 * // esbuild --alias:node:process=lib/bundling/node-process.ts
 * import { env, versions } from 'node:process';
 */
import { createRequire } from 'node:module';

const nodeProcess = createRequire(import.meta.url)('node:process') as typeof import('node:process');

export default nodeProcess;
export const { argv, cwd, emitWarning, env, exit, hrtime, nextTick, platform, version, versions } =
  nodeProcess;
