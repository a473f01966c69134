import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard, refusalOf } from '../support/api-answers.js';
import {
  eventually,
  type MeteredTestRuntime,
  type ResponseJson,
  startRunAndSettle,
  useTestRuntime,
} from '../support/local-runtime.js';

const WRITE_INPUT = "Set the description of page 12 to 'Isolated'";

/** The raw item of a run (`RUN`) or its card (`CARD`), as DynamoDB holds it. */
async function readItem(runtime: MeteredTestRuntime, runId: string, sortKey: 'RUN' | 'CARD') {
  const { Item: item } = await runtime.dynamo.documentClient.send(
    new GetCommand({
      TableName: runtime.dynamo.tableName,
      Key: { [TABLE_LAYOUT.partitionKey]: `RUN#${runId}`, [TABLE_LAYOUT.sortKey]: sortKey },
    }),
  );
  if (!item) throw new Error(`no ${sortKey} item for ${runId}`);
  return item;
}

async function writeItem(runtime: MeteredTestRuntime, item: Record<string, unknown>): Promise<void> {
  await runtime.dynamo.documentClient.send(
    new PutCommand({ TableName: runtime.dynamo.tableName, Item: item }),
  );
}

/** Flips one byte in the middle of the card's sealed approval card, in DynamoDB. */
async function tamperCard(runtime: MeteredTestRuntime, runId: string): Promise<void> {
  const card = await readItem(runtime, runId, 'CARD');
  const sealed = new Uint8Array(card.sealedCard as Uint8Array);
  const middle = Math.floor(sealed.byteLength / 2);
  sealed[middle] = (sealed[middle] ?? 0) ^ 0x01;
  await writeItem(runtime, { ...card, sealedCard: sealed });
}

/** The whole item of `from` written under the key of `to`, every attribute as it was. */
async function copyItem(
  runtime: MeteredTestRuntime,
  sortKey: 'RUN' | 'CARD',
  from: string,
  to: string,
): Promise<void> {
  const item = await readItem(runtime, from, sortKey);
  await writeItem(runtime, { ...item, [TABLE_LAYOUT.partitionKey]: `RUN#${to}` });
}

/** What a piece of work logged and metered: the refusal lines and the SealedStateRejections sum. */
async function observe<T>(
  runtime: MeteredTestRuntime,
  work: () => Promise<T>,
): Promise<{ result: T; rejectionLines: ResponseJson[]; rejections: number; errorLines: ResponseJson[] }> {
  const logsBefore = runtime.logLines.length;
  const metricsBefore = runtime.metricLines.length;
  const result = await work();
  const lines = runtime.logLines.slice(logsBefore).map((line) => JSON.parse(line));
  const rejections = runtime.metricLines
    .slice(metricsBefore)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .flatMap((document) => [document.SealedStateRejections ?? []].flat().map(Number))
    .reduce((sum, value) => sum + value, 0);
  return {
    result,
    rejectionLines: lines.filter((line) => line.message === 'sealed state rejected'),
    rejections,
    errorLines: lines.filter((line) => line.level === 'ERROR'),
  };
}

async function waitingRuns(runtime: MeteredTestRuntime, count: number): Promise<string[]> {
  const runIds: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const { runId, view } = await startRunAndSettle(runtime, WRITE_INPUT);
    expect(view.status).toBe('waiting');
    runIds.push(runId);
  }
  return runIds;
}

describe('one card that cannot be opened (issue #9, item 3)', () => {
  const runtime = useTestRuntime();

  it('lists the other cards and a flagged placeholder, reports once, and ends the run failed with its execution stopped', async () => {
    // Prepare: three waiting runs, the middle one's card altered by one byte.
    const [first, broken, last] = (await waitingRuns(runtime, 3)) as [string, string, string];
    await tamperCard(runtime, broken);

    // Act
    const observed = await observe(runtime, () =>
      runtime.client('approver').listInbox({ query: { limit: 100 } }),
    );

    // Assess
    const inbox = observed.result;
    expect(inbox.status).toBe(200);
    const byRun = new Map<string, ResponseJson>(
      bodyOf(inbox).cards.map((card: ResponseJson) => [card.runId, card]),
    );
    expect(byRun.get(first)?.pendingTools[0].preview.status).toBe('shown');
    expect(byRun.get(last)?.pendingTools[0].preview.status).toBe('shown');
    expect(byRun.get(broken)).toEqual({ runId: broken, unopenable: true, message: TEXTS.cardUnopenable });
    expect(observed.rejectionLines).toHaveLength(1);
    expect(observed.rejectionLines[0]).toMatchObject({ level: 'ERROR', runId: broken });
    expect(typeof observed.rejectionLines[0].errorClass).toBe('string');
    expect(observed.rejections).toBe(1);
    const view = (await runtime.client('editor').getRun({ path: { id: broken } })).body;
    expect(view).toMatchObject({ status: 'failed', failureReason: TEXTS.cardUnopenableFailure });
    expect(runtime.calls.snapshot()['SFN:StopExecution']).toBeGreaterThanOrEqual(1);
    await eventually(async () =>
      runtime.logLines.some((line) => line.includes('"execution-aborted"') && line.includes(broken))
        ? true
        : undefined,
    );
    // The run left the inbox; a decision on it now says the run ended, never a 500.
    const again = await runtime.client('approver').listInbox({ query: { limit: 100 } });
    expect(bodyOf(again).cards.map((card: ResponseJson) => card.runId)).not.toContain(broken);
    const late = await runtime
      .client('approver')
      .decideRun({ path: { id: broken }, body: { digest: 'sha256:any', decision: 'approve' } });
    expect(late.status).toBe(410);
    expect(refusalOf(late).error.message).toBe(TEXTS.decisionRunFailed);
  });

  it('renders the placeholder in the HTML inbox beside the other cards, with no button to approve it', async () => {
    // Prepare
    const [intact, broken] = (await waitingRuns(runtime, 2)) as [string, string];
    await tamperCard(runtime, broken);

    // Act
    const observed = await observe(runtime, () =>
      runtime.client('approver').listInbox({ query: { limit: 100 }, headers: { accept: 'text/html' } }),
    );

    // Assess
    const html = observed.result.text;
    expect(observed.result.status).toBe(200);
    expect(html).toContain(`data-run-id="${intact}" data-digest=`);
    const placeholder = html.slice(html.indexOf(`data-run-id="${broken}"`));
    expect(placeholder.slice(0, placeholder.indexOf('</article>'))).toContain(TEXTS.cardUnopenable);
    expect(placeholder.slice(0, placeholder.indexOf('</article>'))).not.toContain('class="approve"');
    expect(html).toMatch(new RegExp(`<article class="card unopenable" data-run-id="${broken}"`));
    expect(observed.rejectionLines).toHaveLength(1);
    expect(observed.rejections).toBe(1);
  });

  it('answers a decision on a card that cannot be opened with a 410, claims nothing and resumes nothing', async () => {
    // Prepare
    const [broken] = (await waitingRuns(runtime, 1)) as [string];
    const digest = (await readItem(runtime, broken, 'CARD')).digest as string;
    await tamperCard(runtime, broken);
    runtime.calls.reset();

    // Act
    const observed = await observe(runtime, () =>
      runtime.client('approver').decideRun({ path: { id: broken }, body: { digest, decision: 'approve' } }),
    );

    // Assess
    expect(observed.result.status).toBe(410);
    expect(refusalOf(observed.result).error.message).toBe(TEXTS.cardUnopenable);
    expect(observed.rejectionLines).toHaveLength(1);
    expect(observed.rejections).toBe(1);
    expect(observed.errorLines.filter((line) => line.message === 'request failed')).toEqual([]);
    expect(runtime.calls.snapshot()['SFN:SendTaskSuccess']).toBeUndefined();
    expect(await runtime.dependencies.runs.getDecision(broken, 1)).toBeUndefined();
    expect((await runtime.dependencies.runs.getRunRecord(broken))?.status).toBe('failed');
  });

  it('shows the placeholder on GET /runs/{id} and on the event stream instead of a 500, and both end the run', async () => {
    // Prepare
    const [viewed, streamed] = (await waitingRuns(runtime, 2)) as [string, string];
    await tamperCard(runtime, viewed);
    await tamperCard(runtime, streamed);

    // Act
    const view = await runtime.client('editor').getRun({ path: { id: viewed } });
    const stream = await runtime.client('editor').streamRunEvents({ path: { id: streamed } });

    // Assess
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      status: 'failed',
      failureReason: TEXTS.cardUnopenableFailure,
      unopenableCard: { runId: viewed, unopenable: true, message: TEXTS.cardUnopenable },
    });
    expect(bodyOf(view).pendingTools).toBeUndefined();
    expect(stream.status).toBe(200);
    expect(stream.text).toContain('event: card_unopenable');
    expect(stream.text).toContain(TEXTS.cardUnopenable);
    expect(stream.text).not.toContain('event: awaiting_approval');
    // The card reader ended the run before the stream's last event, which says so.
    expect(stream.text).toMatch(/event: state\ndata: \{[^\n]*"status":"failed"/);
    expect(await runtime.dependencies.runs.getRunRecord(streamed)).toMatchObject({
      status: 'failed',
      failureReason: TEXTS.cardUnopenableFailure,
    });
    expect(await runtime.dependencies.runs.getCard(streamed)).toMatchObject({ state: 'closed' });
  });
});

describe('a sealed item copied under another run (issue #9, item 4)', () => {
  const runtime = useTestRuntime();

  it('refuses a card copied onto another run: no token delivered, the other run untouched', async () => {
    // Prepare: H's whole card item written under G's key; H's digest is what that card shows.
    const [target, source] = (await waitingRuns(runtime, 2)) as [string, string];
    const sourceDigest = (await readItem(runtime, source, 'CARD')).digest as string;
    await copyItem(runtime, 'CARD', source, target);
    runtime.calls.reset();

    // Act
    const decision = await runtime
      .client('approver')
      .decideRun({ path: { id: target }, body: { digest: sourceDigest, decision: 'approve' } });

    // Assess
    expect(decision.status).toBe(410);
    expect(refusalOf(decision).error.code).toBe('gone');
    expect(runtime.calls.snapshot()['SFN:SendTaskSuccess']).toBeUndefined();
    expect(await runtime.dependencies.runs.getDecision(target, 1)).toBeUndefined();
    expect((await runtime.dependencies.runs.getRunRecord(source))?.status).toBe('waiting');
    expect((await runtime.dependencies.runs.getRunRecord(target))?.status).toBe('failed');
    const inbox = await runtime.client('approver').listInbox({ query: { limit: 100 } });
    const sourceCard = openedCard(bodyOf(inbox).cards.find((card) => card.runId === source));
    expect(sourceCard?.digest).toBe(sourceDigest);
  });

  it('lists a copied card as a placeholder under the run it was copied to', async () => {
    // Prepare
    const [target, source] = (await waitingRuns(runtime, 2)) as [string, string];
    await copyItem(runtime, 'CARD', source, target);

    // Act
    const inbox = await runtime.client('approver').listInbox({ query: { limit: 100 } });

    // Assess
    expect(inbox.status).toBe(200);
    // Untyped: the placeholder and the opened card are compared as the API answered them.
    const entries: ResponseJson[] = bodyOf(inbox).cards.filter((card) =>
      [target, source].includes(card.runId),
    );
    expect(entries).toContainEqual({ runId: target, unopenable: true, message: TEXTS.cardUnopenable });
    expect(entries.find((card: ResponseJson) => card.runId === source)?.pendingTools).toHaveLength(1);
  });

  it('refuses a run item copied onto another run: its approved turn fails there, the source still waits', async () => {
    // Prepare: H's run item (record and sealed state) written under K's key; K's own card stays.
    const [target, source] = (await waitingRuns(runtime, 2)) as [string, string];
    await copyItem(runtime, 'RUN', source, target);
    const digest = (await readItem(runtime, target, 'CARD')).digest as string;

    // Act: K's own approval resumes K, whose next step opens the copied state.
    const decision = await runtime
      .client('approver')
      .decideRun({ path: { id: target }, body: { digest, decision: 'approve' } });
    const ended = await eventually(async () => {
      const record = await runtime.dependencies.runs.getRunRecord(target);
      return record?.status === 'failed' ? record : undefined;
    });

    // Assess
    expect(decision.status).toBe(200);
    // Refused by the sealer, under the run id of the key it was read from.
    expect(ended.failureReason).toBe('The sealed run state was refused: it was sealed for another run.');
    expect((await runtime.dependencies.runs.getRunRecord(source))?.status).toBe('waiting');
    const view = await runtime.client('editor').getRun({ path: { id: source } });
    expect(bodyOf(view).transcript.sealed).toBeUndefined();
    expect(
      runtime.logLines.filter((line) => line.includes('"sealed state rejected"') && line.includes(target)),
    ).not.toHaveLength(0);
  });
});
