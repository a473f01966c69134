// npm run build, third step: bundles the `countersign` command (bin/countersign.ts) with what it
// imports (zod, the KMS client for --key-id) into one file, so `npx countersign` runs from the
// published package, which depends on none of them at run time.
import * as esbuild from 'esbuild';
import { createBundleFormatOptions } from '../lib/functions.js';
import { resolveProjectPath } from '../lib/project-path.js';

/** Where package.json's `bin` points. */
const CLI_BUNDLE = 'dist/cli/countersign.mjs';

const format = createBundleFormatOptions();
esbuild.buildSync({
  ...format,
  entryPoints: [resolveProjectPath('bin/countersign.ts')],
  outfile: resolveProjectPath(CLI_BUNDLE),
  // The package supports Node 22 (package.json engines), not only the Lambda runtime's 24.
  target: 'node22',
  // The lazy import of the KMS client stays lazy, inside the one file.
  splitting: false,
  banner: { js: `#!/usr/bin/env node\n${format.banner?.js ?? ''}` },
});
console.log(`Built the countersign command into ${CLI_BUNDLE}.`);
