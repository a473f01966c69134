import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard, refusalOf } from '../support/api-answers.js';
import {
  eventually,
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

const SET_DESCRIPTION = "Set the description of page 12 to 'Spring sale'";

async function pageDescription(runtime: TestRuntime, pageId: string): Promise<string | undefined> {
  return (await runtime.dependencies.pages.getPage(pageId))?.description;
}

async function approve(runtime: TestRuntime, runId: string, digest: string, as = 'approver') {
  return runtime.client(as).decideRun({ path: { id: runId }, body: { digest, decision: 'approve' } });
}

describe('the run engine over HTTP in local mode', () => {
  let runtime: TestRuntime;
  let originalDescription: string | undefined;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    originalDescription = await pageDescription(runtime, '12');
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it('waits for approval with the page unchanged, then writes it and completes once approved', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(runtime, SET_DESCRIPTION);

    // Assess: paused, nothing written yet
    expect(view.status).toBe('waiting');
    expect(view.pendingTools).toEqual([
      expect.objectContaining({
        tool: 'update_page_metadata',
        arguments: { pageId: '12', description: 'Spring sale' },
      }),
    ]);
    expect(await pageDescription(runtime, '12')).toBe(originalDescription);

    // Act
    const decision = await approve(runtime, runId, view.digest);
    const finished = await settle(runtime, runId, 'editor', view.turn);

    // Assess
    expect(decision.status).toBe(200);
    expect(finished.status).toBe('completed');
    expect(await pageDescription(runtime, '12')).toBe('Spring sale');
    // Absolute values for the fields the call names; every other field as it was.
    expect(await runtime.dependencies.pages.getPage('12')).toMatchObject({
      title: 'Spring campaign',
      keywords: 'spring, campaign, garden',
    });
  });

  it('leaves the page unchanged when rejected, tells the model, and completes', async () => {
    // Prepare
    await runtime.dependencies.pages.updateMetadata('14', { description: 'Angaben gemäß § 5 TMG.' }, 'test');
    const { runId, view } = await startRunAndSettle(runtime, "Set the description of page 14 to 'Neu'");

    // Act
    const decision = await runtime.client('approver').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'reject', reason: 'Legal text is not ours to change.' },
    });
    const finished = await settle(runtime, runId, 'editor', view.turn);

    // Assess
    expect(decision.status).toBe(200);
    expect(finished.status).toBe('completed');
    expect(finished.transcript.finalAnswer).toContain(
      'Error: tool "update_page_metadata" was denied by the operator.',
    );
    expect(await pageDescription(runtime, '14')).toBe('Angaben gemäß § 5 TMG.');
  });

  it('answers read questions with read tools and no approval', async () => {
    const { view } = await startRunAndSettle(runtime, 'What is on page 12?');
    expect(view.status).toBe('completed');
    expect(view.transcript.toolCalls).toBe(1);
  });

  it('refuses a flipped byte in the sealed state and fails that run without writing', async () => {
    // Prepare
    await runtime.dependencies.pages.updateMetadata('12', { title: 'Spring campaign' }, 'test');
    const { runId, view } = await startRunAndSettle(runtime, "Set the title of page 12 to 'Tampered'");
    const key = { pk: { S: `RUN#${runId}` }, sk: { S: 'RUN' } };
    const item = await runtime.dependencies.runs.getRun(runId);
    const tampered = Uint8Array.from(item?.sealedState ?? []);
    const middle = Math.floor(tampered.length / 2);
    tampered[middle] = (tampered[middle] ?? 0) ^ 0x01;
    const stateAttribute = await findSealedStateAttribute(runtime, key);
    await runtime.dynamo.client.send(
      new UpdateItemCommand({
        TableName: 'countersign',
        Key: key,
        UpdateExpression: 'SET #state = :state',
        ExpressionAttributeNames: { '#state': stateAttribute },
        ExpressionAttributeValues: { ':state': { B: tampered } },
      }),
    );

    // Act
    const decision = await approve(runtime, runId, view.digest);
    const finished = await settle(runtime, runId, 'editor', view.turn);

    // Assess
    expect(decision.status).toBe(200);
    expect(finished.status).toBe('failed');
    expect(finished.failureReason).toMatch(/sealed run state was refused/i);
    expect(finished.transcript.sealed).toBe('refused');
    expect((await runtime.dependencies.pages.getPage('12'))?.title).toBe('Spring campaign');
  });

  it('refuses a sealed token copied onto another run with a 410 and ends that run, never resuming it', async () => {
    // Prepare
    const first = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'one'");
    const second = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'two'");
    const firstCard = await runtime.dependencies.runs.getCard(first.runId);
    const secondCard = await runtime.dependencies.runs.getCard(second.runId);
    if (!firstCard || !secondCard) throw new Error('cards missing');
    await runtime.dependencies.runs.putCard({ ...secondCard, sealedToken: firstCard.sealedToken });

    // Act
    const decision = await approve(runtime, second.runId, second.view.digest);

    // Assess
    // Issue #9: a card whose token cannot be opened can never be decided; the run ends failed.
    expect(decision.status).toBe(410);
    expect(refusalOf(decision).error).toMatchObject({ code: 'gone', message: TEXTS.cardUnopenable });
    expect((await runtime.client('editor').getRun({ path: { id: second.runId } })).body).toMatchObject({
      status: 'failed',
      failureReason: TEXTS.cardUnopenableFailure,
    });
    expect(await runtime.dependencies.runs.getDecision(second.runId, second.view.turn)).toBeUndefined();
    await approve(runtime, first.runId, first.view.digest);
    expect((await settle(runtime, first.runId, 'editor', first.view.turn)).status).toBe('completed');
  });

  it('suspends and resumes a run whose transcript is 2 MB', async () => {
    // Prepare: a 2 MB incompressible transcript, sealed through the real state codec.
    const { runId, view } = await startRunAndSettle(runtime, "Set the author of page 12 to 'Big Run'");
    const stored = await runtime.dependencies.runs.getRun(runId);
    const { sealJson, unsealJson } = await import('../../lambdas/core/sealed-json.js');
    const state = (await unsealJson(
      runtime.dependencies.sealer,
      'run-state',
      runId,
      stored?.sealedState ?? new Uint8Array(),
    )) as {
      transcript: unknown[];
    };
    const { randomBytes } = await import('node:crypto');
    const bulk = randomBytes(2_100_000).toString('base64');
    state.transcript.unshift({ role: 'user', content: [{ type: 'text', text: bulk }] });
    const sealed = await sealJson(runtime.dependencies.sealer, 'run-state', runId, state);
    expect(sealed.byteLength).toBeGreaterThan(2_000_000);
    await runtime.dependencies.runs.updateRun(runId, {}, { sealedState: sealed });

    // Act
    const decision = await approve(runtime, runId, view.digest);
    const finished = await settle(runtime, runId, 'editor', view.turn);

    // Assess
    expect(decision.status).toBe(200);
    expect(finished.status).toBe('completed');
    expect(finished.transcript.messages).toBeGreaterThanOrEqual(5);
    expect((await runtime.dependencies.pages.getPage('12'))?.author).toBe('Big Run');
  });

  it('keeps a waiting run across a restart of the process', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(
      runtime,
      "Set the description of page 12 to 'After restart'",
    );
    await runtime.stop();

    // Act
    runtime = await startTestRuntime({ baseDirectory: runtime.baseDirectory });
    const card = await eventually(async () => {
      const inbox = await runtime.client('approver').listInbox();
      const found = bodyOf(inbox).cards.find((candidate) => candidate.runId === runId);
      return found && openedCard(found);
    });
    const decision = await approve(runtime, runId, card.digest);
    const finished = await settle(runtime, runId, 'editor', view.turn);

    // Assess
    expect(card.digest).toBe(view.digest);
    expect(decision.status).toBe(200);
    expect(finished.status).toBe('completed');
    expect(await pageDescription(runtime, '12')).toBe('After restart');
  });
});

async function findSealedStateAttribute(
  runtime: TestRuntime,
  key: Record<string, { S: string }>,
): Promise<string> {
  const result = await runtime.dynamo.client.send(new GetItemCommand({ TableName: 'countersign', Key: key }));
  const binary = Object.entries(result.Item ?? {}).find(([, value]) => value.B !== undefined);
  if (!binary) throw new Error('no sealed state attribute on the run item');
  return binary[0];
}
