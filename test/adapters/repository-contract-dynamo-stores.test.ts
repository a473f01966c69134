import { expect, it } from 'vitest';
import { configurationSchema, taskSchema } from '../../lambdas/core/configurations.js';
import { userProfileSchema } from '../../lambdas/core/identity.js';
import { PAGE_NOT_AVAILABLE, pageSchema } from '../../lambdas/core/pages.js';
import { errorOf, testDynamoAdapters } from './repository-contract-support.js';

testDynamoAdapters('users', (adapters) => {
  it('stores, reads and lists users with the schema defaults', async () => {
    // Prepare
    const alice = userProfileSchema.parse({
      userId: 'alice',
      grants: ['agent_approve'],
      pageAccess: ['home'],
    });
    const root = userProfileSchema.parse({
      userId: 'root',
      grants: ['admin'],
      pageAccess: '*',
      languageAccess: '*',
    });

    // Act
    await adapters.users.putUser(alice);
    await adapters.users.putUser(root);
    await adapters.users.putUser({ ...alice, displayName: 'Alice' });

    // Assess
    expect(await adapters.users.getUser('alice')).toEqual({ ...alice, displayName: 'Alice' });
    expect(await adapters.users.getUser('nobody')).toBeUndefined();
    const listed = await adapters.users.listUsers();
    expect(listed.map((user) => user.userId).sort()).toEqual(['alice', 'root']);
    expect(listed.find((user) => user.userId === 'root')).toEqual(root);
  });
});

testDynamoAdapters('configurations and tasks', (adapters) => {
  it('stores, lists and deletes configurations and tasks', async () => {
    // Prepare
    const configuration = configurationSchema.parse({
      configurationId: 'default',
      label: 'Default',
      provider: 'scripted',
      model: 'demo',
      allowedTools: ['get_page'],
    });
    const task = taskSchema.parse({
      taskId: 'seo',
      label: 'SEO',
      configurationId: 'default',
      promptTemplate: 'Improve {{input}}',
    });

    // Act
    await adapters.configurations.putConfiguration(configuration);
    await adapters.configurations.putTask(task);
    const listedConfigurations = await adapters.configurations.listConfigurations();
    const listedTasks = await adapters.configurations.listTasks();
    const deleted = await adapters.configurations.deleteTask('seo');
    const deletedAgain = await adapters.configurations.deleteTask('seo');

    // Assess
    expect(await adapters.configurations.getConfiguration('default')).toEqual(configuration);
    expect(listedConfigurations).toEqual([configuration]);
    expect(listedTasks).toEqual([task]);
    expect(deleted).toBe(true);
    expect(deletedAgain).toBe(false);
    expect(await adapters.configurations.getTask('seo')).toBeUndefined();
    expect(await adapters.configurations.deleteConfiguration('default')).toBe(true);
    expect(await adapters.configurations.listConfigurations()).toEqual([]);
  });
});

testDynamoAdapters('pages', (adapters) => {
  it('reads many pages in batches of 100 and skips the missing ones', async () => {
    // Prepare
    const ids = Array.from({ length: 150 }, (_, index) => `page-${String(index).padStart(3, '0')}`);
    for (const pageId of ids) await adapters.pages.putPage(pageSchema.parse({ pageId, language: 'en' }));
    adapters.counter.reset();

    // Act
    const found = await adapters.pages.getPages([...ids, 'page-missing', 'page-000']);

    // Assess
    expect(found.size).toBe(150);
    expect(found.get('page-149')?.pageId).toBe('page-149');
    expect(found.has('page-missing')).toBe(false);
    expect(adapters.counter.snapshot()).toEqual({ 'DynamoDB:BatchGetItem': 2 });
  });

  it('lists pages with a cursor and refuses a forged one', async () => {
    // Act
    const first = await adapters.pages.listPages({ limit: 100 });
    const second = await adapters.pages.listPages({ limit: 100, cursor: first.cursor ?? '' });
    const error = await errorOf(
      adapters.pages.listPages({
        limit: 10,
        cursor: Buffer.from(JSON.stringify({ pk: 'USERS', sk: 'USER#alice' })).toString('base64url'),
      }),
    );

    // Assess
    const ids = [...first.pages, ...second.pages].map((page) => page.pageId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => id.startsWith('page-')).length).toBe(150);
    expect(error.field).toBe('cursor');
  });

  it('sets absolute metadata values and stamps who and when', async () => {
    // Prepare
    await adapters.pages.putPage(
      pageSchema.parse({ pageId: 'home', language: 'en', title: 'Old', body: 'Welcome' }),
    );

    // Act
    const written = await adapters.pages.updateMetadata('home', { title: 'New', keywords: 'a, b' }, 'alice');

    // Assess
    expect(written).toEqual(
      pageSchema.parse({
        pageId: 'home',
        language: 'en',
        title: 'New',
        keywords: 'a, b',
        body: 'Welcome',
        updatedAt: '2026-03-01T12:00:00.000Z',
        updatedBy: 'alice',
      }),
    );
    expect(await adapters.pages.getPage('home')).toEqual(written);
  });

  it('leaves every field the patch does not name as it was', async () => {
    // Prepare
    const page = pageSchema.parse({
      pageId: 'full',
      language: 'en',
      title: 'Title',
      description: 'Hand-written description',
      keywords: 'k1, k2',
      author: 'Ann',
      ogTitle: 'OG title',
      ogDescription: 'OG description',
    });
    await adapters.pages.putPage(page);

    // Act
    const written = await adapters.pages.updateMetadata('full', { description: 'New' }, 'alice');

    // Assess
    expect(written).toMatchObject({
      ...page,
      description: 'New',
      updatedBy: 'alice',
      updatedAt: expect.any(String),
    });
  });

  it('answers a missing page with the neutral text and refuses fields it may not set', async () => {
    // Act
    const missing = await errorOf(adapters.pages.updateMetadata('nowhere', { title: 'x' }, 'alice'));
    const forbidden = await errorOf(
      adapters.pages.updateMetadata('home', { body: 'x' } as unknown as { title: string }, 'alice'),
    );

    // Assess
    expect(missing.code).toBe('not-found');
    expect(missing.message).toBe(PAGE_NOT_AVAILABLE);
    expect(await adapters.pages.getPage('nowhere')).toBeUndefined();
    expect(forbidden.code).toBe('bad-request');
    expect((await adapters.pages.getPage('home'))?.body).toBe('Welcome');
  });
});
