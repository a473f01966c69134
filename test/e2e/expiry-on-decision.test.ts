import { describe, expect, it } from 'vitest';
import { bodyOf } from '../support/api-answers.js';
import { startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';

describe('a decision that arrives after the approval window', () => {
  const runtime = useTestRuntime();

  it('is refused with 410 and the run shows expired at once, before the wait itself times out', async () => {
    // Prepare: a waiting run, then the clock eight days on (the window is seven).
    const { runId, view } = await startRunAndSettle(runtime, "Set the title of page 14 to 'Zu spät'");
    const clock = runtime.dependencies.clock;
    runtime.dependencies.clock = { now: () => new Date(Date.now() + 8 * 86_400_000) };

    try {
      // Act
      const decision = await runtime
        .client('approver')
        .decideRun({ path: { id: runId }, body: { digest: view.digest, decision: 'approve' } });
      const after = await runtime.client('editor').getRun({ path: { id: runId } });

      // Assess
      expect(decision.status).toBe(410);
      expect(bodyOf(after).status).toBe('expired');
      expect(bodyOf(after).failureReason).toMatch(/approval window/);
      expect((await runtime.dependencies.pages.getPage('14'))?.title).toBe('Impressum');
      const inbox = await runtime.client('approver').listInbox();
      expect(bodyOf(inbox).cards.map((card: { runId: string }) => card.runId)).not.toContain(runId);
    } finally {
      runtime.dependencies.clock = clock;
    }
  });
});
