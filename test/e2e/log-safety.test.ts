import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseApprovalCard } from '../../lambdas/core/approvals/approval-card.js';
import { loadRun, unsealRunState } from '../../lambdas/core/runs/load-run.js';
import { unsealJson } from '../../lambdas/core/sealed-json.js';
import { bodyOf } from '../support/api-answers.js';
import {
  type MeteredTestRuntime,
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
} from '../support/local-runtime.js';

// Markers that would be unmistakable in a log line: the value written, the text a person typed,
// the body of a reviewed skill, and the message of an exception a tool threw.
const APPROVE_VALUE = 'Lanternfish mosaic 4471';
const REJECT_VALUE = 'Quarry marigold 9082';
const REJECT_REASON = 'Ptarmigan reason never logged 5531';
const SKILL_BODY = 'Always greet the reviewer as Captain Obsidian-7719 and cite the ledger.';
const TOOL_EXCEPTION = 'Tool exception text Vermilion-3306 with a secret path /srv/keys';

/** Strings shorter than this are too common to prove anything (page ids, "12"). */
const MINIMUM_SECRET_LENGTH = 8;

describe('logs of full runs in local mode', () => {
  let runtime: MeteredTestRuntime;
  const secrets = new Set<string>();
  /** Whatever reached stdout, stderr or the console while the runs ran, beside the captured lines. */
  const strayOutput: string[] = [];
  const restores: Array<() => void> = [];
  const transcriptTexts: string[] = [];
  const runIds: string[] = [];

  const remember = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.length >= MINIMUM_SECRET_LENGTH) secrets.add(value);
      return;
    }
    if (Array.isArray(value)) for (const item of value) remember(item);
    else if (value !== null && typeof value === 'object')
      for (const item of Object.values(value)) remember(item);
  };

  /** The real task token, the previews and the pending arguments of a waiting run. */
  async function rememberWaitingRun(runId: string): Promise<void> {
    const { sealer, runs } = runtime.dependencies;
    const stored = await runs.getCard(runId);
    if (!stored) throw new Error(`run ${runId} has no card`);
    const token = (await unsealJson(sealer, 'task-token', runId, stored.sealedToken)) as {
      taskToken: string;
    };
    expect(token.taskToken.length).toBeGreaterThan(MINIMUM_SECRET_LENGTH);
    remember(token.taskToken);
    const card = parseApprovalCard(await unsealJson(sealer, 'approval-card', runId, stored.sealedCard));
    const previewLines = card.pendingCalls.flatMap((call) => call.preview?.lines ?? []);
    expect(previewLines.length).toBeGreaterThan(0);
    remember(previewLines);
    remember(card.pendingCalls.map((call) => call.arguments));
  }

  /** Every text of the finished run's transcript: input, skill block, tool results, answer. */
  async function rememberTranscript(runId: string): Promise<void> {
    const run = await loadRun(runtime.dependencies, runId);
    const state = await unsealRunState(runtime.dependencies, run);
    for (const message of state.transcript) {
      for (const block of message.content) {
        if (block.type === 'text') transcriptTexts.push(block.text);
        if (block.type === 'text') remember(block.text);
        if (block.type === 'tool_result') remember(block.content);
        if (block.type === 'tool_call') remember(block.arguments);
      }
    }
    remember(state.finalText);
  }

  function captureStrayOutput(): void {
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      const spy = vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: never[]) => {
        strayOutput.push(String(chunk));
        return write(chunk as string, ...rest);
      }) as typeof stream.write);
      restores.push(() => spy.mockRestore());
    }
    for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      const spy = vi.spyOn(console, method).mockImplementation((...values: unknown[]) => {
        strayOutput.push(values.map(String).join(' '));
      });
      restores.push(() => spy.mockRestore());
    }
  }

  async function attachSkillToTask(): Promise<void> {
    const ingested = await runtime.client('admin').ingestSkills({
      body: {
        source: 'upload',
        label: 'log-safety',
        files: [
          {
            path: 'greeting/SKILL.md',
            content: `---\nname: greeting\ndescription: How to greet the reviewer.\n---\n${SKILL_BODY}\n`,
          },
        ],
      },
    });
    expect(ingested.status).toBe(200);
    const skillId = bodyOf(ingested).created[0] as string;
    const skill = await runtime.client('admin').getSkill({ path: { skillId } });
    const checksum = bodyOf(skill).skill.bodyChecksum;
    const enabled = await runtime
      .client('admin')
      .enableSkill({ path: { skillId }, body: { bodyChecksum: checksum } });
    expect(enabled.status).toBe(200);
    const attached = await runtime
      .client('admin')
      .attachSkills({ path: { owner: 'tasks', id: 'page-metadata' }, body: { skillIds: [skillId] } });
    expect(attached.status).toBe(200);
  }

  beforeAll(async () => {
    runtime = await startTestRuntime();
    captureStrayOutput();
    await attachSkillToTask();
    remember(SKILL_BODY);
    remember(TOOL_EXCEPTION);
    remember(REJECT_REASON);

    // Approve path: pause (previews, sealed token), approve, execute the write, finish.
    const approved = await startRunAndSettle(runtime, `Set the description of page 12 to '${APPROVE_VALUE}'`);
    expect(approved.view.status).toBe('waiting');
    await rememberWaitingRun(approved.runId);
    const approve = await runtime.client('approver').decideRun({
      path: { id: approved.runId },
      body: { digest: approved.view.digest, decision: 'approve' },
    });
    expect(approve.status).toBe(200);
    expect((await settle(runtime, approved.runId, 'editor', approved.view.turn)).status).toBe('completed');
    await rememberTranscript(approved.runId);
    runIds.push(approved.runId);

    // Reject path, with the page store throwing while the preview is captured: the tool's
    // exception text must reach neither a log line nor the card.
    const pages = runtime.dependencies.pages;
    const getPage = pages.getPage.bind(pages);
    pages.getPage = async () => {
      throw new TypeError(TOOL_EXCEPTION);
    };
    let rejected: Awaited<ReturnType<typeof startRunAndSettle>>;
    try {
      rejected = await startRunAndSettle(runtime, `Set the title of page 14 to '${REJECT_VALUE}'`);
    } finally {
      pages.getPage = getPage;
    }
    expect(rejected.view.status).toBe('waiting');
    await rememberWaitingRun(rejected.runId);
    const reject = await runtime.client('approver').decideRun({
      path: { id: rejected.runId },
      body: { digest: rejected.view.digest, decision: 'reject', reason: REJECT_REASON },
    });
    expect(reject.status).toBe(200);
    expect((await settle(runtime, rejected.runId, 'editor', rejected.view.turn)).status).toBe('completed');
    await rememberTranscript(rejected.runId);
    runIds.push(rejected.runId);
  });

  afterAll(async () => {
    for (const restore of restores) restore();
    await runtime?.stop();
    if (runtime) await removeTestData(runtime);
  });

  it('collected the real secrets of both runs', () => {
    // Assess: the markers made it into sealed state, so their absence from the logs means something
    const all = [...secrets].join('\n');
    expect(all).toContain(APPROVE_VALUE);
    expect(all).toContain(REJECT_VALUE);
    expect(transcriptTexts.join('\n')).toContain(SKILL_BODY);
    expect(secrets.size).toBeGreaterThan(8);
  });

  it('writes no task token, preview, transcript text, skill body or tool exception text to any output', () => {
    // Act
    const everything = [...runtime.logLines, ...runtime.metricLines, ...strayOutput].join('\n');

    // Assess: identifiers are logged (the search finds what is there), secrets are not
    expect(runtime.logLines.length).toBeGreaterThan(20);
    for (const runId of runIds) expect(everything).toContain(runId);
    const leaked = [...secrets].filter((secret) => everything.includes(secret));
    expect(leaked).toEqual([]);
    for (const marker of [APPROVE_VALUE, REJECT_VALUE, REJECT_REASON, 'Obsidian-7719', 'Vermilion-3306']) {
      expect(everything).not.toContain(marker);
    }
  });

  it('writes every log line as structured JSON with a level, a service and a timestamp', () => {
    // Act
    const entries = runtime.logLines.map((line) => JSON.parse(line) as Record<string, unknown>);

    // Assess
    for (const entry of entries) {
      expect(entry).toMatchObject({
        level: expect.stringMatching(/^(DEBUG|INFO|WARN|ERROR)$/),
        message: expect.any(String),
        service: 'countersign-local',
        timestamp: expect.any(String),
      });
    }
  });

  it('puts the run, execution, turn and correlation id on step lines and the request id on API lines', () => {
    // Act
    const entries = runtime.logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const suspended = entries.find((entry) => entry.message === 'run awaiting approval');
    const decided = entries.find((entry) => entry.message === 'decision recorded');

    // Assess: a step's correlation id is its execution, an API request's its request id
    expect(suspended).toMatchObject({
      operation: 'AwaitApproval',
      runId: expect.any(String),
      turn: expect.any(Number),
      executionId: expect.stringContaining(':execution:'),
    });
    expect(suspended?.correlationId).toBe(suspended?.executionId);
    expect(decided).toMatchObject({
      operation: 'POST /runs/{id}/decision',
      runId: expect.any(String),
      correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });
});
