import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard, refusalOf } from '../support/api-answers.js';
import { type ResponseJson, settle, useTestRuntime } from '../support/local-runtime.js';
import { preparePeople, recordWritesAndDeliveries } from './approvers-support.js';

const UNTIL = () => new Date(Date.now() + 7 * 86_400_000).toISOString();

/** An approver with the rights the demo pages need, in `groups`; `agent_run` too for an owner. */
const person = (userId: string, groups: string[], grants: Array<'agent_run' | 'agent_approve'>) => ({
  userId,
  displayName: userId,
  grants,
  groups,
  pageAccess: ['12', '14', '20'],
  languageAccess: '*' as const,
  toolAccess: ['update_page_metadata'],
});

const financeConfiguration = (configurationId: string, options: Record<string, unknown> = {}) => ({
  configurationId,
  label: `Finance ${configurationId}`,
  provider: 'scripted' as const,
  model: 'scripted-v1',
  allowedTools: ['get_page', 'update_page_metadata'],
  approverGroups: ['finance'],
  options,
});

describe('delegation (issue #22, part 4)', () => {
  const runtime = useTestRuntime();
  /** Users and configurations once; each test names its own runs. */
  const { as, prepare } = preparePeople(
    runtime,
    [
      person('alice', ['finance'], ['agent_approve']),
      person('ben', ['finance'], ['agent_approve']),
      person('dave', ['ops'], ['agent_approve']),
      person('olga', ['finance'], ['agent_run', 'agent_approve']),
    ],
    [
      financeConfiguration('finance-writes'),
      financeConfiguration('finance-four-eyes', { fourEyes: true }),
      financeConfiguration('finance-two', { fourEyes: true, requiredApprovals: 2 }),
    ],
  );
  const startAsOlga = async (configurationId: string, title: string) => {
    await prepare();
    const started = await as('olga').startRun({
      body: { configurationId, input: `Set the title of page 12 to '${title}'` },
    });
    const runId = bodyOf(started).runId;
    return { runId, view: await settle(runtime, runId, 'admin') };
  };
  const inboxOf = async (userId: string): Promise<ResponseJson[]> =>
    bodyOf(await as(userId).listInbox({ query: { limit: 100 } })).cards;

  it('lets an approver set themself away, an admin set anyone, and nobody else; refusals name the field', async () => {
    // Prepare
    await prepare();
    const until = UNTIL();

    // Act
    const own = await as('alice').setAway({ path: { id: 'alice' }, body: { delegate: 'dave', until } });
    const byAdmin = await runtime
      .client('admin')
      .setAway({ path: { id: 'ben' }, body: { delegate: 'dave', until } });
    const someoneElse = await as('ben').setAway({ path: { id: 'alice' }, body: { delegate: 'ben', until } });
    const unknownDelegate = await as('alice').setAway({
      path: { id: 'alice' },
      body: { delegate: 'nobody', until },
    });
    const past = await as('alice').setAway({
      path: { id: 'alice' },
      body: { delegate: 'dave', until: '2020-01-01T00:00:00Z' },
    });
    const unknownField = await runtime.sendRaw('PUT', '/users/alice/away', {
      as: 'admin',
      body: { delegate: 'dave', until, reason: 'holiday' },
    });

    // Assess
    expect(bodyOf(own, 200)).toMatchObject({ userId: 'alice', away: { delegate: 'dave', setBy: 'alice' } });
    expect(bodyOf(byAdmin, 200)).toMatchObject({ userId: 'ben', away: { delegate: 'dave', setBy: 'admin' } });
    expect(someoneElse.status).toBe(403);
    expect(refusalOf(someoneElse).error.message).toBe(TEXTS.awayNotYours);
    expect(unknownDelegate.status).toBe(400);
    expect(refusalOf(unknownDelegate).error.field).toBe('body.delegate');
    expect(refusalOf(past).error).toMatchObject({ code: 'bad-request', field: 'body.until' });
    expect(unknownField.status).toBe(400);
    expect(unknownField.json.error.field).toBe('body.reason');
    const dave = bodyOf(await runtime.client('admin').getUser({ path: { id: 'dave' } })) as ResponseJson;
    expect(dave.delegatedBy).toEqual(['alice', 'ben']);
  });

  it('brings the delegate the cards of the one away, and records both when the delegate decides', async () => {
    // Prepare
    const { runId, view } = await startAsOlga('finance-writes', 'Delegated');
    const before = (await inboxOf('dave')).find((card) => card.runId === runId);

    // Act
    const decided = await as('dave').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve', actingFor: before?.actingFor },
    });

    // Assess
    expect(openedCard(before)).toMatchObject({ actingFor: 'alice', approverGroups: ['finance'] });
    expect(openedCard(before).approveRefusal).toBeUndefined();
    expect(bodyOf(decided, 200)).toMatchObject({ kind: 'decided', decision: 'approve' });
    expect(await runtime.dependencies.runs.getDecision(runId, view.turn)).toMatchObject({
      decidedBy: 'dave',
      actingFor: 'alice',
    });
    expect(runtime.logLines.some((line) => line.includes('"actingFor":"alice"'))).toBe(true);
  });

  it('sees through delegation under four-eyes: the owner may not approve as a delegate, nor their delegate for them', async () => {
    // Prepare: olga (the owner) is away naming dave; ben is away naming dave already
    await prepare();
    const until = UNTIL();
    await as('olga').setAway({ path: { id: 'olga' }, body: { delegate: 'dave', until } });
    const { runId, view } = await startAsOlga('finance-four-eyes', 'Four eyes');

    // Act
    const forOwner = await as('dave').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve', actingFor: 'olga' },
    });
    await runtime.client('admin').setAway({ path: { id: 'alice' }, body: { delegate: 'olga', until } });
    const ownerAsDelegate = await as('olga').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve', actingFor: 'alice' },
    });
    await runtime.client('admin').setAway({ path: { id: 'alice' }, body: { delegate: 'dave', until } });
    await as('olga').clearAway({ path: { id: 'olga' } });

    // Assess
    expect(forOwner.status).toBe(403);
    expect(refusalOf(forOwner).error.message).toBe(TEXTS.gateActingFor('olga', TEXTS.gateFourEyes));
    expect(ownerAsDelegate.status).toBe(403);
    expect(refusalOf(ownerAsDelegate).error.message).toBe(TEXTS.gateFourEyes);
    expect((await runtime.dependencies.runs.getCard(runId))?.state).toBe('open');
  });

  it('counts a delegate acting for two approvers at once as one approval, and writes once (k-of-n)', async () => {
    // Prepare
    const records = { pageWrites: [] as string[], deliveries: [] as string[] };
    recordWritesAndDeliveries(runtime, records);
    const { runId, view } = await startAsOlga('finance-two', 'Two of them');

    // Act: dave for alice and for ben at the same moment, then ben in his own right
    const [forAlice, forBen] = await Promise.all(
      ['alice', 'ben'].map((actingFor) =>
        as('dave').decideRun({
          path: { id: runId },
          body: { digest: view.digest, decision: 'approve', actingFor },
        }),
      ),
    );
    const byBen = await as('ben').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve' },
    });
    await settle(runtime, runId, 'admin', view.turn);

    // Assess
    for (const answer of [forAlice, forBen]) {
      expect(bodyOf(answer, 202)).toMatchObject({ approvals: { count: 1, approvedBy: ['dave'] } });
    }
    expect(bodyOf(byBen, 200)).toMatchObject({ kind: 'decided' });
    const record = await runtime.dependencies.runs.getDecision(runId, view.turn);
    expect(record?.approvedBy).toEqual(['ben', 'dave']);
    expect(record?.delegatedApprovals).toHaveLength(1);
    expect(records.pageWrites.filter((patch) => patch.includes('Two of them'))).toHaveLength(1);
    expect(records.deliveries).toEqual(['delivered']);
  });

  it('takes the cards back from the delegate once the approver is back', async () => {
    // Prepare
    const { runId, view } = await startAsOlga('finance-writes', 'Back again');

    // Act
    const cleared = await as('alice').clearAway({ path: { id: 'alice' } });
    const inbox = (await inboxOf('dave')).filter((card) => card.actingFor === 'alice');
    const refused = await as('dave').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve', actingFor: 'alice' },
    });

    // Assess
    expect(bodyOf(cleared, 200)).toEqual({ userId: 'alice' });
    expect(inbox).toEqual([]);
    expect(refused.status).toBe(403);
    expect(refusalOf(refused).error.message).toBe(TEXTS.notActingFor('alice'));
  });
});
