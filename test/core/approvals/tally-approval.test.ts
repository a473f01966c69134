import { describe, expect, it } from 'vitest';
import { countApprovals } from '../../../lambdas/core/approvals/tally-approval.js';

const POLICY = { fourEyes: true, requiredApprovals: 2 };

describe('counting k-of-n approvals', () => {
  it('counts together only approvers who made the same per-call choices', () => {
    // Prepare
    const records = {
      approvedBy: ['ana', 'ben', 'carl', 'dora'],
      approvalContents: [
        { approver: 'carl', content: 'sha256:reject-1' },
        { approver: 'dora', content: 'sha256:reject-1' },
      ],
    };

    // Act
    const everyCall = countApprovals(records, POLICY, 'olga');
    const partial = countApprovals(records, POLICY, 'olga', 'sha256:reject-1');

    // Assess
    expect(everyCall).toEqual({
      count: 2,
      required: 2,
      approvedBy: ['ana', 'ben'],
      differingApprovers: ['carl', 'dora'],
    });
    expect(partial).toMatchObject({
      count: 2,
      approvedBy: ['carl', 'dora'],
      differingApprovers: ['ana', 'ben'],
    });
  });

  it('counts neither the owner nor a delegate acting for the owner under four-eyes', () => {
    // Act
    const tally = countApprovals(
      { approvedBy: ['olga', 'dave', 'ana'], delegatedApprovals: [{ approver: 'dave', actingFor: 'olga' }] },
      POLICY,
      'olga',
    );
    const withoutFourEyes = countApprovals(
      { approvedBy: ['olga', 'dave'], delegatedApprovals: [{ approver: 'dave', actingFor: 'olga' }] },
      { fourEyes: false, requiredApprovals: 2 },
      'olga',
    );

    // Assess
    expect(tally).toEqual({ count: 1, required: 2, approvedBy: ['ana'] });
    expect(withoutFourEyes.count).toBe(2);
  });
});
