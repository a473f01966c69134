// npm run build, third step: bundles the `countersign` command (bin/countersign.ts) with what it
// imports (zod, the KMS client for --key-id, the MCP SDK for mcp-gateway) into one file, so `npx
// countersign` runs from the published package, which depends on none of them at run time.
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { createBundleFormatOptions } from '../lib/functions.js';
import { resolveProjectPath } from '../lib/project-path.js';

/** Where package.json's `bin` points. */
const CLI_BUNDLE = 'dist/cli/countersign.mjs';

/** The command's bundle, built with the published settings (tests build it elsewhere with these). */
export async function buildCountersignCli(outfile: string): Promise<void> {
  const format = createBundleFormatOptions();
  await esbuild.build({
    ...format,
    entryPoints: [resolveProjectPath('bin/countersign.ts')],
    outfile,
    // The package supports Node 22 (package.json engines), not only the Lambda runtime's 24.
    target: 'node22',
    // The lazy imports (the KMS client, the gateway) stay lazy, inside the one file.
    splitting: false,
    banner: { js: `#!/usr/bin/env node\n${format.banner?.js ?? ''}` },
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildCountersignCli(resolveProjectPath(CLI_BUNDLE));
  console.log(`Built the countersign command into ${CLI_BUNDLE}.`);
}
