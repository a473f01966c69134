import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { CountersignError } from '../../core/errors.js';
import { GRANTS, type Grant, type UserProfile } from '../../core/identity.js';
import type { UserDirectory } from '../../core/ports.js';

const UNAUTHENTICATED = 'The bearer token is missing or invalid.';

/**
 * Who is asking. API Gateway's JWT authorizer (or, locally, the local issuer's verifier) has
 * already checked the token; this reads its claims, the same code on both. The user record
 * in the directory is the source of grants and access; a signed-in user without one gets the
 * grants their identity provider groups name and no page or tool access (fail closed).
 */
export async function readPrincipal(
  event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>,
  users: Pick<UserDirectory, 'getUser'>,
): Promise<UserProfile> {
  const claims = event.requestContext?.authorizer?.jwt?.claims;
  const subject = typeof claims?.sub === 'string' ? claims.sub : undefined;
  if (!subject) throw new CountersignError('unauthenticated', UNAUTHENTICATED);
  const known = await users.getUser(subject);
  if (known) return known;
  return {
    userId: subject,
    displayName: typeof claims?.name === 'string' ? claims.name : subject,
    grants: grantsFromGroups(claims?.['cognito:groups'] ?? claims?.groups),
    pageAccess: [],
    languageAccess: [],
    toolAccess: [],
  };
}

/** API Gateway flattens array claims to `[a b]` strings; accept both shapes. */
function grantsFromGroups(groups: unknown): Grant[] {
  const names = Array.isArray(groups)
    ? groups.map(String)
    : typeof groups === 'string'
      ? groups.replace(/^\[|\]$/g, '').split(/[\s,]+/)
      : [];
  return names.filter((name): name is Grant => (GRANTS as readonly string[]).includes(name));
}
