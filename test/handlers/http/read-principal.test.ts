import { describe, expect, it } from 'vitest';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import { readPrincipal } from '../../../lambdas/handlers/http/read-principal.js';

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
    );
    const array = await readPrincipal(eventWith({ sub: 'new', groups: ['agent_run'] }), directory([]));

    // Assess
    expect(flattened.grants).toEqual(['agent_run', 'agent_approve']);
    expect(flattened).toMatchObject({ pageAccess: [], languageAccess: [], toolAccess: [] });
    expect(array.grants).toEqual(['agent_run']);
  });
});
