import { describe, expect, it } from 'vitest';
import { bodyOf } from '../support/api-answers.js';
import { settle, startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';

/** GET /admin/approver-analytics and the approver metrics, on `npm start`. */
describe('approver analytics', () => {
  const runtime = useTestRuntime();

  it('counts each answer per group and per approver for admins, with its metrics, and refuses anyone else', async () => {
    // Prepare: one approval, one rejection, one edit, on cards routed to every approver
    for (const [approver, decision, input] of [
      ['approver', 'approve', "Set the title of page 12 to 'Counted'"],
      ['reviewer', 'reject', "Set the title of page 14 to 'Refused'"],
    ] as const) {
      const { runId, view } = await startRunAndSettle(runtime, input);
      await runtime
        .client(approver)
        .decideRun({ path: { id: runId }, body: { digest: view.digest, decision } });
      await settle(runtime, runId, 'editor', view.turn);
    }
    // and one edit (issue #25): the edited call waits on a fresh card
    const { runId, view } = await startRunAndSettle(runtime, "Set the title of page 12 to 'Typo'");
    const edited = await runtime.client('approver').decideRun({
      path: { id: runId },
      body: {
        digest: view.digest,
        decision: 'edit',
        edits: [{ index: 0, arguments: { pageId: '12', title: 'Typo fixed' } }],
      },
    });
    expect(bodyOf(edited, 200)).toMatchObject({ decision: 'edit' });
    await settle(runtime, runId, 'editor', view.turn);

    // Act
    const asAdmin = await runtime
      .client('admin')
      .getApproverAnalytics({ query: { days: 1, quickSeconds: 3600 } });
    const asApprover = await runtime.sendRaw('GET', '/admin/approver-analytics', { as: 'approver' });
    const badDays = await runtime.sendRaw('GET', '/admin/approver-analytics?days=0', { as: 'admin' });

    // Assess
    expect(asAdmin.status).toBe(200);
    expect(bodyOf(asAdmin)).toMatchObject({
      responses: 3,
      truncated: false,
      quickSeconds: 3600,
      groups: [
        {
          group: '(every approver)',
          responses: 3,
          approvals: 1,
          rejects: 1,
          rejectRate: 0.333,
          edits: 1,
          editShare: 0.333,
          quickApprovals: 1,
          quickApprovalShare: 1,
        },
      ],
      approvers: [
        { approver: 'approver', approvals: 1, rejects: 0, edits: 1, editShare: 0.5 },
        { approver: 'reviewer', approvals: 0, rejects: 1, edits: 0 },
      ],
    });
    expect(asApprover.status).toBe(403);
    expect(badDays.status).toBe(400);
    expect(badDays.text).toContain('days');
    const approverMetrics = runtime.metricLines.filter((line) => line.includes('"ApproverResponseTime"'));
    expect(approverMetrics.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(approverMetrics[0] ?? '{}')).toMatchObject({ approverGroup: '(every approver)' });
  });
});
