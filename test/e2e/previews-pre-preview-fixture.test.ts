import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { readableStoredCardSchema } from '../../lambdas/core/approvals/stored-card.js';
import { computeTurnDigest } from '../../lambdas/core/approvals/turn-digest.js';
import type { RunRecord } from '../../lambdas/core/run-record.js';
import { sealJson } from '../../lambdas/core/sealed-json.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard } from '../support/api-answers.js';
import {
  eventually,
  removeTestData,
  settle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import { readRunEvents } from '../support/server-sent-events.js';

interface PrePreviewFixture {
  record: RunRecord;
  runState: { pendingCalls: Array<{ index: number; tool: string; arguments: unknown }> };
  approvalCard: Record<string, unknown>;
  storedCard: Record<string, unknown>;
}

async function readFixture(): Promise<PrePreviewFixture> {
  const url = new URL('../fixtures/pre-preview/waiting-run.json', import.meta.url);
  return JSON.parse(await readFile(url, 'utf8')) as PrePreviewFixture;
}

/** Seals the fixture's plaintext into an installation, as the code of its time had written it. */
async function installFixture(runtime: TestRuntime, fixture: PrePreviewFixture): Promise<Uint8Array> {
  const { sealer, runs } = runtime.dependencies;
  const runId = fixture.record.runId;
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  await runs.createRun(
    { ...fixture.record, expiresAt },
    await sealJson(sealer, 'run-state', runId, fixture.runState),
  );
  // The task token of an execution that no longer exists: the restart replaces it.
  const sealedToken = await sealJson(sealer, 'task-token', runId, { taskToken: 'token-of-a-lost-execution' });
  // The card item was written before stored-card version 2: it goes through the core's reader of
  // version 1 (`waiting` reads as `open`), as an item of that time read from the table would.
  await runs.putCard(
    readableStoredCardSchema.parse({
      ...fixture.storedCard,
      expiresAt,
      sealedCard: await sealJson(sealer, 'approval-card', runId, fixture.approvalCard),
      sealedToken,
    }),
  );
  return sealedToken;
}

describe('a run sealed before previews existed', () => {
  let runtime: TestRuntime | undefined;

  afterAll(async () => {
    await runtime?.stop();
    if (runtime) await removeTestData(runtime);
  });

  it('resumes end to end after a restart, and its card shows "no preview"', async () => {
    // Prepare: an installation holding the old run, then restarted on the same data.
    const fixture = await readFixture();
    const runId = fixture.record.runId;
    expect(computeTurnDigest(runId, fixture.record.turn, fixture.runState.pendingCalls)).toBe(
      fixture.approvalCard.digest,
    );
    const first = await startTestRuntime();
    const lostToken = Buffer.from(await installFixture(first, fixture));
    await first.stop();
    runtime = await startTestRuntime({ baseDirectory: first.baseDirectory });
    const started = runtime;

    // Act: the card, on the inbox and the stream, once the restarted execution waits again.
    await eventually(async () => {
      const sealedToken = (await started.dependencies.runs.getCard(runId))?.sealedToken;
      return sealedToken && !lostToken.equals(Buffer.from(sealedToken)) ? true : undefined;
    });
    const inbox = await started.client('approver').listInbox();
    const card = openedCard(bodyOf(inbox).cards.find((entry) => entry.runId === runId));
    const stream = await readRunEvents(started, runId, 'editor');

    // Assess
    expect(card.digest).toBe(fixture.approvalCard.digest);
    expect(card.pendingTools).toEqual([
      {
        index: 0,
        tool: 'update_page_metadata',
        arguments: { pageId: '12', description: 'Written before previews existed' },
        // The tool lets an approver edit its arguments (per-call decisions): an old card says so too
        editable: true,
        registered: true,
        willRun: true,
        requiresApproval: true,
        preview: { status: 'none', message: TEXTS.noPreview },
      },
    ]);
    expect(stream.events.find((event) => event.event === 'awaiting_approval')?.data.pendingTools).toEqual(
      card.pendingTools,
    );

    // Act: approve; the write runs and the run completes.
    const decision = await started
      .client('approver')
      .decideRun({ path: { id: runId }, body: { digest: card.digest, decision: 'approve' } });
    const finished = await settle(started, runId, 'editor', fixture.record.turn);

    // Assess
    expect(decision.status).toBe(200);
    expect(finished.status).toBe('completed');
    expect((await started.dependencies.pages.getPage('12'))?.description).toBe(
      'Written before previews existed',
    );
  });
});
