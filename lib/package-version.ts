import { readFileSync } from 'node:fs';

/**
 * The version of the countersign package this construct runs from, read from its package.json:
 * `../package.json` in a source checkout (lib/), `../../package.json` when installed (dist/lib/).
 *
 * @example
 * createOpenApiDocument({ version: readPackageVersion() });
 */
export function readPackageVersion(): string {
  for (const relativePath of ['../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(relativePath, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'countersign' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // Not this layout; try the next.
    }
  }
  return 'latest';
}
