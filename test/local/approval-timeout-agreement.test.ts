import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agreeApprovalTimeout } from '../../lambdas/local/approval-timeout-agreement.js';
import { startEmbeddedRuntime } from '../../lambdas/local/embedded-runtime.js';
import { definitionWithApprovalTimeout } from '../e2e/approvers-support.js';
import { stateMachineDefinition } from '../support/local-runtime.js';

describe('the local approval timeout agrees with the ASL (issue #15, item 5)', () => {
  it("takes the ASL's wait when no timeout is set, and accepts the same number", () => {
    // Act & Assess
    expect(agreeApprovalTimeout(stateMachineDefinition())).toBe(7 * 86_400);
    expect(agreeApprovalTimeout(definitionWithApprovalTimeout(3_600), 3_600)).toBe(3_600);
  });

  it('refuses a timeout the ASL does not wait, before anything starts', async () => {
    // Prepare
    const baseDirectory = await mkdtemp(join(tmpdir(), 'countersign-timeout-'));
    try {
      // Act
      const starting = startEmbeddedRuntime({
        definition: stateMachineDefinition(),
        baseDirectory,
        port: 0,
        approvalTimeoutSeconds: 3 * 86_400,
        writeLogLine: () => undefined,
      });

      // Assess: refused with both numbers, and no data folder was made.
      await expect(starting).rejects.toThrow(
        "The approval timeout (259200 s) differs from the state machine's approval wait (604800 s)",
      );
      expect(await readdir(baseDirectory)).toEqual([]);
    } finally {
      await rm(baseDirectory, { recursive: true, force: true });
    }
  });

  it('refuses a definition without a single approval wait', () => {
    expect(() => agreeApprovalTimeout({ States: {} })).toThrow('no single approval wait');
  });
});
