import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyOf } from '../support/api-answers.js';
import {
  type ResponseJson,
  removeTestData,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import { demoUser } from './approvers-support.js';

const writesConfiguration = <Groups>(configurationId: string, approverGroups: Groups) => ({
  configurationId,
  label: `Writes for ${configurationId}`,
  provider: 'scripted' as const,
  model: 'scripted-v1',
  allowedTools: ['get_page', 'update_page_metadata'],
  approverGroups,
});

describe('cards routed to approver groups (issue #16)', () => {
  let runtime: TestRuntime;
  let financeRun: string;
  let legalRun: string;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    // Two approvers with the same rights, one in each group.
    await runtime.dependencies.users.putUser({ ...demoUser('approver'), groups: ['finance'] });
    await runtime.dependencies.users.putUser({ ...demoUser('reviewer'), groups: ['legal'] });
    for (const [configurationId, group] of [
      ['finance-writes', 'finance'],
      ['legal-writes', 'legal'],
    ] as const) {
      const put = await runtime.client('admin').putConfiguration({
        path: { id: configurationId },
        body: writesConfiguration(configurationId, [group]),
      });
      expect(put.status).toBe(200);
    }
    financeRun = (
      await startRunAndSettle(runtime, "Set the title of page 12 to 'Finance'", {
        configurationId: 'finance-writes',
      })
    ).runId;
    legalRun = (
      await startRunAndSettle(runtime, "Set the title of page 14 to 'Legal'", {
        configurationId: 'legal-writes',
      })
    ).runId;
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  const inboxOf = async (as: string): Promise<ResponseJson[]> => {
    const answer = await runtime.client(as).listInbox({ query: { limit: 100 } });
    expect(answer.status).toBe(200);
    return bodyOf(answer).cards;
  };
  const runIdsOf = (cards: ResponseJson[]) => cards.map((card: ResponseJson) => card.runId);

  it('reads an approver’s page with one query per shard of the approvers’ route and one batch of cards', async () => {
    // Prepare
    runtime.calls.reset();

    // Act
    const cards = await inboxOf('approver');
    const snapshot = runtime.calls.snapshot();

    // Assess: the 4 shards of the approvers' route (filtered on "finance" and the open cards),
    // the pre-sharding partition; the cards, then the read gate's pages; at most one KMS call
    // per card shown
    expect(snapshot['DynamoDB:Query']).toBe(5);
    expect(snapshot['DynamoDB:BatchGetItem']).toBe(2);
    expect(snapshot['KMS:Decrypt'] ?? 0).toBeLessThanOrEqual(cards.length);
  });

  it('lists each approver only the cards routed to their group, with the group on the card', async () => {
    // Act
    const finance = await inboxOf('approver');
    const legal = await inboxOf('reviewer');

    // Assess
    expect(runIdsOf(finance)).toContain(financeRun);
    expect(runIdsOf(finance)).not.toContain(legalRun);
    expect(runIdsOf(legal)).toContain(legalRun);
    expect(runIdsOf(legal)).not.toContain(financeRun);
    expect(finance.find((card: ResponseJson) => card.runId === financeRun).approverGroups).toEqual([
      'finance',
    ]);
  });

  it('lists both to an admin', async () => {
    // Act
    const cards = await inboxOf('admin');

    // Assess
    expect(runIdsOf(cards)).toEqual(expect.arrayContaining([financeRun, legalRun]));
  });

  it('answers a decision and a call read on another group’s card as on a card that does not exist', async () => {
    // Prepare
    const digest = (await inboxOf('reviewer')).find((card: ResponseJson) => card.runId === legalRun).digest;

    // Act
    const decision = await runtime
      .client('approver')
      .decideRun({ path: { id: legalRun }, body: { digest, decision: 'approve' } });
    const call = await runtime.client('approver').getCall({ path: { id: legalRun, index: 0 } });
    const unknown = await runtime
      .client('approver')
      .decideRun({ path: { id: 'run-that-never-was' }, body: { digest, decision: 'approve' } });

    // Assess
    expect(decision.status).toBe(404);
    expect(call.status).toBe(404);
    expect(decision.body).toEqual(unknown.body);
    expect((await runtime.dependencies.runs.getCard(legalRun))?.state).toBe('open');
  });

  it('lets a member of the group decide, and the card leaves every inbox', async () => {
    // Prepare
    const digest = (await inboxOf('approver')).find((card: ResponseJson) => card.runId === financeRun).digest;

    // Act
    const decision = await runtime
      .client('approver')
      .decideRun({ path: { id: financeRun }, body: { digest, decision: 'reject' } });

    // Assess
    expect(decision.status).toBe(200);
    expect(runIdsOf(await inboxOf('approver'))).not.toContain(financeRun);
    expect(runIdsOf(await inboxOf('admin'))).not.toContain(financeRun);
  });

  it('names the groups in the Run Awaiting Approval event', () => {
    // Act
    const events = runtime.notifications.filter((event) => [financeRun, legalRun].includes(event.runId));

    // Assess
    expect(events.map((event) => [event.runId, event.approverGroups])).toEqual([
      [financeRun, ['finance']],
      [legalRun, ['legal']],
    ]);
  });

  it.each([
    ['a group with a "#"', ['fin#ance']],
    ['an empty list', []],
    ['not a list', 'finance'],
  ])('refuses approverGroups that is %s with a 400 naming the field', async (_label, approverGroups) => {
    // Act
    // raw: approverGroups the body schema refuses, on purpose
    const put = await runtime.sendRaw('PUT', '/admin/configurations/bad-routing', {
      as: 'admin',
      body: writesConfiguration('bad-routing', approverGroups),
    });

    // Assess
    expect(put.status).toBe(400);
    expect(put.text).toContain('approverGroups');
  });
});
