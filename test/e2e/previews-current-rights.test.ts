import { beforeAll, describe, expect, it } from 'vitest';
import { BENCH_USER_ID, CallPaths, ONE_PREVIEWING_CALL } from '../../bench/call-paths.js';
import { PAGE_NOT_AVAILABLE } from '../../lambdas/core/pages.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import { type ResponseJson, useTestRuntime } from '../support/local-runtime.js';

const OLD_DESCRIPTION = 'The description of bench-1 before the run.';

describe('previews under the owner’s rights at pause, not at start (issue #9, item 5; seed 000)', () => {
  const runtime = useTestRuntime();
  let paths: CallPaths;

  beforeAll(async () => {
    paths = await CallPaths.open(runtime, runtime.baseDirectory);
  });

  /** Starts a run as the bench user, runs it to the model's reply, changes the owner, then pauses it. */
  async function pauseAfter(changeOwner: () => Promise<void>): Promise<ResponseJson> {
    const runId = await paths.startRun(ONE_PREVIEWING_CALL);
    const reply = await paths.runToModelReply(runId);
    expect(reply.route).toBe('approval');
    await changeOwner();
    await paths.suspend(runId, reply);
    const inbox = await runtime.client('admin').listInbox({ query: { limit: 100 } });
    expect(inbox.status).toBe(200);
    return bodyOf(inbox).cards.find((card: ResponseJson) => card.runId === runId);
  }

  async function restoreOwner(): Promise<void> {
    await CallPaths.open(runtime, runtime.baseDirectory);
  }

  it('shows the page to an approver when the owner still holds the rights', async () => {
    // Act
    const card = await pauseAfter(async () => {});

    // Assess
    expect(card.pendingTools[0].preview.lines).toEqual([
      'Page bench-1 (en): 1 field would change.',
      `description: "${OLD_DESCRIPTION}" → "Spring sale"`,
    ]);
  });

  it('previews the neutral refusal the write would give when the owner’s page rights were revoked after the start', async () => {
    // Act
    const owner = await runtime.dependencies.users.getUser(BENCH_USER_ID);
    if (!owner) throw new Error('the bench user is missing');
    const card = await pauseAfter(() => runtime.dependencies.users.putUser({ ...owner, pageAccess: [] }));
    await restoreOwner();

    // Assess: the approver (an admin, who may read the page) is not shown what the run could not write.
    expect(card.pendingTools[0].preview).toEqual({
      status: 'shown',
      lines: [PAGE_NOT_AVAILABLE],
      caveat: TEXTS.previewCaveat,
    });
    expect(JSON.stringify(card)).not.toContain(OLD_DESCRIPTION);
  });

  it('previews the same neutral refusal when the owner was deleted after the start', async () => {
    // Act
    const card = await pauseAfter(async () => {
      expect(await runtime.dependencies.users.deleteUser(BENCH_USER_ID)).toBe(true);
    });
    await restoreOwner();

    // Assess
    expect(card.pendingTools[0].preview.lines).toEqual([PAGE_NOT_AVAILABLE]);
    expect(JSON.stringify(card)).not.toContain(OLD_DESCRIPTION);
  });
});
