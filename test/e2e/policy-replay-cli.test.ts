import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PolicyReplayIo, runPolicyReplay } from '../../bin/policy-replay.js';
import { settle, startRunAndSettle, startTestRuntime, type TestRuntime } from '../support/local-runtime.js';

/** `npm run policy:replay -- --local` against what npm start recorded, on its data directory. */
describe('npm run policy:replay (bin/policy-replay.ts)', () => {
  let baseDirectory: string;
  let runtime: TestRuntime | undefined;
  let policyFile: string;
  let approvedRun: string;
  let rejectedRun: string;

  const replay = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: PolicyReplayIo = {
      print: (line) => out.push(line),
      printError: (line) => err.push(line),
      now: () => new Date(),
      baseDirectory,
    };
    const status = await runPolicyReplay(args, io);
    return { status, out: out.join('\n'), err: err.join('\n') };
  };

  beforeAll(async () => {
    baseDirectory = await mkdtemp(join(tmpdir(), 'countersign-replay-'));
    runtime = await startTestRuntime({ baseDirectory });
    const approved = await startRunAndSettle(runtime, "Set the title of page 12 to 'Replayed'");
    approvedRun = approved.runId;
    await runtime.client('approver').decideRun({
      path: { id: approvedRun },
      body: { digest: approved.view.digest, decision: 'approve' },
    });
    await settle(runtime, approvedRun, 'editor', approved.view.turn);
    const rejected = await startRunAndSettle(runtime, "Set the title of page 14 to 'Not this'");
    rejectedRun = rejected.runId;
    await runtime.client('reviewer').decideRun({
      path: { id: rejectedRun },
      body: { digest: rejected.view.digest, decision: 'reject', reason: 'No.' },
    });
    await settle(runtime, rejectedRun, 'editor', rejected.view.turn);
    policyFile = join(baseDirectory, 'two-approvers.json');
    await writeFile(policyFile, JSON.stringify({ floor: { requiredApprovals: 2 } }));
  });

  afterAll(async () => {
    await runtime?.stop();
  });

  it('replays while npm start runs, from a copy of its data, which it leaves as it was', async () => {
    // Act
    const answer = await replay('--policy', policyFile, '--local');
    const stillServing = await runtime?.client('editor').getRun({ path: { id: approvedRun } });

    // Assess
    expect(answer.status).toBe(0);
    expect(answer.out).toContain('1 needed more approvers');
    expect(stillServing?.status).toBe(200);
  });

  it('lists the approval a two-approver floor would have held, and not the rejection', async () => {
    // Prepare: npm start stopped
    await runtime?.stop();
    runtime = undefined;

    // Act
    const answer = await replay('--policy', policyFile, '--local', '--days', '7');
    const asJson = await replay('--policy', policyFile, '--local', '--json');

    // Assess
    expect(answer.status).toBe(0);
    expect(answer.out).toContain(`run ${approvedRun} turn 1`);
    expect(answer.out).toContain('needed more approvers: had 1 of 2');
    expect(answer.out).not.toContain(rejectedRun);
    expect(answer.out).toContain(
      '2 decisions replayed: 0 would have been refused, 1 needed more approvers, 0 needed the record check, 0 gone to another group; 1 unaffected.',
    );
    const lines = asJson.out.split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ runId: approvedRun, findings: [{ kind: 'needed-more-approvers' }] });
    expect(lines.at(-1)).toMatchObject({ summary: { decisions: 2, affected: 1 } });
  });

  it('says what is wrong with the command, the policy file or the days, with exit status 2', async () => {
    // Prepare
    const misspelt = join(baseDirectory, 'misspelt.json');
    await writeFile(misspelt, JSON.stringify({ floor: { four_eyes: 'always' } }));

    // Act
    const answers = [
      await replay('--policy', policyFile),
      await replay('--local'),
      await replay('--policy', policyFile, '--local', '--days', 'ninety'),
      await replay('--policy', misspelt, '--local'),
      await replay('--policy', join(baseDirectory, 'missing.json'), '--local'),
      await replay('--policy', policyFile, '--local', '--data-dir', join(baseDirectory, 'nowhere')),
    ];

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(answers.map((answer) => answer.err.split('\n')[0])).toEqual([
      'Say where the decisions are: --table <name> (a deployment) or --local (npm start), one of the two.',
      'Name the proposed policy: --policy <file>.',
      '--days must be a whole number of days from 1 to 3650; it is "ninety".',
      expect.stringContaining('four_eyes'),
      expect.stringContaining('missing.json: ENOENT'),
      expect.stringContaining('(ENOENT); run npm start once to create it'),
    ]);
  });
});
