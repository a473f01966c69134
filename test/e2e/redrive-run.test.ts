import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ResponseJson,
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import {
  finalAnswerReply,
  type ScriptedOpenAiServer,
  type ScriptedReply,
  startScriptedOpenAiServer,
  toolCallReply,
} from '../support/scripted-openai-server.js';
import { decide, recordWritesAndDeliveries } from './approvers-support.js';

/**
 * A run that fails on a transient cause is resumed from the step that failed and completes
 * once: the model provider (a local server speaking the OpenAI-compatible protocol) throttles
 * past the adapter's retries after a write was approved and executed; the redriven run asks
 * the model again and finishes, and the approved write is neither asked for nor executed again.
 */
// `Retry-After: 0`: the adapter retries at once, so its four attempts take no wall time.
const throttled: ScriptedReply = {
  status: 429,
  body: '{"error":{"message":"slow down"}}',
  headers: { 'retry-after': '0' },
};

const SCRIPTS: Record<string, ScriptedReply[]> = {
  // The write, then the model throttles through all four attempts, then answers.
  'throttled after the write': [
    {
      status: 200,
      body: toolCallReply(
        'update_page_metadata',
        JSON.stringify({ pageId: '12', description: 'Redriven sale' }),
      ),
    },
    throttled,
    throttled,
    throttled,
    throttled,
    { status: 200, body: finalAnswerReply('The description is set.') },
  ],
  'refused by the provider': [{ status: 403, body: '{"error":{"message":"Access denied"}}' }],
};

describe('redriving a failed run', () => {
  let runtime: TestRuntime;
  let provider: ScriptedOpenAiServer;
  const records = { pageWrites: [] as string[], deliveries: [] as string[] };

  beforeAll(async () => {
    provider = await startScriptedOpenAiServer(SCRIPTS);
    runtime = await startTestRuntime({ openAiCompatible: { baseUrl: provider.baseUrl, apiKey: 'test-key' } });
    const put = await runtime.client('admin').putConfiguration({
      path: { id: 'flaky' },
      body: {
        configurationId: 'flaky',
        label: 'A flaky model',
        provider: 'openai-compatible',
        model: 'test-model',
        allowedTools: ['update_page_metadata'],
      },
    });
    expect(put.status).toBe(200);
    recordWritesAndDeliveries(runtime, records);
  });

  afterAll(async () => {
    await runtime.stop();
    await provider.close();
    await removeTestData(runtime);
  });

  /** Starts a run of the flaky configuration and approves its one write. */
  async function startApproveAndSettle(input: string): Promise<ResponseJson> {
    const { runId, view } = await startRunAndSettle(runtime, input, { configurationId: 'flaky' });
    expect(view.status).toBe('waiting');
    const decided = await decide(runtime, runId, { digest: view.digest, decision: 'approve' });
    expect(decided.status).toBe(200);
    return settle(runtime, runId, 'editor', view.turn);
  }

  it('records a throttled model turn as a transient failure, redrives it, and completes once', async () => {
    // Prepare: the write is approved and executed, then the next model turn fails
    const failed = await startApproveAndSettle('throttled after the write');
    expect(failed).toMatchObject({
      status: 'failed',
      failure: { step: 'ModelTurn', turn: 1, error: 'countersign.model-unavailable', transient: true },
      usage: { modelCalls: 1 },
    });
    expect(failed.failureReason).toContain('gave up after 4 attempts');
    expect(records.pageWrites).toEqual([JSON.stringify({ description: 'Redriven sale' })]);
    const runId: string = failed.runId;

    // Act
    const redriven = await runtime.client('editor').redriveRun({ path: { id: runId } });
    const repeated = await runtime.client('editor').redriveRun({ path: { id: runId } });
    const completed = await settle(runtime, runId);

    // Assess
    expect(redriven.status).toBe(202);
    expect(redriven.body).toMatchObject({
      runId,
      status: 'running',
      failedStep: 'ModelTurn',
      redrives: 1,
      redrivenBy: 'editor',
      repeated: false,
    });
    expect(repeated.status).toBe(202);
    expect(repeated.body).toMatchObject({
      redrives: 1,
      repeated: true,
      redrivenAt: (redriven.body as ResponseJson).redrivenAt,
    });
    expect(completed).toMatchObject({
      status: 'completed',
      redrives: 1,
      transcript: { toolCalls: 1, finalAnswer: 'The description is set.' },
      usage: { modelCalls: 2 },
    });
    expect(completed.failure).toBeUndefined();
    expect(completed.failureReason).toBeUndefined();
    // Once: one write, one decision delivered, the tool-call reply asked for once, one completion.
    expect(records.pageWrites).toHaveLength(1);
    expect(records.deliveries).toEqual(['delivered']);
    expect(provider.requests.filter((entry) => entry.script === 'throttled after the write')).toHaveLength(6);
    expect((await runtime.dependencies.pages.getPage('12'))?.description).toBe('Redriven sale');
    const inbox = await runtime.client('approver').listInbox({ query: {} });
    expect(JSON.stringify(inbox.body)).not.toContain(runId);
  });

  it('refuses to redrive a failure another attempt would meet again, saying why', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(runtime, 'refused by the provider', {
      configurationId: 'flaky',
    });
    expect(view).toMatchObject({
      status: 'failed',
      failure: { step: 'ModelTurn', error: 'countersign.model-failed', transient: false },
    });

    // Act
    const refused = await runtime.client('editor').redriveRun({ path: { id: runId } });

    // Assess
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('which another attempt would meet again');
    const after = await runtime.client('editor').getRun({ path: { id: runId } });
    expect((after.body as ResponseJson).status).toBe('failed');
  });

  it('refuses a run that did not fail, and hides the run from anyone but its owner and admins', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(runtime, 'Show me page 12');
    expect(view.status).toBe('completed');

    // Act
    const completed = await runtime.client('editor').redriveRun({ path: { id: runId } });
    const stranger = await runtime.client('approver').redriveRun({ path: { id: runId } });
    const admin = await runtime.client('admin').redriveRun({ path: { id: runId } });

    // Assess
    expect(completed.status).toBe(409);
    expect(completed.text).toContain('The run is completed, not failed');
    expect(stranger.status).toBe(404);
    expect(admin.status).toBe(409);
  });
});
