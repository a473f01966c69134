import * as z from 'zod/mini';
import { GRANTS, type Grant } from './identity.js';

/**
 * Where a signed-in user's grants came from: their user record in countersign, or only their
 * identity provider's groups (no record). A run acts as its owner's record, so only a user with
 * one may start runs.
 */
export type PrincipalSource = 'user-record' | 'identity-provider';

/**
 * Which identity-provider groups give which countersign grants, for a signed-in user without a
 * user record. Configuration, not convention: a group that merely happens to be called `admin`
 * in a team's identity provider grants nothing unless the deployment maps it.
 */
export const identityGroupGrantsSchema = z.record(
  z.string().check(z.minLength(1), z.maxLength(256)),
  z.array(z.enum(GRANTS)).check(z.maxLength(GRANTS.length)),
);
export type IdentityGroupGrants = Readonly<Record<string, readonly Grant[]>>;

/** The mapping of countersign's own groups (its Cognito pool, the local issuer): each names its grant. */
export const OWN_GROUP_GRANTS: IdentityGroupGrants = Object.fromEntries(
  GRANTS.map((grant) => [grant, [grant]]),
);

/** The grants a user's groups give under `mapping`; unmapped groups give nothing. */
export function grantsForGroups(groups: readonly string[], mapping: IdentityGroupGrants): Grant[] {
  const grants = new Set<Grant>();
  for (const group of groups) {
    if (!Object.hasOwn(mapping, group)) continue;
    for (const grant of mapping[group] ?? []) grants.add(grant);
  }
  return GRANTS.filter((grant) => grants.has(grant));
}
