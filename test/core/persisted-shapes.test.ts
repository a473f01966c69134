import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readableApproverResponseSchema } from '../../lambdas/core/analytics/approver-response.js';
import {
  APPROVAL_CARD_SCHEMA_VERSION,
  parseApprovalCard,
} from '../../lambdas/core/approvals/approval-card.js';
import {
  APPROVAL_RECORD_SCHEMA_VERSION,
  DECISION_RECORD_SCHEMA_VERSION,
  readableApprovalRecordSchema,
  readableDecisionRecordSchema,
  readCardShown,
} from '../../lambdas/core/approvals/decision-record.js';
import {
  guardOnCard,
  isNotificationPending,
  readableStoredCardSchema,
  STORED_CARD_SCHEMA_VERSION,
} from '../../lambdas/core/approvals/stored-card.js';
import {
  readableClientKeyClaimSchema,
  readableExecutionReportSchema,
} from '../../lambdas/core/external-runs/external-run-store.js';
import { readableChainEntrySchema } from '../../lambdas/core/receipts/chain-entry.js';
import { readableRunRecordSchema } from '../../lambdas/core/run-record.js';
import { readableCallRecordSchema } from '../../lambdas/core/runs/call-record.js';
import { parseRunState } from '../../lambdas/core/runs/run-state.js';

const fixtures = new URL('../fixtures/', import.meta.url);

/** Stored cards and call records hold binary attributes; their fixtures spell them in base64 (README). */
function withBinaryAttributes(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const item = value as Record<string, unknown>;
  const binary = (name: string) =>
    typeof item[name] === 'string' ? { [name]: new Uint8Array(Buffer.from(item[name], 'base64')) } : {};
  return Object.assign(
    Object.create(null),
    item,
    binary('sealedCard'),
    binary('sealedToken'),
    binary('sealedResult'),
  );
}

/** Each persisted shape: its fixture folder and the reader the code uses on it. */
const shapes: Array<{ folder: string; read: (value: unknown) => unknown }> = [
  { folder: 'approval-card', read: parseApprovalCard },
  { folder: 'run-state', read: parseRunState },
  { folder: 'stored-card', read: (value) => readableStoredCardSchema.parse(withBinaryAttributes(value)) },
  { folder: 'run-record', read: (value) => readableRunRecordSchema.parse(value) },
  { folder: 'decision-record', read: (value) => readableDecisionRecordSchema.parse(value) },
  { folder: 'approval-record', read: (value) => readableApprovalRecordSchema.parse(value) },
  { folder: 'call-record', read: (value) => readableCallRecordSchema.parse(withBinaryAttributes(value)) },
  { folder: 'chain-entry', read: (value) => readableChainEntrySchema.parse(value) },
  { folder: 'approver-response', read: (value) => readableApproverResponseSchema.parse(value) },
  { folder: 'client-key', read: (value) => readableClientKeyClaimSchema.parse(value) },
  { folder: 'execution-report', read: (value) => readableExecutionReportSchema.parse(value) },
];

function fixtureFiles(folder: string): string[] {
  return readdirSync(new URL(`${folder}/`, fixtures)).filter((name) => name.endsWith('.json'));
}

function readFixture(folder: string, file: string): unknown {
  return JSON.parse(readFileSync(new URL(`${folder}/${file}`, fixtures), 'utf8'));
}

describe('persisted shapes', () => {
  for (const { folder, read } of shapes) {
    const files = fixtureFiles(folder);

    it(`${folder}: has fixtures of each kind (accepted, future version, malformed, prototype key)`, () => {
      expect(files.filter((file) => !file.startsWith('refused-')).length).toBeGreaterThan(0);
      for (const kind of ['future-version', 'malformed', 'proto-key', 'constructor-key']) {
        expect(files).toContain(`refused-${kind}.json`);
      }
    });

    for (const file of files) {
      const refused = file.startsWith('refused-');
      it(`${folder}: ${refused ? 'refuses' : 'still reads'} ${file}`, () => {
        // Prepare
        const raw = readFixture(folder, file);

        // Act
        const reading = () => read(raw);

        // Assess
        if (refused) expect(reading).toThrow();
        else expect(reading()).toMatchObject({ runId: (raw as { runId: string }).runId });
      });
    }
  }

  it('keeps every accepted fixture byte for byte (a new version adds a file, never edits one)', () => {
    // Prepare
    const manifest = readFileSync(new URL('persisted-shapes.sha256', fixtures), 'utf8');

    // Act
    const actual = shapes.flatMap(({ folder }) =>
      fixtureFiles(folder).map((file) => {
        const bytes = readFileSync(new URL(`${folder}/${file}`, fixtures));
        return `${createHash('sha256').update(bytes).digest('hex')}  ${folder}/${file}`;
      }),
    );

    // Assess
    for (const line of actual) expect(manifest.split('\n')).toContain(line);
  });
});

describe('reading earlier versions as the current one', () => {
  it('joins a version 1 card’s previews to their calls, once, by index', () => {
    // Act
    const card = parseApprovalCard(readFixture('approval-card', 'v1-with-previews.json'));

    // Assess
    expect(card.schemaVersion).toBe(APPROVAL_CARD_SCHEMA_VERSION);
    expect(card.pendingCalls.map((call) => [call.tool, call.preview?.lines[0]])).toEqual([
      ['update_page_metadata', 'Page 12 (en): 1 field would change.'],
      ['append_page_keywords', 'Preview failed (TimeoutError).'],
    ]);
    expect(card.pendingCalls[1]?.preview?.failed).toBe(true);
  });

  it('counts the calls of a version 1 card sealed before `offered` as offered, without a preview', () => {
    const card = parseApprovalCard(readFixture('approval-card', 'v1-before-previews.json'));
    expect(card.pendingCalls).toEqual([
      {
        index: 0,
        tool: 'update_page_metadata',
        arguments: { pageId: '12', description: 'Spring sale' },
        offered: true,
      },
    ]);
  });

  it('reads a card’s context and its previews’ word-level diffs, and a run state’s request', () => {
    // Act
    const card = parseApprovalCard(readFixture('approval-card', 'v2-context-and-diffs.json'));
    const state = parseRunState(readFixture('run-state', 'v1-with-request.json'));

    // Assess
    expect(card.context).toEqual({
      request: { text: 'Move the description of page 12 to the summer range', totalCharacters: 52 },
      reasoning: {
        text: 'The page still announces the spring range; I will set the summer text.',
        totalCharacters: 70,
      },
      ownerName: 'Eda Editor',
    });
    expect(card.pendingCalls[0]?.preview?.diffs?.[0]?.parts).toContainEqual({ kind: 'elided', words: 6 });
    expect(state.request).toBe('Move the description of page 12 to the summer range');
  });

  it('keeps a key the model itself proposed in its arguments', () => {
    const card = parseApprovalCard(readFixture('approval-card', 'v2.json'));
    expect(card.pendingCalls[2]?.arguments).toEqual({ query: 'sale', constructor: "the model's own key" });
  });

  it.each([
    ['v1-waiting.json', 'open'],
    ['v1-decided-k-of-n.json', 'closed'],
  ])('reads the version 1 stored card %s as %s', (file, state) => {
    const stored = readableStoredCardSchema.parse(withBinaryAttributes(readFixture('stored-card', file)));
    expect(stored).toMatchObject({ schemaVersion: STORED_CARD_SCHEMA_VERSION, state });
    expect(stored.closedBecause).toBeUndefined();
  });

  it('reads a version 2 card as the current version whose event went out (an outbox it never had)', () => {
    const stored = readableStoredCardSchema.parse(
      withBinaryAttributes(readFixture('stored-card', 'v2-open.json')),
    );
    expect(stored).toMatchObject({ schemaVersion: STORED_CARD_SCHEMA_VERSION, state: 'open' });
    expect(stored.waitId).toBeUndefined();
    expect(isNotificationPending(stored)).toBe(false);
  });

  it('reads a version 3 card as version 4 whose event went out, and keeps its guards', () => {
    const stored = readableStoredCardSchema.parse(
      withBinaryAttributes(readFixture('stored-card', 'v3-open-call-guards.json')),
    );
    expect(stored).toMatchObject({ schemaVersion: STORED_CARD_SCHEMA_VERSION, state: 'open' });
    expect(stored.callGuards?.length).toBeGreaterThan(0);
    expect(isNotificationPending(stored)).toBe(false);
  });

  it('keeps the wait and the outbox of a version 4 card', () => {
    const pending = readableStoredCardSchema.parse(
      withBinaryAttributes(readFixture('stored-card', 'v4-closed-notification-pending.json')),
    );
    expect(pending).toMatchObject({ waitId: 'wait-5f0c2b9e', state: 'closed', closedBecause: 'decided' });
    expect(isNotificationPending(pending)).toBe(true);
  });

  it('keeps the claim id of a version 3 decision record, and reads earlier ones without one', () => {
    expect(
      readableDecisionRecordSchema.parse(readFixture('decision-record', 'v3-with-claim-id.json')),
    ).toMatchObject({ schemaVersion: DECISION_RECORD_SCHEMA_VERSION, claimId: 'claim-9d4e7a1b' });
    for (const file of ['v1.json', 'v2.json']) {
      const record = readableDecisionRecordSchema.parse(readFixture('decision-record', file));
      expect(record.schemaVersion).toBe(DECISION_RECORD_SCHEMA_VERSION);
      expect(record.claimId).toBeUndefined();
    }
  });

  it('reads a version 2 run state whose reopened turn carries the results of calls that ran', () => {
    const state = parseRunState(readFixture('run-state', 'v2-reopened-after-a-call-ran.json'));
    expect(state.completedCalls).toEqual([
      { index: 0, callId: 'call-0-0', content: 'Updated page 12 (en): description.', isError: false },
    ]);
    expect(state.pendingCalls.map((call) => [call.index, call.callId])).toEqual([[0, 'call-0-1']]);
  });

  it.each(['v1.json', 'v1-unversioned.json'])(
    'reads the version 1 decision record %s as the current version, its card shown as text, decided through the API',
    (file) => {
      const raw = readFixture('decision-record', file) as { cardShown: unknown };
      const record = readableDecisionRecordSchema.parse(raw);
      expect(record).toMatchObject({ schemaVersion: DECISION_RECORD_SCHEMA_VERSION, channel: 'api' });
      expect(readCardShown(record.cardShown)).toEqual(raw.cardShown);
    },
  );

  it('keeps what a version 2 decision record says was shown, numbers DynamoDB cannot hold included', () => {
    const record = readableDecisionRecordSchema.parse(readFixture('decision-record', 'v2.json'));
    expect(record).toMatchObject({ schemaVersion: DECISION_RECORD_SCHEMA_VERSION, channel: 'api' });
    expect(readCardShown(record.cardShown).calls[0]?.arguments).toMatchObject({
      views: 1e300,
      id: 2 ** 60,
      '': 'empty key',
    });
  });

  it('reads the channel and the claim id of a version 4 decision record, and a version 3 one as the API’s', () => {
    const record = readableDecisionRecordSchema.parse(readFixture('decision-record', 'v4-slack.json'));
    expect(record).toMatchObject({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      channel: 'slack',
      claimId: 'claim-3b8f61d2',
    });
    expect(record.actingFor).toBeUndefined();
    expect(record.choices).toBeUndefined();
    const version3 = readableDecisionRecordSchema.parse(
      readFixture('decision-record', 'v3-with-claim-id.json'),
    );
    expect(version3).toMatchObject({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      channel: 'api',
      claimId: 'claim-9d4e7a1b',
    });
  });

  it.each([
    ['v1-unversioned.json', 'api'],
    ['v2-slack.json', 'slack'],
    ['v3-acting-for-per-call.json', 'api'],
  ])('reads the approval record %s as approved through %s', (file, channel) => {
    const record = readableApprovalRecordSchema.parse(readFixture('approval-record', file));
    expect(record).toMatchObject({ schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION, channel });
  });

  it('reads who a version 3 approval’s delegate approved for and its per-call choices, and a version 2 one as approving every call in its own right', () => {
    const delegated = readableApprovalRecordSchema.parse(
      readFixture('approval-record', 'v3-acting-for-per-call.json'),
    );
    const own = readableApprovalRecordSchema.parse(readFixture('approval-record', 'v2-slack.json'));
    expect(delegated).toMatchObject({
      approvedBy: 'dave',
      actingFor: 'approver',
      choices: [
        { index: 0, decision: 'approve' },
        { index: 1, decision: 'reject' },
      ],
    });
    expect(own.actingFor).toBeUndefined();
    expect(own.choices).toBeUndefined();
  });

  it('reads how a version 3 card guarded each call, and whose approvals lapsed', () => {
    const stored = readableStoredCardSchema.parse(
      withBinaryAttributes(readFixture('stored-card', 'v3-open-call-guards.json')),
    );
    expect(stored.lapsedApprovers).toEqual(['approver']);
    expect(guardOnCard(stored, { index: 0, tool: 'tickets__lookup' })).toBe('none');
    expect(guardOnCard(stored, { index: 1, tool: 'tickets__create_ticket' })).toBe('unconfirmed');
    // An entry that names another tool covers nothing.
    expect(guardOnCard(stored, { index: 1, tool: 'tickets__lookup' })).toBe('none');
  });

  it.each(['v2-open.json', 'v3-closed-without-call-guards.json'])(
    'takes the guards of %s, which records none, from its writeToolNames',
    (file) => {
      const stored = readableStoredCardSchema.parse(withBinaryAttributes(readFixture('stored-card', file)));
      expect(stored.schemaVersion).toBe(STORED_CARD_SCHEMA_VERSION);
      expect(guardOnCard(stored, { index: 0, tool: 'update_page_metadata' })).toBe('write');
      expect(guardOnCard(stored, { index: 1, tool: 'get_page' })).toBe('none');
    },
  );

  it('keeps each call’s guard in the run state and on the sealed card', () => {
    const state = parseRunState(readFixture('run-state', 'v1-call-guards.json'));
    const card = parseApprovalCard(readFixture('approval-card', 'v2-call-guards.json'));
    expect(state.pendingCalls.map((call) => call.guard)).toEqual(['none', 'unconfirmed']);
    expect(card.pendingCalls.map((call) => call.guard)).toEqual(['none', 'unconfirmed']);
  });

  it('reads a version 5 card’s escalation, its editor and the approvals given acting for someone or of some calls', () => {
    const stored = readableStoredCardSchema.parse(
      withBinaryAttributes(readFixture('stored-card', 'v5-open-escalated-delegated-edited.json')),
    );
    expect(stored.escalation).toEqual({
      steps: [
        { at: '2026-03-02T09:45:00.000Z', approverGroups: ['leads'] },
        { at: '2026-03-02T11:15:00.000Z', approverGroups: ['directors'] },
      ],
      reached: 1,
      notified: 1,
    });
    expect(stored.delegatedApprovals).toEqual([{ approver: 'reviewer', actingFor: 'approver' }]);
    expect(stored.approvalContents).toEqual([{ approver: 'carl', content: 'sha256:6f1d0a' }]);
    expect(stored).toMatchObject({ editedBy: 'approver', decisionGroups: [[0]], waitId: 'wait-3c1a' });
  });

  it.each(['v4-open-notified.json', 'v3-open-call-guards.json', 'v2-open.json'])(
    'reads %s as a card that never escalates',
    (file) => {
      const stored = readableStoredCardSchema.parse(withBinaryAttributes(readFixture('stored-card', file)));
      expect(stored.schemaVersion).toBe(STORED_CARD_SCHEMA_VERSION);
      expect(stored.escalation).toBeUndefined();
      expect(stored.delegatedApprovals).toBeUndefined();
    },
  );

  it('reads a version 3 approval card’s edited call, and a version 2 card’s calls as unedited', () => {
    const edited = parseApprovalCard(readFixture('approval-card', 'v3-edited.json'));
    const earlier = parseApprovalCard(readFixture('approval-card', 'v2-call-guards.json'));
    expect(edited.pendingCalls[0]?.edited).toEqual({
      by: 'ana',
      originalArguments: { pageId: '12', description: 'Sprnig sale' },
    });
    expect(earlier.schemaVersion).toBe(APPROVAL_CARD_SCHEMA_VERSION);
    expect(earlier.pendingCalls.every((call) => call.edited === undefined)).toBe(true);
  });

  it('reads a version 3 run state’s edited call, and a version 2 state’s calls as unedited', () => {
    const edited = parseRunState(readFixture('run-state', 'v4-edited-call.json'));
    const earlier = parseRunState(readFixture('run-state', 'v2-reopened-after-a-call-ran.json'));
    expect(edited.pendingCalls[0]).toMatchObject({
      arguments: { pageId: '12', description: 'Spring sale' },
      edited: { by: 'ana', originalArguments: { pageId: '12', description: 'Sprnig sale' } },
    });
    expect(earlier.pendingCalls.every((call) => call.edited === undefined)).toBe(true);
  });

  it('reads which external calls an approver may edit from a version 5 run state and a version 4 card', () => {
    const state = parseRunState(readFixture('run-state', 'v5-external-edited-call.json'));
    const card = parseApprovalCard(readFixture('approval-card', 'v4-external-editable.json'));
    const earlier = parseRunState(readFixture('run-state', 'v3-external.json'));
    for (const calls of [state.pendingCalls, card.pendingCalls]) {
      expect(calls.map((call) => call.editable)).toEqual([true, undefined]);
      expect(calls[0]?.edited).toEqual({
        by: 'ana',
        originalArguments: { customer: 'ACME', amountCents: 120000 },
      });
    }
    expect(earlier.pendingCalls.every((call) => call.editable === undefined)).toBe(true);
  });

  it('reads a version 3 run record’s escalation ladder, and a version 1 record as one without', () => {
    expect(
      readableRunRecordSchema.parse(readFixture('run-record', 'v4-escalation.json')).policy.escalation,
    ).toEqual([
      { afterMinutes: 30, approverGroups: ['leads'] },
      { afterMinutes: 120, approverGroups: ['directors'] },
    ]);
    expect(
      readableRunRecordSchema.parse(readFixture('run-record', 'v1.json')).policy.escalation,
    ).toBeUndefined();
  });

  it('reads who a version 6 decision’s delegate acted for, its per-call choices and channel, and a version 3 decision as taken in its own right for every call', () => {
    const delegated = readableDecisionRecordSchema.parse(
      readFixture('decision-record', 'v6-acting-for-per-call.json'),
    );
    const own = readableDecisionRecordSchema.parse(readFixture('decision-record', 'v3-with-claim-id.json'));
    expect(delegated).toMatchObject({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      channel: 'api',
      decidedBy: 'dave',
      actingFor: 'approver',
      delegatedApprovals: [{ approver: 'dave', actingFor: 'approver' }],
      choices: [
        { index: 0, decision: 'approve' },
        { index: 1, decision: 'reject', reason: 'not these keywords' },
      ],
    });
    expect(own).toMatchObject({ schemaVersion: DECISION_RECORD_SCHEMA_VERSION, claimId: 'claim-9d4e7a1b' });
    expect(own.actingFor).toBeUndefined();
    expect(own.choices).toBeUndefined();
  });

  it('keeps why a version 2 card closed', () => {
    const stored = readableStoredCardSchema.parse(
      withBinaryAttributes(readFixture('stored-card', 'v2-closed-expired.json')),
    );
    expect(stored).toMatchObject({ state: 'closed', closedBecause: 'expired' });
  });
});
