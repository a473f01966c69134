import { describe, expect, it } from 'vitest';
import { parseIdentityGroupGrants } from '../../../lambdas/contract/environment.js';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import { OWN_GROUP_GRANTS } from '../../../lambdas/core/principal.js';
import { readEnvironment } from '../../../lambdas/handlers/config.js';
import { identifyPrincipal, readPrincipal } from '../../../lambdas/handlers/http/read-principal.js';

const directory = (users: UserProfile[]) => ({
  getUser: async (userId: string) => users.find((user) => user.userId === userId),
});

const eventWith = (claims: Record<string, unknown> | undefined) =>
  ({ requestContext: { authorizer: claims ? { jwt: { claims, scopes: [] } } : undefined } }) as never;

describe('readPrincipal', () => {
  it('refuses a request without a subject claim as unauthenticated', async () => {
    await expect(readPrincipal(eventWith(undefined), directory([]))).rejects.toMatchObject({
      code: 'unauthenticated',
    });
    await expect(readPrincipal(eventWith({ sub: '' }), directory([]))).rejects.toMatchObject({
      code: 'unauthenticated',
    });
  });

  it('takes grants and access from the directory record when there is one, whatever the token says', async () => {
    // Prepare
    const record: UserProfile = {
      userId: 'abe',
      displayName: 'Abe',
      grants: ['agent_approve'],
      pageAccess: ['12'],
      languageAccess: ['en'],
      toolAccess: ['update_page_metadata'],
    };

    // Act
    const principal = await readPrincipal(
      eventWith({ sub: 'abe', 'cognito:groups': '[admin]' }),
      directory([record]),
    );

    // Assess
    expect(principal).toEqual(record);
  });

  it('maps identity-provider groups to grants for an unknown user, with no page or tool access', async () => {
    // Act: API Gateway flattens array claims to "[a b]"; the local issuer sends arrays.
    const flattened = await readPrincipal(
      eventWith({ sub: 'new', 'cognito:groups': '[agent_run agent_approve unknown_group]' }),
      directory([]),
      OWN_GROUP_GRANTS,
    );
    const array = await readPrincipal(
      eventWith({ sub: 'new', groups: ['agent_run'] }),
      directory([]),
      OWN_GROUP_GRANTS,
    );

    // Assess
    expect(flattened.grants).toEqual(['agent_run', 'agent_approve']);
    expect(flattened).toMatchObject({ pageAccess: [], languageAccess: [], toolAccess: [] });
    expect(array.grants).toEqual(['agent_run']);
  });

  it('gives an unmapped group nothing: a group that happens to be called "admin" is no grant by itself', async () => {
    // Prepare: a team's own identity provider, mapped by the deployment
    const mapping = { 'countersign-approvers': ['agent_approve'] as const };

    // Act
    const unmapped = await identifyPrincipal(
      eventWith({ sub: 'eve', groups: ['admin'] }),
      directory([]),
      mapping,
    );
    const noMapping = await identifyPrincipal(
      eventWith({ sub: 'eve', groups: ['admin', 'agent_run'] }),
      directory([]),
    );
    const mapped = await identifyPrincipal(
      eventWith({ sub: 'ana', 'cognito:groups': '[countersign-approvers admin]' }),
      directory([]),
      mapping,
    );

    // Assess
    expect(unmapped).toMatchObject({ source: 'identity-provider', profile: { grants: [] } });
    expect(noMapping.profile.grants).toEqual([]);
    expect(mapped.profile.grants).toEqual(['agent_approve']);
  });

  it('says whether the principal has a user record', async () => {
    const record: UserProfile = {
      userId: 'abe',
      displayName: 'Abe',
      grants: ['agent_run'],
      pageAccess: [],
      languageAccess: [],
      toolAccess: [],
    };
    expect((await identifyPrincipal(eventWith({ sub: 'abe' }), directory([record]))).source).toBe(
      'user-record',
    );
    expect((await identifyPrincipal(eventWith({ sub: 'bea' }), directory([record]))).source).toBe(
      'identity-provider',
    );
  });
});

describe('COUNTERSIGN_IDENTITY_GROUP_GRANTS', () => {
  const required = {
    COUNTERSIGN_TABLE_NAME: 'table',
    COUNTERSIGN_SEALING_KEY_ARN: 'arn:aws:kms:eu-west-1:123456789012:key/x',
    COUNTERSIGN_OVERFLOW_BUCKET: 'bucket',
    COUNTERSIGN_OVERFLOW_KEY_ARN: 'arn:aws:kms:eu-west-1:123456789012:key/y',
  };

  it('reads a JSON mapping, and no mapping when unset', () => {
    expect(
      readEnvironment({ ...required, COUNTERSIGN_IDENTITY_GROUP_GRANTS: '{"ops":["agent_approve"]}' })
        .COUNTERSIGN_IDENTITY_GROUP_GRANTS,
    ).toEqual({ ops: ['agent_approve'] });
    expect(readEnvironment(required).COUNTERSIGN_IDENTITY_GROUP_GRANTS).toEqual({});
  });

  it('fails the cold start naming the variable for a value that is not a mapping of grants', () => {
    expect(() => readEnvironment({ ...required, COUNTERSIGN_IDENTITY_GROUP_GRANTS: '{ops' })).toThrow(
      /COUNTERSIGN_IDENTITY_GROUP_GRANTS: not JSON/,
    );
    expect(parseIdentityGroupGrants('{"ops":["superuser"]}')).toMatchObject({ kind: 'invalid' });
    expect(() =>
      readEnvironment({ ...required, COUNTERSIGN_IDENTITY_GROUP_GRANTS: '{"ops":["superuser"]}' }),
    ).toThrow(/COUNTERSIGN_IDENTITY_GROUP_GRANTS/);
  });
});
