import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readableDecisionRecordSchema } from '../../../lambdas/core/approvals/decision-record.js';
import { configurationSchema } from '../../../lambdas/core/configurations.js';
import { policyProposalSchema } from '../../../lambdas/core/policy/policy-replay.js';
import { type ReplayPage, replayRecordedDecisions } from '../../../lambdas/core/policy/replay-decisions.js';
import { readableRunRecordSchema } from '../../../lambdas/core/run-record.js';
import { InMemoryConfigurationRepository } from '../../support/in-memory-configuration-repository.js';
import { InMemoryUserDirectory } from '../../support/in-memory-user-directory.js';

/** Recorded decisions, runs, users and configurations (test/fixtures/policy-replay/), as stored. */
const recorded = JSON.parse(
  readFileSync(new URL('../../fixtures/policy-replay/recorded-decisions.json', import.meta.url), 'utf8'),
) as { decisions: unknown[]; runs: unknown[]; users: never[]; configurations: unknown[] };

async function replay(proposal: unknown): Promise<{ pages: ReplayPage[]; byRun: Record<string, unknown[]> }> {
  const decisions = recorded.decisions.map((decision) => readableDecisionRecordSchema.parse(decision));
  const runs = new Map(
    recorded.runs.map((run) => readableRunRecordSchema.parse(run)).map((run) => [run.runId, run]),
  );
  const dependencies = {
    // Two pages, as a Scan would give them.
    decisions: {
      async *pages() {
        yield decisions.slice(0, 2);
        yield decisions.slice(2);
      },
    },
    runs: { getRunRecord: async (runId: string) => runs.get(runId) },
    configurations: new InMemoryConfigurationRepository({
      configurations: recorded.configurations.map((configuration) =>
        configurationSchema.parse(configuration),
      ),
    }),
    users: new InMemoryUserDirectory(recorded.users),
  };
  const pages: ReplayPage[] = [];
  for await (const page of replayRecordedDecisions(dependencies, policyProposalSchema.parse(proposal), {
    since: new Date('2026-01-01T00:00:00.000Z'),
    pageSize: 2,
  })) {
    pages.push(page);
  }
  const byRun = Object.fromEntries(
    pages.flatMap((page) => page.replayed).map((decision) => [decision.runId, decision.findings]),
  );
  return { pages, byRun };
}

describe('policy replay', () => {
  it('finds nothing when the proposal is the policy of today, and leaves out decisions whose run is gone', async () => {
    // Act
    const { pages, byRun } = await replay({});

    // Assess
    expect(pages.map((page) => page.withoutRun)).toEqual([0, 1]);
    expect(byRun).toEqual({ 'run-alone': [], 'run-self': [], 'run-two': [], 'run-finance': [] });
  });

  it('a four-eyes floor refuses the owner’s own approval and counts the owner out of a k-of-n turn', async () => {
    // Act
    const { byRun } = await replay({ floor: { fourEyes: 'always' } });

    // Assess
    expect(byRun).toEqual({
      'run-alone': [],
      'run-self': [{ kind: 'refused', reason: 'four-eyes' }],
      'run-two': [{ kind: 'needed-more-approvers', had: 1, required: 2 }],
      'run-finance': [],
    });
  });

  it('a floor of two approvers, or four-eyes for one tool, names exactly the approvals it would have held', async () => {
    // Act
    const twoApprovers = await replay({ floor: { requiredApprovals: 2 } });
    const keywordsTool = await replay({ floor: { fourEyesTools: ['append_page_keywords'] } });

    // Assess: a rejection needs no approvers
    expect(twoApprovers.byRun).toEqual({
      'run-alone': [{ kind: 'needed-more-approvers', had: 1, required: 2 }],
      'run-self': [{ kind: 'needed-more-approvers', had: 1, required: 2 }],
      'run-two': [],
      'run-finance': [],
    });
    expect(keywordsTool.byRun).toEqual({
      'run-alone': [],
      'run-self': [{ kind: 'refused', reason: 'four-eyes' }],
      'run-two': [],
      'run-finance': [],
    });
  });

  it('a record gate marks each approval taken without it, as a check a replay cannot run', async () => {
    // Act
    const { byRun } = await replay({ floor: { decisionGate: 'record' } });

    // Assess
    expect(byRun['run-alone']).toEqual([{ kind: 'record-check' }]);
    expect(byRun['run-two']).toEqual([{ kind: 'record-check' }]);
    expect(byRun['run-finance']).toEqual([]);
  });

  it('routing a configuration elsewhere names where each card went, where it would go, and a decider outside', async () => {
    // Act
    const { byRun } = await replay({
      configurations: { ledger: { approverGroups: ['treasury'] }, pages: { approverGroups: ['finance'] } },
    });

    // Assess: ana is in finance, olivia in no group
    expect(byRun['run-finance']).toEqual([
      { kind: 'other-group', from: ['finance'], to: ['treasury'], deciderOutside: true },
    ]);
    expect(byRun['run-alone']).toEqual([
      { kind: 'other-group', from: [], to: ['finance'], deciderOutside: false },
    ]);
    expect(byRun['run-self']).toEqual([
      { kind: 'other-group', from: [], to: ['finance'], deciderOutside: true },
    ]);
    expect(byRun['run-two']).toEqual([]);
  });

  it('loosens what a proposal loosens: a configuration brought down to one approver no longer needs two', async () => {
    // Act
    const { byRun } = await replay({
      floor: { fourEyes: 'always' },
      configurations: { 'pages-two': { requiredApprovals: 1 } },
    });

    // Assess: bo alone still counts once the owner is out
    expect(byRun['run-two']).toEqual([]);
  });

  it('refuses a proposal with a misspelt or impossible field, naming it', () => {
    // Act
    const misspelt = policyProposalSchema.safeParse({ configurations: { pages: { four_eyes: true } } });
    const impossible = policyProposalSchema.safeParse({ floor: { requiredApprovals: 11 } });

    // Assess
    expect(misspelt.success).toBe(false);
    expect(JSON.stringify(misspelt.error?.issues)).toContain('four_eyes');
    expect(impossible.success).toBe(false);
  });
});
