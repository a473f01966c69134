import { describe, expect, it } from 'vitest';
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
      const decision = await runtime.sendRaw('POST', `/runs/${runId}/decision`, {
        as: 'approver',
        body: { digest: view.digest, decision: 'approve' },
      });
      const after = await runtime.sendRaw('GET', `/runs/${runId}`, { as: 'editor' });

      // Assess
      expect(decision.status).toBe(410);
      expect(after.json.status).toBe('expired');
      expect(after.json.failureReason).toMatch(/approval window/);
      expect((await runtime.dependencies.pages.getPage('14'))?.title).toBe('Impressum');
      const inbox = await runtime.sendRaw('GET', '/inbox', { as: 'approver' });
      expect(inbox.json.cards.map((card: { runId: string }) => card.runId)).not.toContain(runId);
    } finally {
      runtime.dependencies.clock = clock;
    }
  });
});
