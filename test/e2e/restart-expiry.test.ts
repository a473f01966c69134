import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../../lambdas/local/embedded-runtime.js';
import { bodyOf } from '../support/api-answers.js';
import { apiClientWithToken, eventually, removeTestData } from '../support/local-runtime.js';
import { definitionWithApprovalTimeout } from './approvers-support.js';

const APPROVAL_TIMEOUT_SECONDS = 8;

async function startAt(baseDirectory: string): Promise<EmbeddedRuntime> {
  return startEmbeddedRuntime({
    definition: definitionWithApprovalTimeout(APPROVAL_TIMEOUT_SECONDS),
    baseDirectory,
    port: 0,
    approvalTimeoutSeconds: APPROVAL_TIMEOUT_SECONDS,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    writeLogLine: () => undefined,
  });
}

async function runStatus(runtime: EmbeddedRuntime, runId: string): Promise<string | undefined> {
  return (await runtime.dependencies.runs.getRunRecord(runId))?.status;
}

describe('a waiting run restarted in local mode', () => {
  let runtime: EmbeddedRuntime | undefined;
  let baseDirectory = '';

  afterAll(async () => {
    await runtime?.stop();
    await removeTestData({ baseDirectory });
  });

  it('still expires when its card says, not a whole timeout after the restart', async () => {
    // Prepare: a run paused, then the process restarted halfway through its wait
    baseDirectory = await mkdtemp(join(tmpdir(), 'countersign-restart-expiry-'));
    runtime = await startAt(baseDirectory);
    const started = await apiClientWithToken(runtime.url, runtime.tokens.editor).startRun({
      body: { taskId: 'page-metadata', input: "Set the keywords of page 12 to 'restarted'" },
    });
    const runId = bodyOf(started).runId as string;
    const current = runtime;
    await eventually(async () => ((await runStatus(current, runId)) === 'waiting' ? true : undefined));
    const card = await runtime.dependencies.runs.getCard(runId);
    const expiresAt = Date.parse(card?.expiresAt ?? '');
    await new Promise((resolve) => setTimeout(resolve, (APPROVAL_TIMEOUT_SECONDS * 1000) / 2));
    await runtime.stop();

    // Act
    runtime = await startAt(baseDirectory);
    const restarted = runtime;
    await eventually(
      async () => ((await runStatus(restarted, runId)) === 'expired' ? true : undefined),
      Math.max(0, expiresAt - Date.now()) + 2_500,
    );

    // Assess: expired by its deadline, and gone from the inbox
    const inbox = await apiClientWithToken(runtime.url, runtime.tokens.approver).listInbox({
      query: { limit: 100 },
    });
    expect(bodyOf(inbox).cards.map((entry: { runId: string }) => entry.runId)).not.toContain(runId);
    expect(await runStatus(runtime, runId)).toBe('expired');
  }, 30_000);
});
