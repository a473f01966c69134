import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

/**
 * The package the inbox page signs in with: a maintained OAuth 2.0 / OpenID Connect client
 * (authorization code + PKCE, refresh, revocation), not hand-written OAuth. Deployed it ships
 * beside the inbox bundle as a browser build (lib/side-modules.ts); in `npm start` it is the
 * installed package. Either way Node's resolution finds it from here.
 */
export const SIGN_IN_LIBRARY_PACKAGE = 'oauth4webapi';

/** The library's source as served, and its Subresource Integrity (the page's import map pins it). */
export interface SignInLibrary {
  readonly source: string;
  readonly integrity: string;
}

const requireHere = createRequire(import.meta.url);
let library: Promise<SignInLibrary> | undefined;

/**
 * The library, read once per container on first use (never at init: most requests of the inbox
 * function are the inbox itself).
 *
 * @example
 * const { source, integrity } = await readSignInLibrary(); // integrity: 'sha384-…'
 */
export function readSignInLibrary(): Promise<SignInLibrary> {
  library ??= readFile(requireHere.resolve(SIGN_IN_LIBRARY_PACKAGE), 'utf8')
    .then((source) => ({
      source,
      integrity: `sha384-${createHash('sha384').update(source).digest('base64')}`,
    }))
    .catch((error: unknown) => {
      library = undefined;
      throw error;
    });
  return library;
}
