import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { CountersignError } from '../../core/errors.js';
import type { UserProfile } from '../../core/identity.js';
import type { UserDirectory } from '../../core/ports.js';
import { grantsForGroups, type IdentityGroupGrants, type PrincipalSource } from '../../core/principal.js';
import { TEXTS } from '../../core/texts.js';

/** Who is asking, and whether countersign holds a user record for them. */
export interface Principal {
  profile: UserProfile;
  source: PrincipalSource;
}

/**
 * Who is asking. API Gateway's JWT authorizer (or, locally, the local issuer's verifier) has
 * already checked the token; this reads its claims, the same code on both. The user record
 * in the directory is the source of grants and access; a signed-in user without one gets the
 * grants the deployment maps their identity provider groups to (`groupGrants`; an unmapped
 * group gives nothing) and no page or tool access (fail closed).
 */
export async function identifyPrincipal(
  event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>,
  users: Pick<UserDirectory, 'getUser'>,
  groupGrants: IdentityGroupGrants = {},
): Promise<Principal> {
  const claims = event.requestContext?.authorizer?.jwt?.claims;
  const subject = typeof claims?.sub === 'string' ? claims.sub : undefined;
  if (!subject) throw new CountersignError('unauthenticated', TEXTS.bearerTokenInvalid);
  const known = await users.getUser(subject);
  if (known) return { profile: known, source: 'user-record' };
  return {
    profile: {
      userId: subject,
      displayName: typeof claims?.name === 'string' ? claims.name : subject,
      grants: grantsForGroups(readGroups(claims?.['cognito:groups'] ?? claims?.groups), groupGrants),
      pageAccess: [],
      languageAccess: [],
      toolAccess: [],
    },
    source: 'identity-provider',
  };
}

/** The profile alone, for routes that do not care whether a record exists. */
export async function readPrincipal(
  event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext'>,
  users: Pick<UserDirectory, 'getUser'>,
  groupGrants: IdentityGroupGrants = {},
): Promise<UserProfile> {
  return (await identifyPrincipal(event, users, groupGrants)).profile;
}

/** API Gateway flattens array claims to `[a b]` strings; accept both shapes. */
function readGroups(groups: unknown): string[] {
  if (Array.isArray(groups)) return groups.map(String);
  if (typeof groups === 'string') {
    return groups
      .replace(/^\[|\]$/g, '')
      .split(/[\s,]+/)
      .filter(Boolean);
  }
  return [];
}
