import {
  type CountersignApprovals,
  type CountersignApprovalsOptions,
  createCountersignApprovals,
} from '../../lambdas/agents/countersign-approvals.js';
import { createApiClient } from '../../lambdas/contract/api-client.js';

/** One request the agent sent, as the fake countersign received it. */
export interface SentRequest {
  method: string;
  path: string;
  body: unknown;
  authorization: string | null;
}

/** What the fake answers a request with: a JSON answer, or a failure of the transport itself. */
export type FakeAnswer = { status: number; body?: unknown } | { fail: Error } | 'hang';

export const SECRET_TOKEN = 'eyJ.secret-machine-token.sig';

/**
 * The approvals of an agent whose countersign is a scripted fetch (the typed client's transport):
 * each request gets the next answer its route is given, so a test fabricates any answer (an edit
 * the API does not give yet, a 503, a dropped connection, a request that never ends).
 */
export function approvalsWithFakeCountersign(
  answers: { submit?: FakeAnswer[]; poll?: FakeAnswer[]; report?: FakeAnswer[] },
  options: Partial<CountersignApprovalsOptions> = {},
): { approvals: CountersignApprovals; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const queues = {
    submit: [...(answers.submit ?? [])],
    poll: [...(answers.poll ?? [])],
    report: [...(answers.report ?? [])],
  };
  const fakeFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    const headers = new Headers(init?.headers);
    sent.push({
      method,
      path: `${url.pathname}${url.search}`,
      body: init?.body ? JSON.parse(String(init.body)) : undefined,
      authorization: headers.get('authorization'),
    });
    const route = method === 'POST' ? (url.pathname.endsWith('/report') ? 'report' : 'submit') : 'poll';
    const answer = queues[route].length > 1 ? queues[route].shift() : queues[route][0];
    if (answer === undefined) throw new Error(`no scripted answer for ${route}`);
    if (answer === 'hang') {
      return new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
      });
    }
    if ('fail' in answer) throw answer.fail;
    return new Response(answer.body === undefined ? '' : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'content-type': 'application/json' },
    });
  };
  const api = createApiClient({
    baseUrl: 'https://countersign.example.com',
    token: SECRET_TOKEN,
    fetch: fakeFetch,
  });
  return {
    approvals: createCountersignApprovals({ api, retryPauseSeconds: 0.001, maxWaitSeconds: 60, ...options }),
    sent,
  };
}

export const SUBMITTED = { status: 202, body: { runId: 'run-1', status: 'pending', repeated: false } };

/** GET /external-runs/run-1 answering the run decided with these calls. */
export function decidedWith(calls: unknown[]): FakeAnswer {
  return {
    status: 200,
    body: {
      runId: 'run-1',
      status: 'decided',
      configurationId: 'billing-agent',
      createdAt: '2026-12-02T04:00:00.000Z',
      calls,
      reports: [],
    },
  };
}

/** GET /external-runs/run-1 answering the run in this status, without calls. */
export function runInStatus(
  status: 'pending' | 'decided' | 'expired' | 'cancelled' | 'failed',
  reason?: string,
): FakeAnswer {
  return {
    status: 200,
    body: {
      runId: 'run-1',
      status,
      configurationId: 'billing-agent',
      createdAt: '2026-12-02T04:00:00.000Z',
      ...(reason ? { reason } : {}),
      reports: [],
    },
  };
}
