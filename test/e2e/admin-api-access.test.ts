import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { type RequestBody, refusalOf } from '../support/api-answers.js';
import { apiClientWithToken, useTestRuntime } from '../support/local-runtime.js';
import { createUser } from './approvers-support.js';

describe('the admin API: grants, page, language and tool access as data', () => {
  const runtime = useTestRuntime();

  const user: RequestBody<'putUser'> = {
    userId: 'late-approver',
    displayName: 'Late Approver',
    grants: ['agent_run'],
    pageAccess: ['12'],
    languageAccess: ['en'],
    toolAccess: ['update_page_metadata'],
  };

  it('changes what a user may do by writing their record', async () => {
    // Prepare
    const token = await createUser(runtime, user as never);
    const before = await apiClientWithToken(runtime.url, token).listInbox();

    // Act
    const granted = await runtime.client('admin').putUser({
      path: { id: 'late-approver' },
      body: { ...user, grants: ['agent_run', 'agent_approve'] },
    });
    const read = await runtime.client('admin').getUser({ path: { id: 'late-approver' } });
    const after = await apiClientWithToken(runtime.url, token).listInbox();

    // Assess
    expect(before.status).toBe(403);
    expect(granted.status).toBe(200);
    expect(read.body).toEqual({ ...user, grants: ['agent_run', 'agent_approve'] });
    expect(after.status).toBe(200);
  });

  it('stores pages with their language', async () => {
    // Act
    const written = await runtime
      .client('admin')
      .putPage({ path: { id: '30' }, body: { pageId: '30', language: 'fr', title: 'Printemps' } });
    const read = await runtime.client('admin').getPage({ path: { id: '30' } });
    // raw: a page without its required language, on purpose
    const withoutLanguage = await runtime.sendRaw('PUT', '/admin/pages/31', {
      as: 'admin',
      body: { pageId: '31', title: 'No language' },
    });

    // Assess
    expect(written.status).toBe(200);
    expect(read.body).toMatchObject({ pageId: '30', language: 'fr', title: 'Printemps' });
    expect(withoutLanguage.status).toBe(400);
    expect(withoutLanguage.json.error.field).toBe('body.language');
  });

  it.each([
    ['an unknown grant', 'body.grants.0', { ...user, grants: ['superuser'] }],
    ['a misspelt access field', 'body.toolsAccess', { ...user, toolsAccess: ['x'] }],
    ['an id that differs from the path', 'body.userId', { ...user, userId: 'someone-else' }],
    ['a page access that is neither a list nor "*"', 'body.pageAccess', { ...user, pageAccess: 'all' }],
  ])('answers 400 for %s, naming %s', async (_name, field, body) => {
    // Act
    // raw: a user record the body schema refuses, on purpose
    const response = await runtime.sendRaw('PUT', '/admin/users/late-approver', { as: 'admin', body });

    // Assess
    expect(response.status).toBe(400);
    expect(response.json.error.field).toBe(field);
  });

  it('answers 403 to everyone but an admin', async () => {
    // Act
    const responses = await Promise.all(
      ['editor', 'approver', 'ops-approver'].map((as) =>
        runtime.client(as).putUser({ path: { id: 'editor' }, body: { ...user, userId: 'editor' } }),
      ),
    );
    const list = await runtime.client('approver').listUsers();

    // Assess
    for (const response of [...responses, list]) {
      expect(response.status).toBe(403);
      expect(refusalOf(response).error.message).toBe(TEXTS.grantRefused('admin'));
    }
    expect((await runtime.dependencies.users.getUser('editor'))?.grants).toEqual(['agent_run']);
  });

  it('answers 404 for an unknown item, collection or deletion', async () => {
    // Act
    const [unknownUser, unknownTask, unknownDeletion] = await Promise.all([
      runtime.client('admin').getUser({ path: { id: 'nobody' } }),
      runtime.client('admin').deleteTask({ path: { id: 'no-such-task' } }),
      // Users may be deleted now (DELETE /admin/users/{id}); an unknown one is a 404.
      runtime.client('admin').deleteUser({ path: { id: 'nobody' } }),
    ]);
    const unknownPaths = await Promise.all([
      // raw: paths that are no route of the API, on purpose
      runtime.sendRaw('GET', '/admin/widgets', { as: 'admin' }),
      runtime.sendRaw('GET', '/admin/users/a/b', { as: 'admin' }),
    ]);

    // Assess
    expect(
      [unknownUser, ...unknownPaths, unknownTask, unknownDeletion].map((response) => response?.status),
    ).toEqual([404, 404, 404, 404, 404]);
    expect(refusalOf(unknownUser).error.message).toBe('No user "nobody".');
    expect(refusalOf(unknownDeletion).error.message).toBe('No user "nobody".');
  });
});
