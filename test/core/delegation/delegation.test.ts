import { describe, expect, it } from 'vitest';
import { clearAway, setAway } from '../../../lambdas/core/delegation/set-away.js';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import {
  createHarness,
  OWNER,
  person,
  refusalOf,
  startPausedRun,
  type UseCaseHarness,
} from '../runs/use-case-harness.js';

// Two finance approvers who may be away, their delegate outside finance, and an admin.
const ALICE = person('alice', { grants: ['agent_approve'], groups: ['finance'] });
const BEN = person('ben', { grants: ['agent_approve'], groups: ['finance'] });
const DAVE = person('dave', { grants: ['agent_approve'], groups: ['ops'] });
const CARL = person('carl', { grants: ['agent_approve'], groups: ['finance'] });
const ADMIN = person('root', { grants: ['admin'] });
const OWNER_IN_FINANCE = person(OWNER.userId, {
  grants: ['agent_run', 'agent_approve'],
  groups: ['finance'],
});
const UNTIL = '2026-03-08T10:00:00.000Z';

function financeHarness(options: Parameters<typeof createHarness>[0] = {}): UseCaseHarness {
  return createHarness({
    ...options,
    configuration: { approverGroups: ['finance'], ...options.configuration },
    users: options.users ?? [OWNER_IN_FINANCE, ALICE, BEN, DAVE, CARL, ADMIN],
  });
}

async function currentUser(harness: UseCaseHarness, userId: string): Promise<UserProfile> {
  const user = await harness.dependencies.users.getUser(userId);
  if (!user) throw new Error(`no user ${userId}`);
  return user;
}

async function away(harness: UseCaseHarness, delegator: UserProfile, delegate: string): Promise<void> {
  await setAway(harness.dependencies, delegator, delegator.userId, { delegate, until: UNTIL });
}

async function cardsOf(harness: UseCaseHarness, userId: string) {
  return (await listInbox(harness.dependencies, await currentUser(harness, userId), { limit: 100 })).cards;
}

describe('setting an approver away', () => {
  it('names the delegate on the approver’s record and points the delegate at them', async () => {
    // Act
    const harness = financeHarness();
    const outcome = await setAway(harness.dependencies, ALICE, 'alice', {
      delegate: 'dave',
      until: '2026-03-08T12:00:00+02:00',
    });

    // Assess
    expect(outcome).toEqual({
      userId: 'alice',
      away: { delegate: 'dave', until: UNTIL, setBy: 'alice', setAt: '2026-03-01T10:00:00.000Z' },
    });
    expect((await currentUser(harness, 'alice')).away?.delegate).toBe('dave');
    expect((await currentUser(harness, 'dave')).delegatedBy).toEqual(['alice']);
  });

  it('lets an admin set anyone away and move the delegation to another delegate', async () => {
    // Prepare
    const harness = financeHarness();
    await away(harness, ALICE, 'dave');

    // Act
    await setAway(harness.dependencies, ADMIN, 'alice', { delegate: 'carl', until: UNTIL });

    // Assess
    expect((await currentUser(harness, 'alice')).away).toMatchObject({ delegate: 'carl', setBy: 'root' });
    expect((await currentUser(harness, 'carl')).delegatedBy).toEqual(['alice']);
    expect((await currentUser(harness, 'dave')).delegatedBy).toBeUndefined();
  });

  it.each([
    ['another approver’s', BEN, 'alice', { delegate: 'dave', until: UNTIL }, 'forbidden', undefined],
    [
      'a past end',
      ALICE,
      'alice',
      { delegate: 'dave', until: '2026-03-01T09:00:00Z' },
      'bad-request',
      'body.until',
    ],
    [
      'an end over a year ahead',
      ALICE,
      'alice',
      { delegate: 'dave', until: '2027-03-02T10:00:00Z' },
      'bad-request',
      'body.until',
    ],
    [
      'oneself as delegate',
      ALICE,
      'alice',
      { delegate: 'alice', until: UNTIL },
      'bad-request',
      'body.delegate',
    ],
    [
      'a delegate without a record',
      ALICE,
      'alice',
      { delegate: 'ghost', until: UNTIL },
      'bad-request',
      'body.delegate',
    ],
    [
      'a delegate who may not approve',
      ALICE,
      'alice',
      { delegate: OWNER.userId, until: UNTIL },
      'bad-request',
      'body.delegate',
    ],
  ])('refuses %s away, naming what is wrong', async (_label, principal, userId, request, code, field) => {
    // Prepare
    const harness = financeHarness({
      users: [ALICE, BEN, DAVE, person(OWNER.userId, { grants: ['agent_run'] })],
    });

    // Act
    const refusal = await refusalOf(setAway(harness.dependencies, principal, userId, request));

    // Assess
    expect(refusal.code).toBe(code);
    expect(refusal.field).toBe(field);
    expect((await currentUser(harness, 'alice')).away).toBeUndefined();
  });

  it('clears an away: the delegate decides nothing more for them', async () => {
    // Prepare
    const harness = financeHarness();
    await away(harness, ALICE, 'dave');

    // Act
    const outcome = await clearAway(harness.dependencies, ALICE, 'alice');

    // Assess
    expect(outcome).toEqual({ userId: 'alice' });
    expect((await currentUser(harness, 'alice')).away).toBeUndefined();
    expect((await currentUser(harness, 'dave')).delegatedBy).toBeUndefined();
  });
});

describe('deciding acting for an approver who is away', () => {
  it('brings the delegate the cards routed to the one away, marked acting for them', async () => {
    // Prepare
    const harness = financeHarness();
    const paused = await startPausedRun(harness, OWNER_IN_FINANCE);
    const before = await cardsOf(harness, 'dave');
    await away(harness, ALICE, 'dave');

    // Act
    const [card] = await cardsOf(harness, 'dave');

    // Assess
    expect(before).toEqual([]);
    expect(card).toMatchObject({ runId: paused.runId, actingFor: 'alice' });
    expect(card && 'approveRefusal' in card ? card.approveRefusal : undefined).toBeUndefined();
  });

  it('records who decided and for whom, and resumes the run once', async () => {
    // Prepare
    const harness = financeHarness();
    const paused = await startPausedRun(harness, OWNER_IN_FINANCE);
    await away(harness, ALICE, 'dave');
    const [card] = await cardsOf(harness, 'dave');
    const digest = card && 'digest' in card ? card.digest : '';

    // Act
    const outcome = await decideRun(harness.dependencies, DAVE, paused.runId, {
      digest,
      decision: 'approve',
      actingFor: 'alice',
    });

    // Assess
    expect(outcome).toMatchObject({ kind: 'decided', decision: 'approve' });
    expect(await harness.runs.getDecision(paused.runId, paused.turn)).toMatchObject({
      decidedBy: 'dave',
      actingFor: 'alice',
    });
    expect(harness.executions.resumed).toHaveLength(1);
  });

  it('refuses acting for someone who did not name the delegate, or whose away ended', async () => {
    // Prepare
    const harness = financeHarness();
    const paused = await startPausedRun(harness, OWNER_IN_FINANCE);
    await away(harness, ALICE, 'dave');
    const [card] = await cardsOf(harness, 'dave');
    const digest = card && 'digest' in card ? card.digest : '';
    const notNamed = await refusalOf(
      decideRun(harness.dependencies, CARL, paused.runId, {
        digest,
        decision: 'approve',
        actingFor: 'alice',
      }),
    );
    const inOwnRight = await refusalOf(
      decideRun(harness.dependencies, DAVE, paused.runId, { digest, decision: 'approve' }),
    );
    harness.clock.advance(8 * 86_400_000);

    // Act
    const ended = await refusalOf(
      decideRun(harness.dependencies, DAVE, paused.runId, { digest, decision: 'reject', actingFor: 'alice' }),
    );

    // Assess
    expect(notNamed).toMatchObject({ code: 'forbidden', message: TEXTS.notActingFor('alice') });
    expect(inOwnRight.code).toBe('not-found');
    expect(ended).toMatchObject({ code: 'forbidden', message: TEXTS.notActingFor('alice') });
    expect(harness.executions.resumed).toEqual([]);
  });

  it('never gives the delegate authority the one away lacks, nor the one away authority the delegate lacks', async () => {
    // Prepare: alice may not release page writes; erin's delegate frank may not either
    const limitedAlice = person('alice', { grants: ['agent_approve'], groups: ['finance'], toolAccess: [] });
    const erin = person('erin', { grants: ['agent_approve'], groups: ['finance'] });
    const frank = person('frank', { grants: ['agent_approve'], groups: ['ops'], toolAccess: [] });
    const harness = financeHarness({ users: [OWNER_IN_FINANCE, limitedAlice, DAVE, erin, frank] });
    const paused = await startPausedRun(harness, OWNER_IN_FINANCE);
    await away(harness, limitedAlice, 'dave');
    await away(harness, erin, 'frank');
    const [daveCard] = await cardsOf(harness, 'dave');
    const digest = daveCard && 'digest' in daveCard ? daveCard.digest : '';

    // Act
    const forAlice = await refusalOf(
      decideRun(harness.dependencies, DAVE, paused.runId, {
        digest,
        decision: 'approve',
        actingFor: 'alice',
      }),
    );
    const byFrank = await refusalOf(
      decideRun(harness.dependencies, frank, paused.runId, {
        digest,
        decision: 'approve',
        actingFor: 'erin',
      }),
    );

    // Assess
    expect(daveCard && 'approveRefusal' in daveCard ? daveCard.approveRefusal : '').toBe(
      TEXTS.gateActingFor('alice', TEXTS.gateToolRefused('update_page_metadata')),
    );
    expect(forAlice).toMatchObject({
      code: 'forbidden',
      message: TEXTS.gateActingFor('alice', TEXTS.gateToolRefused('update_page_metadata')),
    });
    expect(byFrank).toMatchObject({
      code: 'forbidden',
      message: TEXTS.gateToolRefused('update_page_metadata'),
    });
  });

  it('sees through delegation under four-eyes: no owner approves their own run as a delegate, or by one', async () => {
    // Prepare: the owner is alice's delegate, and the owner (away too) named dave theirs
    const harness = financeHarness({ configuration: { options: { fourEyes: true } } });
    const paused = await startPausedRun(harness, OWNER_IN_FINANCE);
    await away(harness, ALICE, OWNER.userId);
    await away(harness, await currentUser(harness, OWNER.userId), 'dave');
    const digest = (await harness.runs.getCard(paused.runId))?.digest ?? '';

    // Act
    const ownerAsDelegate = await refusalOf(
      decideRun(harness.dependencies, OWNER_IN_FINANCE, paused.runId, {
        digest,
        decision: 'approve',
        actingFor: 'alice',
      }),
    );
    const delegateOfOwner = await refusalOf(
      decideRun(harness.dependencies, DAVE, paused.runId, {
        digest,
        decision: 'approve',
        actingFor: OWNER.userId,
      }),
    );

    // Assess
    expect(ownerAsDelegate).toMatchObject({ code: 'forbidden', message: TEXTS.gateFourEyes });
    expect(delegateOfOwner).toMatchObject({
      code: 'forbidden',
      message: TEXTS.gateActingFor(OWNER.userId, TEXTS.gateFourEyes),
    });
  });

  it('counts a delegate acting for two people once toward k-of-n', async () => {
    // Prepare
    const harness = financeHarness({ configuration: { options: { requiredApprovals: 2 } } });
    const paused = await startPausedRun(harness, OWNER_IN_FINANCE);
    await away(harness, ALICE, 'dave');
    await away(harness, BEN, 'dave');
    const digest = (await harness.runs.getCard(paused.runId))?.digest ?? '';

    // Act
    const forAlice = await decideRun(harness.dependencies, DAVE, paused.runId, {
      digest,
      decision: 'approve',
      actingFor: 'alice',
    });
    const forBen = await decideRun(harness.dependencies, DAVE, paused.runId, {
      digest,
      decision: 'approve',
      actingFor: 'ben',
    });
    const byCarl = await decideRun(harness.dependencies, CARL, paused.runId, { digest, decision: 'approve' });

    // Assess
    expect(forAlice).toMatchObject({ kind: 'approval-recorded', approvals: { count: 1, required: 2 } });
    expect(forBen).toMatchObject({
      kind: 'approval-recorded',
      approvals: {
        count: 1,
        approvedBy: ['dave'],
        delegatedApprovals: [{ approver: 'dave', actingFor: 'alice' }],
      },
    });
    expect(byCarl).toMatchObject({ kind: 'decided' });
    expect(await harness.runs.getDecision(paused.runId, paused.turn)).toMatchObject({
      decidedBy: 'carl',
      approvedBy: ['carl', 'dave'],
      delegatedApprovals: [{ approver: 'dave', actingFor: 'alice' }],
    });
  });

  it('lets a delegated approval lapse when the delegation ended before the K-th approval', async () => {
    // Prepare
    const harness = financeHarness({ configuration: { options: { requiredApprovals: 2 } } });
    const paused = await startPausedRun(harness, OWNER_IN_FINANCE);
    await away(harness, ALICE, 'dave');
    const digest = (await harness.runs.getCard(paused.runId))?.digest ?? '';
    await decideRun(harness.dependencies, DAVE, paused.runId, {
      digest,
      decision: 'approve',
      actingFor: 'alice',
    });
    await clearAway(harness.dependencies, ALICE, 'alice');

    // Act
    const second = await decideRun(harness.dependencies, CARL, paused.runId, { digest, decision: 'approve' });

    // Assess
    expect(second).toMatchObject({
      kind: 'approval-recorded',
      approvals: { count: 1, approvedBy: ['carl'], lapsedApprovers: ['dave'] },
    });
    expect(harness.executions.resumed).toEqual([]);
  });
});
