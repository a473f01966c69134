import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import type { EnvironmentVariableName } from '../lambdas/contract/environment.js';
import { GRANTS, type Grant } from '../lambdas/core/identity.js';
import { OWN_GROUP_GRANTS } from '../lambdas/core/principal.js';
import { invalidProp } from './validation-error.js';

/** Group name (as the tokens' `cognito:groups` or `groups` claim says it) to countersign grants. */
export type IdentityGroupGrantsProp = Readonly<Record<string, readonly Grant[]>>;

/** The variable the API functions read the mapping from (lambdas/contract/environment.ts). */
export const IDENTITY_GROUP_GRANTS_VARIABLE =
  'COUNTERSIGN_IDENTITY_GROUP_GRANTS' satisfies EnvironmentVariableName;

/**
 * The mapping the functions get. Given: validated as is. Not given: with the construct's own
 * user pool, its groups `agent_run`, `agent_approve` and `admin` give the grant they name (the
 * construct created them for that); with an external identity provider, nothing, so that a
 * group that merely happens to be called `admin` there does not make anyone an admin.
 */
export function resolveIdentityGroupGrants(props: {
  /** The construct a bad mapping is reported on. */
  scope: IConstruct;
  identityGroupGrants?: IdentityGroupGrantsProp;
  usesExternalIdentityProvider: boolean;
}): Record<string, Grant[]> {
  const mapping = props.identityGroupGrants ?? (props.usesExternalIdentityProvider ? {} : OWN_GROUP_GRANTS);
  if (typeof mapping !== 'object' || mapping === null || Array.isArray(mapping)) {
    throw invalidProp(
      props.scope,
      `identityGroupGrants ${JSON.stringify(mapping)} must map group names to grants, e.g. { 'countersign-approvers': ['agent_approve'] }.`,
    );
  }
  const resolved: Record<string, Grant[]> = {};
  for (const [group, grants] of Object.entries(mapping)) {
    if (group.length === 0 || group.length > 256) {
      throw invalidProp(
        props.scope,
        `identityGroupGrants has the group name ${JSON.stringify(group)}; use a name of 1 to 256 characters, exactly as your tokens' groups claim says it.`,
      );
    }
    const unknown = Array.isArray(grants)
      ? grants.filter((grant) => !(GRANTS as readonly string[]).includes(grant))
      : [grants];
    if (unknown.length > 0) {
      throw invalidProp(
        props.scope,
        `identityGroupGrants[${JSON.stringify(group)}] has ${JSON.stringify(unknown)}; each group maps to a list of grants from ${JSON.stringify(GRANTS)}.`,
      );
    }
    resolved[group] = [...new Set(grants)];
  }
  return resolved;
}

/** Tells each function that reads a principal which groups give which grants. */
export function applyIdentityGroupGrants(
  functions: readonly LambdaFunction[],
  mapping: Record<string, Grant[]>,
): void {
  const value = JSON.stringify(mapping);
  for (const handler of functions) {
    handler.addEnvironment(IDENTITY_GROUP_GRANTS_VARIABLE, value);
  }
}
