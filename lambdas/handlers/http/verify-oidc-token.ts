import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { CountersignError } from '../../core/errors.js';

/** RSA and EC signatures only: never `none`, never a shared secret an issuer could not publish. */
const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384'];

export interface OidcTokenVerifierOptions {
  /** The issuer, exactly as the tokens' `iss` says (the same one the HTTP API's authorizer checks). */
  readonly issuerUrl: string;
  /** A token must name one of these in `aud`, or in `client_id` (Cognito access tokens). */
  readonly audience: readonly string[];
}

/** Verifies a bearer token; `undefined` for every kind of refusal (the client learns nothing more). */
export type OidcTokenVerifier = (token: string) => Promise<(JWTPayload & { sub: string }) | undefined>;

/**
 * What API Gateway's JWT authorizer does, for an endpoint that has none (a Lambda function
 * URL): the keys are found through `<issuer>/.well-known/openid-configuration` once per
 * container, then issuer, audience (or `client_id`), signature, expiry and `nbf` are checked.
 *
 * @example
 * const verify = createOidcTokenVerifier({ issuerUrl: 'https://login.example.com', audience: ['countersign'] });
 * const claims = await verify(bearerToken); // undefined when refused
 */
export function createOidcTokenVerifier(options: OidcTokenVerifierOptions): OidcTokenVerifier {
  if (options.audience.length === 0) {
    throw new CountersignError('configuration', 'The token verifier needs at least one audience.');
  }
  let keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  return async (token) => {
    keys ??= discoverKeys(options.issuerUrl).catch((error: unknown) => {
      keys = undefined; // a failed discovery is retried by the next request
      throw error;
    });
    // A discovery failure is ours, not the client's: it propagates (a 500), unlike a bad token.
    const keySet = await keys;
    try {
      const { payload } = await jwtVerify(token, keySet, {
        issuer: options.issuerUrl,
        algorithms: ALLOWED_ALGORITHMS,
        // Without `exp` a stolen token would never expire; the local issuer requires it too.
        requiredClaims: ['sub', 'exp'],
      });
      if (typeof payload.sub !== 'string' || payload.sub === '') return undefined;
      const audiences = [payload.aud ?? []].flat();
      const clientId = typeof payload.client_id === 'string' ? payload.client_id : undefined;
      const accepted = options.audience.some(
        (audience) => audiences.includes(audience) || clientId === audience,
      );
      return accepted ? (payload as JWTPayload & { sub: string }) : undefined;
    } catch {
      return undefined;
    }
  };
}

async function discoverKeys(issuerUrl: string): Promise<ReturnType<typeof createRemoteJWKSet>> {
  const response = await fetch(`${issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!response.ok) {
    throw new CountersignError(
      'configuration',
      `The issuer's discovery document answered ${response.status}.`,
      {
        expose: false,
      },
    );
  }
  const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  if (document.issuer !== issuerUrl || typeof document.jwks_uri !== 'string') {
    throw new CountersignError('configuration', "The issuer's discovery document does not match it.", {
      expose: false,
    });
  }
  return createRemoteJWKSet(new URL(document.jwks_uri));
}
