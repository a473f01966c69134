import { beforeAll, describe, expect, it } from 'vitest';
import { synthesizeTestStack } from './synthesize-test-stack.js';

/** The dashboard's Approvers row (issue #25; docs/runbook.md, "Approver analytics"). */
describe('the approvers on the dashboard', () => {
  let dashboardBody: string;

  beforeAll(() => {
    const synthesized = synthesizeTestStack();
    const [dashboard] = Object.values(synthesized.template.findResources('AWS::CloudWatch::Dashboard'));
    dashboardBody = JSON.stringify(dashboard?.Properties.DashboardBody);
  });

  it('graphs each approver metric per approver group: response time p50, and the flags averaged as shares', () => {
    // Act
    const searches = [
      ...dashboardBody.matchAll(
        /SEARCH\('\{Countersign,approverGroup,service\} MetricName=\\+"(\w+)\\+" [^']*', '(\w+)', 3600\)/g,
      ),
    ].map((match) => [match[1], match[2]]);

    // Assess
    expect(searches).toEqual([
      ['ApproverResponseTime', 'p50'],
      ['QuickApprovals', 'Average'],
      ['ApproverRejects', 'Average'],
      ['ApproverEdits', 'Average'],
    ]);
    expect(dashboardBody).toContain('#approver-analytics');
  });
});
