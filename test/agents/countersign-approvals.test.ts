import { describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../lambdas/agents/countersign-approvals.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { refusalOf } from '../core/runs/use-case-harness.js';
import {
  approvalsWithFakeCountersign,
  decidedWith,
  runInStatus,
  SECRET_TOKEN,
  SUBMITTED,
} from './fake-countersign.js';

function invoiceRequest(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    configurationId: 'billing-agent',
    clientKey: 'conversation-7-turn-2',
    tools: [{ name: 'send_invoice', effect: 'write' }],
    calls: [
      { tool: 'send_invoice', callId: 'call_1', arguments: { customer: 'ACME', amountCents: 120_000 } },
    ],
    ...overrides,
  };
}

const APPROVED = { index: 0, callId: 'call_1', tool: 'send_invoice', decision: 'approved' };

describe('the approvals the SDK adapters share', () => {
  it('submits the turn once and long-polls until it is decided, each call’s verdict with the arguments to run', async () => {
    // Prepare
    const { approvals, sent } = approvalsWithFakeCountersign({
      submit: [SUBMITTED],
      poll: [runInStatus('pending'), decidedWith([APPROVED])],
    });

    // Act
    const answer = await approvals.requestApproval(invoiceRequest());

    // Assess
    expect(answer).toEqual({
      runId: 'run-1',
      calls: [{ ...APPROVED, arguments: { customer: 'ACME', amountCents: 120_000 } }],
    });
    expect(sent.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /external-runs',
      'GET /external-runs/run-1?wait=25',
      'GET /external-runs/run-1?wait=25',
    ]);
    expect(sent[0]?.body).toEqual({ ...invoiceRequest(), calls: invoiceRequest().calls });
    expect(sent[0]?.authorization).toBe(`Bearer ${SECRET_TOKEN}`);
  });

  it('gives an edited call the approver’s arguments and who edited, and counts other arguments as an edit even unsaid', async () => {
    // Prepare
    const edited = { customer: 'ACME', amountCents: 100_000 };
    const { approvals } = approvalsWithFakeCountersign({
      submit: [SUBMITTED],
      poll: [
        decidedWith([
          { ...APPROVED, arguments: edited, edited: { by: 'approver-1' } },
          { ...APPROVED, index: 1, callId: 'call_2', arguments: edited },
          { ...APPROVED, index: 2, callId: 'call_3', arguments: { amountCents: 120_000, customer: 'ACME' } },
        ]),
      ],
    });
    const call = invoiceRequest().calls[0] as ApprovalRequest['calls'][number];

    // Act
    const answer = await approvals.requestApproval(
      invoiceRequest({
        calls: [call, { ...call, callId: 'call_2' }, { ...call, callId: 'call_3' }],
      }),
    );

    // Assess: the same arguments in another key order are no edit
    expect(
      answer.calls.map((verdict) => verdict.decision === 'approved' && [verdict.arguments, verdict.edited]),
    ).toEqual([
      [edited, { by: 'approver-1' }],
      [edited, { by: 'an approver' }],
      [{ customer: 'ACME', amountCents: 120_000 }, undefined],
    ]);
  });

  it.each([
    [
      'a tool name that is not one',
      { tools: [{ name: 'send invoice; rm -rf', effect: 'write' as const }] },
      'tools.0.name',
    ],
    [
      'a call id with a line break',
      { calls: [{ tool: 'send_invoice', callId: 'call\n1', arguments: {} }] },
      'calls[0].callId',
    ],
    [
      'a call id over 200 characters',
      { calls: [{ tool: 'send_invoice', callId: 'c'.repeat(201), arguments: {} }] },
      'calls[0].callId',
    ],
    [
      'two calls with one call id',
      {
        calls: [
          { tool: 'send_invoice', callId: 'call_1', arguments: {} },
          { tool: 'send_invoice', callId: 'call_1', arguments: {} },
        ],
      },
      'calls[1].callId',
    ],
    [
      'arguments that are a list',
      { calls: [{ tool: 'send_invoice', arguments: [1, 2] }] },
      'calls[0].arguments',
    ],
    [
      'arguments JSON cannot carry',
      { calls: [{ tool: 'send_invoice', arguments: { amount: 10n } }] },
      'calls[0].arguments',
    ],
    [
      'arguments nested past the card’s depth',
      {
        calls: [{ tool: 'send_invoice', arguments: JSON.parse(`${'{"a":'.repeat(200)}1${'}'.repeat(200)}`) }],
      },
      'calls[0].arguments',
    ],
    [
      'arguments over 200 KB',
      { calls: [{ tool: 'send_invoice', arguments: { text: 'x'.repeat(200_001) } }] },
      'calls: arguments of',
    ],
    [
      'a preview over its line limit',
      { calls: [{ tool: 'send_invoice', arguments: {}, preview: Array.from({ length: 21 }, () => 'line') }] },
      'calls.0.preview',
    ],
    [
      'more calls than a card holds',
      { calls: Array.from({ length: 51 }, () => ({ tool: 'send_invoice', arguments: {} })) },
      'calls',
    ],
  ])('refuses %s before anything is sent, naming the field', async (_label, overrides, field) => {
    // Prepare
    const { approvals, sent } = approvalsWithFakeCountersign({ submit: [SUBMITTED] });

    // Act
    const error = await refusalOf(
      approvals.requestApproval(invoiceRequest(overrides as Partial<ApprovalRequest>)),
    );

    // Assess
    expect(error.code).toBe('bad-request');
    expect(error.message).toContain(field);
    expect(sent).toEqual([]);
  });

  it('fails closed, naming the error code and never the token, when countersign cannot be reached after three attempts', async () => {
    // Prepare
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error(`connect ECONNREFUSED (${SECRET_TOKEN})`), { code: 'ECONNREFUSED' }),
    });
    const { approvals, sent } = approvalsWithFakeCountersign({ submit: [{ fail: refused }] });

    // Act
    const error = await refusalOf(approvals.requestApproval(invoiceRequest()));

    // Assess
    expect(error.code).toBe('unavailable');
    expect(error.message).toBe(
      TEXTS.agentCountersignUnreachable('submit the turn', 'TypeError ECONNREFUSED'),
    );
    expect(error.message).not.toContain('secret');
    expect(sent).toHaveLength(3);
  });

  it('retries a 503 and fails closed when it stays unavailable; recovers when the next attempt answers', async () => {
    // Prepare
    const unavailable = { status: 503, body: { error: { code: 'unavailable', message: 'Try again.' } } };
    const failing = approvalsWithFakeCountersign({ submit: [SUBMITTED], poll: [unavailable] });
    const recovering = approvalsWithFakeCountersign({
      submit: [SUBMITTED],
      poll: [unavailable, { status: 502 }, decidedWith([APPROVED])],
    });

    // Act
    const error = await refusalOf(failing.approvals.requestApproval(invoiceRequest()));
    const answer = await recovering.approvals.requestApproval(invoiceRequest());

    // Assess
    expect(error).toMatchObject({
      code: 'unavailable',
      message: TEXTS.agentCountersignFailing('read the answer', 503),
    });
    expect(failing.sent).toHaveLength(4);
    expect(answer.calls[0]?.decision).toBe('approved');
  });

  it('gives up on a request that never answers, by its own deadline', async () => {
    // Prepare
    const { approvals, sent } = approvalsWithFakeCountersign(
      { submit: ['hang'] },
      { requestMarginSeconds: 0.02 },
    );

    // Act
    const error = await refusalOf(approvals.submitTurn(invoiceRequest()));

    // Assess
    expect(error).toMatchObject({ code: 'unavailable' });
    expect(error.message).toContain('no answer within 0.02 s');
    expect(sent).toHaveLength(3);
  });

  it.each([
    ['expired', 'The approval window closed.'],
    ['cancelled', 'changed my mind'],
    ['failed', undefined],
  ] as const)(
    'refuses a run that ended %s: no verdict, the run and its status named',
    async (status, reason) => {
      // Prepare
      const { approvals } = approvalsWithFakeCountersign({
        submit: [SUBMITTED],
        poll: [runInStatus(status, reason)],
      });

      // Act
      const error = await refusalOf(approvals.requestApproval(invoiceRequest()));

      // Assess
      expect(error).toMatchObject({
        code: 'gone',
        message: TEXTS.agentRunEnded('run-1', status, reason),
        details: { runId: 'run-1', status },
      });
    },
  );

  it('stops waiting at its bound with an approval-timeout naming the run, which still waits', async () => {
    // Prepare: a clock that moves ten minutes per poll
    let clock = 0;
    const { approvals, sent } = approvalsWithFakeCountersign(
      { submit: [SUBMITTED], poll: [runInStatus('pending')] },
      {
        now: () => {
          clock += 600_000;
          return clock;
        },
      },
    );

    // Act
    const error = await refusalOf(approvals.requestApproval(invoiceRequest(), { maxWaitSeconds: 1_800 }));

    // Assess
    expect(error).toMatchObject({
      code: 'approval-timeout',
      message: TEXTS.agentWaitElapsed('run-1', 1_800),
      details: { runId: 'run-1' },
    });
    expect(sent.filter((request) => request.method === 'GET').length).toBeGreaterThan(0);
  });

  it('stops a long poll in flight when the caller aborts, with the caller’s reason', async () => {
    // Prepare
    const { approvals } = approvalsWithFakeCountersign({ submit: [SUBMITTED], poll: ['hang'] });
    const controller = new AbortController();
    const reason = new Error('the user closed the chat');

    // Act
    const waiting = approvals.requestApproval(invoiceRequest(), { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 20);

    // Assess
    await expect(waiting).rejects.toBe(reason);
  });

  it('refuses an answer that does not match the turn, and passes on a refusal’s own message', async () => {
    // Prepare
    const mismatched = approvalsWithFakeCountersign({
      submit: [SUBMITTED],
      poll: [decidedWith([{ ...APPROVED, tool: 'delete_customer' }])],
    });
    const refused = approvalsWithFakeCountersign({
      submit: [{ status: 409, body: { error: { code: 'conflict', message: TEXTS.clientKeyReused } } }],
    });
    const unauthorized = approvalsWithFakeCountersign({
      submit: [{ status: 401, body: { message: 'Unauthorized' } }],
    });

    // Act
    const mismatch = await refusalOf(mismatched.approvals.requestApproval(invoiceRequest()));
    const conflict = await refusalOf(refused.approvals.requestApproval(invoiceRequest()));
    const unauthenticated = await refusalOf(unauthorized.approvals.requestApproval(invoiceRequest()));

    // Assess
    expect(mismatch).toMatchObject({ code: 'internal', message: TEXTS.agentAnswerMismatch('run-1') });
    expect(conflict).toMatchObject({
      code: 'conflict',
      message: TEXTS.agentCountersignRefused('submit the turn', 409, TEXTS.clientKeyReused),
    });
    expect(unauthenticated.code).toBe('unauthenticated');
    expect(unauthenticated.message).not.toContain(SECRET_TOKEN);
  });
});
