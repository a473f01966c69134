import { randomUUID } from 'node:crypto';
import { createStepHandlers } from '../lambdas/handlers/step-handlers.js';
import { DEMO_MACHINE_CLIENT_ID } from '../lambdas/local/local-machine-clients.js';
import type { HandlerName } from '../lib/handler-names.js';
import {
  createApiEvent as apiEvent,
  BENCH_USER_ID,
  type CallPaths,
  externalTurn,
  ONE_PREVIEWING_CALL,
} from './call-paths.js';

/** The demo approver whose tool access covers the demo agent's tools. */
const EXTERNAL_APPROVER_ID = 'approver';

/** One representative first request of a handler: its event and what a good answer looks like. */
export interface FirstRequest {
  readonly event: unknown;
  /** Undefined when the answer is the one the request should get; else why it is not. */
  readonly check: (answer: unknown) => string | undefined;
}

/** The audience of the run events endpoint's tokens (`COUNTERSIGN_JWT_AUDIENCE`). */
export const BENCH_AUDIENCE = 'countersign-bench';
/** The inbox page the api-inbox request loads: full, from the waiting runs filled at setup. */
export const BENCH_INBOX_PAGE = 20;

type Answer = Record<string, unknown> | undefined;

const asRecord = (answer: unknown): Answer =>
  typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>) : undefined;

/** A step's answer: no error, and the fields the state machine reads next. */
const stepAnswered =
  (...fields: string[]) =>
  (answer: unknown): string | undefined => {
    const record = asRecord(answer);
    if (!record || 'error' in record) return `the step failed: ${JSON.stringify(answer)}`;
    const missing = fields.filter((field) => !(field in record));
    return missing.length > 0 ? `the step answered without ${missing.join(', ')}` : undefined;
  };

/** An HTTP API answer with `status` (and, when given, a body that passes `body`). */
const httpAnswered =
  (status: number, body?: (json: Record<string, unknown>) => string | undefined) =>
  (answer: unknown): string | undefined => {
    const record = asRecord(answer);
    if (record?.statusCode !== status) return `answered ${JSON.stringify(answer).slice(0, 300)}`;
    return body ? body(JSON.parse(String(record.body)) as Record<string, unknown>) : undefined;
  };

/**
 * The requests of one round, each on state of its own made in this process through the same
 * use cases (sealed through the fake KMS the bundles reach), so every bundle does its real
 * work: api-decision decides a waiting run, execute-tools runs an approved call, model-turn
 * asks the scripted model, and so on. A run each bundle changes is never reused.
 */
export class FirstRequestFixtures {
  public constructor(
    private readonly paths: CallPaths,
    private readonly issueToken: (subject: string, audience: string) => Promise<string>,
  ) {}

  /** Runs left waiting for the inbox page, and one ended run for the events stream. */
  public async prepareShared(): Promise<{ endedRunId: string }> {
    await this.paths.fillWaitingRuns(BENCH_INBOX_PAGE + 5);
    const endedRunId = await this.runToFinalTurn();
    await this.steps().Finish({ runId: endedRunId });
    return { endedRunId };
  }

  public async prepareRound(endedRunId: string): Promise<Record<HandlerName, FirstRequest>> {
    const steps = this.steps();
    const created = await this.paths.startRun(ONE_PREVIEWING_CALL);
    const toFail = await this.paths.startRun(ONE_PREVIEWING_CALL);
    const prepared = await this.paths.startRun(ONE_PREVIEWING_CALL);
    await steps.Prepare({ runId: prepared, executionId: `${prepared}-bench` });
    const replied = await this.paths.startRun(ONE_PREVIEWING_CALL);
    const reply = await this.paths.runToModelReply(replied);
    const [toDecide, toExecute, toReject, toExpire] = await Promise.all([
      this.waitingRun(),
      this.waitingRun(),
      this.waitingRun(),
      this.waitingRun(),
    ]);
    await this.decided(toExecute.runId, 'approve');
    await this.decided(toReject.runId, 'reject');
    const toFinish = await this.runToFinalTurn();
    const toAnswer = await this.externalWaitingRun();
    await this.decided(toAnswer.runId, 'approve', EXTERNAL_APPROVER_ID);
    const toNotify = await this.externalWaitingRun();
    await this.decided(toNotify.runId, 'approve', EXTERNAL_APPROVER_ID);
    await steps.RecordExternalDecision(toNotify);
    const token = await this.issueToken(BENCH_USER_ID, BENCH_AUDIENCE);
    return {
      'api-runs': {
        event: apiEvent('POST /runs', BENCH_USER_ID, {
          body: { taskId: 'page-metadata', input: ONE_PREVIEWING_CALL },
        }),
        check: httpAnswered(202),
      },
      prepare: {
        event: { runId: created, executionId: `${created}-bench` },
        check: stepAnswered('runId'),
      },
      'model-turn': { event: { runId: prepared, turn: 0 }, check: stepAnswered('route', 'owner') },
      'await-approval': {
        event: {
          runId: replied,
          turn: reply.turn,
          taskToken: `bench-task-token-${replied}`,
        },
        check: (answer) =>
          asRecord(answer)?.error === undefined ? undefined : `the step failed: ${JSON.stringify(answer)}`,
      },
      'api-decision': {
        event: apiEvent('POST /runs/{id}/decision', BENCH_USER_ID, {
          pathParameters: { id: toDecide.runId },
          body: { digest: await this.paths.digestOf(toDecide.runId), decision: 'approve' },
        }),
        check: httpAnswered(200),
      },
      'execute-tools': { event: toExecute, check: stepAnswered('route') },
      'record-rejection': { event: toReject, check: stepAnswered('runId') },
      'finish-run': { event: { runId: toFinish }, check: stepAnswered('runId') },
      'mark-failed': {
        event: { runId: toFail, failure: { Error: 'countersign.internal', Cause: '' } },
        check: stepAnswered('runId'),
      },
      'mark-expired': { event: toExpire, check: stepAnswered('runId') },
      // A timer of a card without a ladder: it reads the card and is ignored (the cold path of every timer).
      'escalate-card': {
        event: { runId: created, turn: 1, digest: 'sha256:bench', step: 0 },
        check: stepAnswered('kind'),
      },
      'api-inbox': {
        event: apiEvent('GET /inbox', BENCH_USER_ID, { query: { limit: String(BENCH_INBOX_PAGE) } }),
        check: httpAnswered(200, (json) =>
          (json.cards as unknown[] | undefined)?.length === BENCH_INBOX_PAGE
            ? undefined
            : 'the page was not full',
        ),
      },
      'api-admin': { event: apiEvent('GET /admin/configurations', 'admin', {}), check: httpAnswered(200) },
      'api-generate': {
        event: apiEvent('POST /configurations/{id}/complete', BENCH_USER_ID, {
          pathParameters: { id: 'demo-scripted' },
          body: { prompt: 'Say hello.' },
        }),
        check: httpAnswered(200),
      },
      'api-run-events': {
        event: {
          version: '2.0',
          rawPath: `/runs/${endedRunId}/events`,
          rawQueryString: '',
          headers: { authorization: `Bearer ${token}` },
          requestContext: { http: { method: 'GET', path: `/runs/${endedRunId}/events` }, requestId: 'bench' },
          isBase64Encoded: false,
        },
        check: (answer) => {
          const streamed = String(asRecord(answer)?.streamed ?? '');
          return streamed.includes('"statusCode":200') && streamed.includes('event: state')
            ? undefined
            : `streamed ${streamed.slice(0, 300)}`;
        },
      },
      'report-waiting-runs': { event: { id: 'bench' }, check: stepAnswered('waiting') },
      'api-external': {
        event: apiEvent('POST /external-runs', DEMO_MACHINE_CLIENT_ID, {
          body: externalTurn(randomUUID()),
        }),
        check: httpAnswered(202),
      },
      'record-external-decision': { event: toAnswer, check: stepAnswered('runId') },
      // No webhook in the bench's turn: the step reads the run and its reports, and posts nothing.
      'notify-caller': { event: { runId: toNotify.runId }, check: stepAnswered('webhook') },
    };
  }

  private steps() {
    return createStepHandlers(this.paths.coldDependencies());
  }

  /** A run waiting for a decision, and the turn it waits at. */
  private async waitingRun(): Promise<{ runId: string; turn: number }> {
    const runId = await this.paths.startRun(ONE_PREVIEWING_CALL);
    const reply = await this.paths.runToModelReply(runId);
    await this.paths.suspend(runId, reply);
    return { runId, turn: reply.turn };
  }

  /** An external run waiting for a decision (submitted, prepared, paused on its card). */
  private async externalWaitingRun(): Promise<{ runId: string; turn: number }> {
    const runId = await this.paths.submitExternalRun(randomUUID());
    const prepared = (await this.steps().Prepare({ runId, executionId: `${runId}-bench` })) as {
      turn: number;
    };
    await this.paths.suspend(runId, prepared);
    return { runId, turn: prepared.turn };
  }

  private async decided(runId: string, decision: 'approve' | 'reject', as = BENCH_USER_ID): Promise<void> {
    const answer = await this.paths.decide(runId, await this.paths.digestOf(runId), decision, as);
    if (answer.statusCode !== 200) throw new Error(`deciding ${runId} answered ${answer.statusCode}`);
  }

  /** A run whose tools ran and whose model gave its final answer: what Finish ends. */
  private async runToFinalTurn(): Promise<string> {
    const { runId, turn } = await this.waitingRun();
    await this.decided(runId, 'approve');
    const executed = (await this.steps().ExecuteTools({ runId, turn })) as { turn: number };
    const reply = (await this.steps().ModelTurn({ runId, turn: executed.turn })) as { route: string };
    if (reply.route !== 'final')
      throw new Error(`the scripted model did not end run ${runId}: ${reply.route}`);
    return runId;
  }
}
