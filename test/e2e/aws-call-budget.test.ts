import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BENCH_USER_ID,
  CallPaths,
  FIVE_PREVIEWING_CALLS,
  type ModelReply,
  ONE_PREVIEWING_CALL,
} from '../../bench/call-paths.js';
import { readPrincipal } from '../../lambdas/handlers/http/read-principal.js';
import { removeTestData, startTestRuntime, type TestRuntime } from '../support/local-runtime.js';

/** DynamoDB reads and writes in a snapshot of `Service:Operation` counts. */
function dynamoReads(snapshot: Record<string, number>): number {
  return sum(snapshot, ['DynamoDB:GetItem', 'DynamoDB:BatchGetItem', 'DynamoDB:Query', 'DynamoDB:Scan']);
}

function dynamoWrites(snapshot: Record<string, number>): number {
  return sum(snapshot, [
    'DynamoDB:PutItem',
    'DynamoDB:UpdateItem',
    'DynamoDB:DeleteItem',
    'DynamoDB:BatchWriteItem',
    'DynamoDB:TransactWriteItems',
  ]);
}

function sum(snapshot: Record<string, number>, operations: readonly string[]): number {
  return operations.reduce((total, operation) => total + (snapshot[operation] ?? 0), 0);
}

describe('the AWS calls of pausing and resuming a run (issue #2 budget), each step a cold container', () => {
  let runtime: TestRuntime;
  let paths: CallPaths;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    paths = await CallPaths.open(runtime, runtime.baseDirectory);
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  /** A run paused with a cold AwaitApproval container; returns what that step called. */
  async function pauseMeasured(input: string): Promise<{ runId: string; snapshot: Record<string, number> }> {
    const runId = await paths.startRun(input);
    const reply = await paths.runToModelReply(runId);
    expect(reply.route).toBe('approval');
    runtime.calls.reset();
    await paths.suspend(runId, reply);
    return { runId, snapshot: runtime.calls.snapshot() };
  }

  /** A run paused on its card, each step a cold container, nothing measured yet. */
  async function pausedRun(input = ONE_PREVIEWING_CALL): Promise<{ runId: string; reply: ModelReply }> {
    const runId = await paths.startRun(input);
    const reply = await paths.runToModelReply(runId);
    await paths.suspend(runId, reply);
    return { runId, reply };
  }

  it('pauses with reads of the run, its card, the decision and its owner, one page read for its one preview, four writes and one KMS call', async () => {
    // Act
    const { runId, snapshot } = await pauseMeasured(ONE_PREVIEWING_CALL);

    // Assess
    expect(snapshot).toEqual({
      // the run, its card and the turn's decision together (issue #29: a retried pause sees both),
      // then the owner's current record (issue #9: previews under current rights), and the page its
      // preview shows. Issue #26 gave up the one BatchGetItem of the first four: it took the owner
      // named by the state machine, a port method and an adapter of its own, and saved one round
      // trip and no read capacity (README, "Benchmark")
      'DynamoDB:GetItem': 5,
      // the card with its sealed token (indexed for admins), and its approver entry (issues #16, #27)
      'DynamoDB:PutItem': 2,
      // the run: waiting; the card's outbox marked sent after the event (issue #29: once per pause)
      'DynamoDB:UpdateItem': 2,
      'EventBridge:PutEvents': 1, // "Run Awaiting Approval"
      'KMS:Decrypt': 1, // unwrap the run state's sealing key, which then seals card and token
    });
    expect(dynamoReads(snapshot) - 1).toBeLessThanOrEqual(4); // 4 reads + 1 per previewing call
    // issue #2's two writes, plus the card's one approver entry, whatever its groups (issue #27),
    // and the outbox mark (issue #29)
    expect(dynamoWrites(snapshot)).toBeLessThanOrEqual(4);
    expect(runtime.calls.total('KMS')).toBeLessThanOrEqual(1);
    expect((await runtime.dependencies.runs.getRun(runId))?.record.status).toBe('waiting');
  });

  it('pauses a turn of five previewing calls with one bounded page read per call and still one KMS call', async () => {
    // Act
    const { snapshot } = await pauseMeasured(FIVE_PREVIEWING_CALLS);

    // Assess
    expect(dynamoReads(snapshot)).toBeLessThanOrEqual(4 + 5); // issue #4: one bounded read per previewing call
    expect(dynamoWrites(snapshot)).toBe(4);
    expect(snapshot['KMS:Decrypt']).toBe(1);
    expect(runtime.calls.total('KMS')).toBe(1);
    expect(snapshot['EventBridge:PutEvents']).toBe(1);
  });

  it('resumes with one read of the card, one KMS decrypt and one SendTaskSuccess, besides reading the approver and recording the receipt', async () => {
    // Prepare
    const runId = await paths.startRun(ONE_PREVIEWING_CALL);
    const reply = await paths.runToModelReply(runId);
    await paths.suspend(runId, reply);
    const digest = await paths.digestOf(runId);
    const approverRead = await (async () => {
      runtime.calls.reset();
      await readPrincipal(
        { requestContext: { authorizer: { jwt: { claims: { sub: BENCH_USER_ID }, scopes: [] } } } } as never,
        runtime.dependencies.users,
      );
      return runtime.calls.snapshot();
    })();
    runtime.calls.reset();

    // Act
    const answer = await paths.decide(runId, digest, 'approve');
    const snapshot = runtime.calls.snapshot();

    // Assess
    expect(answer.statusCode).toBe(200);
    expect(approverRead).toEqual({ 'DynamoDB:GetItem': 1 });
    expect(snapshot).toEqual({
      'DynamoDB:GetItem': 2, // the approver's grants (every API request); the card
      // the decision claim (conditional), before the token is used; its receipt entry (conditional);
      // the approver's response, for approver analytics (issue #25)
      'DynamoDB:PutItem': 3,
      'DynamoDB:Query': 1, // the run's receipt chain, whose last entry the new one names (issue #25)
      // the card leaves the inbox (the card item and its approver entry); the decision is marked
      // delivered, so the probe does not redeliver it (issue #29)
      'DynamoDB:UpdateItem': 3,
      'EventBridge:PutEvents': 1, // "Card Closed": the channels update their messages (issue #23)
      'KMS:Decrypt': 1, // the card's sealing key, which also opens the sealed token
      'KMS:Sign': 1, // the receipt entry's signature (issue #25)
      'SFN:SendTaskSuccess': 1,
    });
    // issue #2: the resume path (beyond authenticating the request) reads the card once and
    // decrypts once; issue #25 adds the chain's one Query and one signature.
    expect(dynamoReads(snapshot) - dynamoReads(approverRead)).toBeLessThanOrEqual(1 + 1);
    expect(snapshot['KMS:Decrypt']).toBe(1);
  });

  it('records an edit like an approval: the claim, its signed receipt entry and the delivery (issue #25)', async () => {
    // Prepare
    const { runId } = await pausedRun();
    const digest = await paths.digestOf(runId);
    runtime.calls.reset();

    // Act
    const answer = await paths.edit(runId, digest, [
      { index: 0, arguments: { pageId: 'bench-1', description: 'Spring sale, edited' } },
    ]);
    const snapshot = runtime.calls.snapshot();

    // Assess: an edit appended no entry before issue #25; now it is signed like a decision, so it
    // gains the chain's Query, the entry's PutItem, its KMS Sign and the editor's response
    expect(answer.statusCode).toBe(200);
    expect(snapshot).toEqual({
      'DynamoDB:GetItem': 2, // the approver's grants; the card
      'DynamoDB:PutItem': 3, // the edit's claim; its receipt entry; the editor's response (analytics)
      'DynamoDB:Query': 1, // the run's receipt chain, whose last entry the new one names
      'DynamoDB:UpdateItem': 3, // the card and its approver entry closed; the claim marked delivered
      'EventBridge:PutEvents': 1, // "Card Closed"
      'KMS:Decrypt': 1, // the card's sealing key, which also opens the sealed token
      'KMS:Sign': 1, // the edit entry's signature
      'SFN:SendTaskSuccess': 1,
    });
  });

  it('carries a decision on at a retried pause after checking its receipt entry: one chain Query more (issue #25)', async () => {
    // Prepare: decided and delivered, then the pause of the same turn runs again (a retry)
    const { runId, reply } = await pausedRun();
    await paths.decide(runId, await paths.digestOf(runId), 'approve');
    runtime.calls.reset();

    // Act
    const retried = await paths.suspend(runId, reply).then(
      () => 'waiting',
      (error: Error) => error.name,
    );
    const snapshot = runtime.calls.snapshot();

    // Assess
    expect(retried).toBe('countersign.Approved');
    expect(snapshot).toEqual({
      'DynamoDB:GetItem': 3, // the run, its card and the turn's decision, at once
      'DynamoDB:Query': 1, // the run's receipt chain: the decision's entry is there (issue #25)
      // the card and its approver entry closed (already, by the delivery); the decision marked delivered
      'DynamoDB:UpdateItem': 3,
    });
  });

  it('executes an approved call under the call ledger: one query of the turn, a write before and after the call', async () => {
    // Prepare
    const runId = await paths.startRun(ONE_PREVIEWING_CALL);
    const reply = await paths.runToModelReply(runId);
    await paths.suspend(runId, reply);
    await paths.decide(runId, await paths.digestOf(runId), 'approve');
    runtime.calls.reset();

    // Act
    await paths.execute(runId, reply.turn);
    const snapshot = runtime.calls.snapshot();

    // Assess
    expect(snapshot).toEqual({
      // the run; the approval on record and its card (what the approval covered, issue #20); the
      // acting user; the page the tool reads (its access check)
      'DynamoDB:GetItem': 5,
      'DynamoDB:Query': 1, // the turn's call ledger (issue #29): what an earlier attempt ran
      'DynamoDB:PutItem': 2, // the ledger: the call taken, then its result recorded (issue #29)
      // the page write (conditional on the call's idempotency key); the run, its results recorded;
      // its card (already closed by the decision) and the card's inbox entry, closed again
      'DynamoDB:UpdateItem': 4,
      'KMS:Decrypt': 1, // the run state's sealing key, which also seals the result and the new state
    });
    expect((await runtime.dependencies.pages.getPage('bench-1'))?.description).toBe('Spring sale');
  });

  it('reads a call whole with the approver, the card and one KMS call, and writes nothing', async () => {
    // Prepare
    const runId = await paths.startRun(FIVE_PREVIEWING_CALLS);
    const reply = await paths.runToModelReply(runId);
    await paths.suspend(runId, reply);
    runtime.calls.reset();

    // Act
    const answer = await paths.readCall(runId, 4);
    const snapshot = runtime.calls.snapshot();

    // Assess
    expect(answer.statusCode).toBe(200);
    expect(answer.json.arguments).toEqual({ pageId: 'bench-5', description: 'Offer 5' });
    expect(snapshot).toEqual({
      'DynamoDB:GetItem': 2, // the approver's grants (every API request); the card
      'KMS:Decrypt': 1, // the card's sealing key
    });
  });

  it('counts the same calls for every run: the budget is deterministic', async () => {
    // Prepare
    const snapshots: Array<Record<string, number>> = [];

    // Act
    for (let attempt = 0; attempt < 3; attempt += 1) {
      snapshots.push((await pauseMeasured(ONE_PREVIEWING_CALL)).snapshot);
    }

    // Assess
    expect(snapshots[1]).toEqual(snapshots[0]);
    expect(snapshots[2]).toEqual(snapshots[0]);
  });
});
