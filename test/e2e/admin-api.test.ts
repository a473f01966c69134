import { describe, expect, it } from 'vitest';
import type { OperationId } from '../../lambdas/contract/routes.js';
import { DEMO_CONFIGURATIONS, DEMO_PAGES, DEMO_TASKS } from '../../lambdas/local/demo-data.js';
import { bodyOf, type RequestBody, refusalOf } from '../support/api-answers.js';
import { type ResponseJson, startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';

const SEEDED = 150;
const COLLECTIONS = ['users', 'configurations', 'tasks', 'pages', 'skills'] as const;
type Collection = (typeof COLLECTIONS)[number];

const idOf: Record<Collection, (item: ResponseJson) => string> = {
  users: (item) => item.userId,
  configurations: (item) => item.configurationId,
  tasks: (item) => item.taskId,
  pages: (item) => item.pageId,
  skills: (item) => item.identifier,
};

const LIST_OPERATIONS = {
  users: 'listUsers',
  configurations: 'listConfigurations',
  tasks: 'listTasks',
  pages: 'listPages',
  skills: 'listSkills',
} as const satisfies Record<Collection, OperationId>;

const numbered = (prefix: string) =>
  Array.from({ length: SEEDED }, (_, index) => `${prefix}-${String(index).padStart(3, '0')}`);

describe('the admin API: paged lists, deleting users, deletes that would strand waiting runs', () => {
  const runtime = useTestRuntime();

  async function seedEveryCollection(): Promise<Record<Collection, string[]>> {
    const { users, configurations, pages } = runtime.dependencies;
    const [demoConfiguration] = DEMO_CONFIGURATIONS;
    const [demoTask] = DEMO_TASKS;
    const [demoPage] = DEMO_PAGES;
    if (!demoConfiguration || !demoTask || !demoPage) throw new Error('demo data is missing');
    const seeded = {
      users: numbered('user'),
      configurations: numbered('configuration'),
      tasks: numbered('task'),
      pages: numbered('page'),
      skills: numbered('skill'),
    };
    for (const userId of seeded.users) {
      await users.putUser({
        userId,
        displayName: userId,
        grants: [],
        pageAccess: [],
        languageAccess: [],
        toolAccess: [],
      });
    }
    for (const configurationId of seeded.configurations)
      await configurations.putConfiguration({ ...demoConfiguration, configurationId });
    for (const taskId of seeded.tasks) await configurations.putTask({ ...demoTask, taskId });
    for (const pageId of seeded.pages) await pages.putPage({ ...demoPage, pageId });
    const files = seeded.skills.map((name) => ({
      path: `${name}/SKILL.md`,
      content: `---\nname: ${name}\ndescription: Skill ${name}. Use when testing.\n---\n# ${name}\n`,
    }));
    const ingest = await runtime
      .client('admin')
      .ingestSkills({ body: { source: 'upload', label: 'paged', files } });
    if (ingest.status !== 200) throw new Error(`ingest answered ${ingest.status}: ${ingest.text}`);
    return seeded;
  }

  /** Follows the cursor to the end; returns every id and the size of each page. */
  async function walk(collection: Collection, limit?: number) {
    const ids: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await runtime.client('admin')[LIST_OPERATIONS[collection]]({ query: { limit, cursor } });
      expect(page.status).toBe(200);
      // Read untyped: the five list bodies differ, and `idOf` names each one's key.
      const listed: ResponseJson = bodyOf(page);
      ids.push(...listed.items.map(idOf[collection]));
      pageSizes.push(listed.items.length);
      cursor = listed.cursor;
      expect(pageSizes.length).toBeLessThan(50);
    } while (cursor !== undefined);
    return { ids, pageSizes };
  }

  it('pages every admin list past 100 items with an opaque cursor, each item once', async () => {
    // Prepare
    const seeded = await seedEveryCollection();

    for (const collection of COLLECTIONS) {
      // Act
      const { ids, pageSizes } = await walk(collection);
      const small = await walk(collection, 40);

      // Assess
      expect(pageSizes[0]).toBe(100);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of seeded[collection]) expect(ids).toContain(id);
      expect(small.ids.sort()).toEqual([...ids].sort());
      expect(Math.max(...small.pageSizes)).toBe(40);
    }
  });

  it('refuses a forged cursor, a cursor of another list and a bad limit with a 400 naming the field', async () => {
    // Prepare
    const usersPage = await runtime.client('admin').listUsers({ query: { limit: 1 } });
    const usersCursor = (bodyOf(usersPage) as ResponseJson).cursor as string;
    const forgedKey = Buffer.from(JSON.stringify({ pk: 'RUN#x', sk: 'RUN' })).toString('base64url');

    // Act
    const cursorAnswers = await Promise.all([
      runtime.client('admin').listUsers({ query: { cursor: 'not-a-cursor' } }),
      runtime.client('admin').listUsers({ query: { cursor: forgedKey } }),
      runtime.client('admin').listConfigurations({ query: { cursor: usersCursor } }),
      runtime.client('admin').listPages({ query: { cursor: usersCursor } }),
      runtime.client('admin').listSkills({ query: { cursor: usersCursor } }),
    ]);
    const answers = await Promise.all([
      // raw: a limit out of range and an unknown query parameter, on purpose
      runtime.sendRaw('GET', '/admin/tasks?limit=0', { as: 'admin' }),
      runtime.sendRaw('GET', '/admin/tasks?limit=101', { as: 'admin' }),
      runtime.sendRaw('GET', '/admin/tasks?page=2', { as: 'admin' }),
    ]);

    // Assess
    expect(usersCursor).toBeTypeOf('string');
    for (const answer of cursorAnswers) {
      expect(answer.status).toBe(400);
      expect(refusalOf(answer).error.message).toContain('cursor');
    }
    for (const answer of answers) expect(answer.status).toBe(400);
    expect(answers[0]?.json.error.message).toContain('limit');
    expect(answers[2]?.json.error.message).toContain('page');
  });

  it('deletes a user record (admin only): 200 once, then 404', async () => {
    // Prepare
    const user: RequestBody<'putUser'> = { userId: 'leaving', displayName: 'Leaving', grants: ['agent_run'] };
    expect((await runtime.client('admin').putUser({ path: { id: 'leaving' }, body: user })).status).toBe(200);

    // Act
    const refused = await runtime.client('approver').deleteUser({ path: { id: 'leaving' } });
    const deleted = await runtime.client('admin').deleteUser({ path: { id: 'leaving' } });
    const read = await runtime.client('admin').getUser({ path: { id: 'leaving' } });
    const again = await runtime.client('admin').deleteUser({ path: { id: 'leaving' } });

    // Assess
    expect(refused.status).toBe(403);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: 'leaving' });
    expect(read.status).toBe(404);
    expect(again.status).toBe(404);
    expect(await runtime.dependencies.users.getUser('leaving')).toBeUndefined();
  });

  it('refuses (409, with the count) to delete a configuration or task that waiting runs use, until they are cancelled', async () => {
    // Prepare: two runs of the demo task wait for a decision
    const first = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'one'");
    const second = await startRunAndSettle(runtime, "Set the keywords of page 14 to 'two'");
    expect([first.view.status, second.view.status]).toEqual(['waiting', 'waiting']);

    // Act
    const taskRefused = await runtime.client('admin').deleteTask({ path: { id: 'page-metadata' } });
    const configurationRefused = await runtime
      .client('admin')
      .deleteConfiguration({ path: { id: 'demo-scripted' } });
    const unusedDeleted = await runtime
      .client('admin')
      .deleteConfiguration({ path: { id: 'demo-four-eyes' } });
    for (const run of [first, second]) {
      const cancelled = await runtime.client('admin').cancelRun({ path: { id: run.runId }, body: {} });
      expect(cancelled.status).toBe(200);
    }
    const taskDeleted = await runtime.client('admin').deleteTask({ path: { id: 'page-metadata' } });

    // Assess
    expect(taskRefused.status).toBe(409);
    expect(refusalOf(taskRefused).error.message).toContain('used by 2 waiting runs');
    expect(configurationRefused.status).toBe(409);
    expect(refusalOf(configurationRefused).error.message).toContain('used by 2 waiting runs');
    expect(unusedDeleted.status).toBe(200);
    expect(taskDeleted.status).toBe(200);
    expect(await runtime.dependencies.configurations.getTask('page-metadata')).toBeUndefined();
  });
});
