import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import { settle, useTestRuntime } from '../support/local-runtime.js';
import { decide, statusOf, waitingRun } from './approvers-support.js';

const STALE = 'The pending action changed since you viewed it — please re-review.';

describe('approver decisions and the inbox over HTTP: every status code', () => {
  const runtime = useTestRuntime();

  describe('409: the reviewed turn and the decision already made', () => {
    it('refuses a stale digest and a missing digest with the re-review message, and the run keeps waiting', async () => {
      // Prepare
      const { runId, digest, turn } = await waitingRun(runtime, "Set the keywords of page 12 to 'stale'");
      const staleDigest = `${digest.slice(0, -4)}0000`;

      // Act
      const stale = await decide(runtime, runId, { digest: staleDigest, decision: 'approve' });
      const missing = await decide(runtime, runId, { decision: 'approve' });
      const emptyDigest = await decide(runtime, runId, { digest: '', decision: 'reject' });

      // Assess
      for (const response of [stale, missing, emptyDigest]) {
        expect(response.status).toBe(409);
        expect(refusalOf(response).error.message).toBe(STALE);
      }
      expect(await statusOf(runtime, runId)).toBe('waiting');
      expect(await runtime.dependencies.runs.getDecision(runId, turn)).toBeUndefined();
    });

    it('answers reject after approve with 409, and the same approval again with the same 200', async () => {
      // Prepare
      const { runId, digest, turn } = await waitingRun(
        runtime,
        "Set the keywords of page 12 to 'approved once'",
      );
      const first = await decide(runtime, runId, { digest, decision: 'approve' });
      await settle(runtime, runId, 'admin', turn);

      // Act
      const reject = await decide(runtime, runId, { digest, decision: 'reject' });
      const again = await decide(runtime, runId, { digest, decision: 'approve' });

      // Assess
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ kind: 'decided', runId, turn, decision: 'approve', repeated: false });
      expect(reject.status).toBe(409);
      expect(refusalOf(reject).error.message).toBe(TEXTS.alreadyDecided);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ...first.body, repeated: true });
    });

    it('answers approve after reject with 409, and the same rejection again with the same 200', async () => {
      // Prepare
      const { runId, digest, turn } = await waitingRun(
        runtime,
        "Set the keywords of page 12 to 'rejected once'",
      );
      const first = await decide(runtime, runId, { digest, decision: 'reject', reason: 'No.' });

      // Act
      const approve = await decide(runtime, runId, { digest, decision: 'approve' });
      const again = await decide(runtime, runId, { digest, decision: 'reject', reason: 'No.' });

      // Assess
      expect(first.status).toBe(200);
      expect(approve.status).toBe(409);
      expect(refusalOf(approve).error.message).toBe(TEXTS.alreadyDecided);
      expect(again.status).toBe(200);
      expect(bodyOf(again, 200).repeated).toBe(true);
      expect(bodyOf(again, 200).decision).toBe('reject');
      expect((await settle(runtime, runId, 'admin', turn)).status).toBe('completed');
    });
  });

  describe('rejection: what the model is told', () => {
    it('passes the reason on only where the configuration allows it', async () => {
      // Prepare
      const revealing = await waitingRun(runtime, "Set the keywords of page 12 to 'reveal'");
      const fourEyes = await waitingRun(runtime, "Set the keywords of page 12 to 'hide'", {
        as: 'admin',
        configurationId: 'demo-four-eyes',
      });

      // Act
      await decide(runtime, revealing.runId, {
        digest: revealing.digest,
        decision: 'reject',
        reason: 'Reason-for-the-model',
      });
      await decide(runtime, fourEyes.runId, {
        digest: fourEyes.digest,
        decision: 'reject',
        reason: 'Reason-kept-from-the-model',
      });
      const revealed = await settle(runtime, revealing.runId, 'admin', revealing.turn);
      const hidden = await settle(runtime, fourEyes.runId, 'admin', fourEyes.turn);

      // Assess
      const denial = TEXTS.toolDenied('update_page_metadata');
      expect(revealed.transcript.finalAnswer).toContain(denial);
      expect(revealed.transcript.finalAnswer).toContain('Reason-for-the-model');
      expect(hidden.transcript.finalAnswer).toContain(denial);
      expect(hidden.transcript.finalAnswer).not.toContain('Reason-kept-from-the-model');
    });
  });
});
