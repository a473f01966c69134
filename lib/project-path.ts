import { fileURLToPath } from 'node:url';

/**
 * Resolves a path inside this project, independent of the working directory of the CDK app.
 *
 * @example
 * resolveProjectPath('lambdas/handlers'); // the absolute path of the handlers folder
 */
export function resolveProjectPath(relativePath: string): string {
  return fileURLToPath(new URL(`../${relativePath}`, import.meta.url));
}
