import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import {
  eventually,
  type ResponseJson,
  removeTestData,
  startRunAndSettle,
  type TestRuntime,
} from '../support/local-runtime.js';
import { decide, definitionWithApprovalTimeout, startRuntimeWithDefinition } from './approvers-support.js';

// The deployed ASL, with only AwaitApproval's TimeoutSeconds shortened: the state machine
// itself times the wait out (States.Timeout -> MarkExpired), as it does on AWS. The use cases
// get the same number as approvalTimeoutSeconds, so the card's expiresAt and the run's
// failure reason agree with the state machine. Either alone would be inconsistent: the
// setting alone never times the execution out, the patch alone leaves a 7-day expiresAt.
const APPROVAL_TIMEOUT_SECONDS = 4;

describe('a decision after the approval wait expired', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await startRuntimeWithDefinition({
      definition: definitionWithApprovalTimeout(APPROVAL_TIMEOUT_SECONDS),
      approvalTimeoutSeconds: APPROVAL_TIMEOUT_SECONDS,
    });
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it('answers 410, the run shows expired, nothing is written and nothing is recorded', async () => {
    // Prepare
    const keywordsBefore = (await runtime.dependencies.pages.getPage('12'))?.keywords;
    const { runId, view } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'too late'");
    expect(view.status).toBe('waiting');
    const expired: ResponseJson = await eventually(async () => {
      const current = await runtime.client('editor').getRun({ path: { id: runId } });
      return bodyOf(current).status === 'expired' ? current.body : undefined;
    }, 20_000);

    // Act
    const approval = await decide(runtime, runId, { digest: view.digest, decision: 'approve' });
    const rejection = await decide(runtime, runId, { digest: view.digest, decision: 'reject' });
    const inbox = await runtime.client('approver').listInbox({ query: { limit: 100 } });

    // Assess
    for (const answer of [approval, rejection]) {
      expect(answer.status).toBe(410);
      expect(refusalOf(answer).error).toEqual({ code: 'gone', message: TEXTS.decisionExpired });
    }
    expect(expired.failureReason).toBe(TEXTS.expired(APPROVAL_TIMEOUT_SECONDS));
    expect(bodyOf(await runtime.client('editor').getRun({ path: { id: runId } })).status).toBe('expired');
    expect(bodyOf(inbox).cards.map((card: ResponseJson) => card.runId)).not.toContain(runId);
    expect(await runtime.dependencies.runs.getDecision(runId, view.turn)).toBeUndefined();
    expect((await runtime.dependencies.pages.getPage('12'))?.keywords).toBe(keywordsBefore);
  });
});
