import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { useTestRuntime } from '../support/local-runtime.js';

/**
 * A path segment as a hostile client writes it on the wire. `fetch` resolves `..` (even
 * `%2E%2E`) before sending, so these go out through node:http exactly as written.
 */
const HOSTILE_SEGMENTS: ReadonlyArray<readonly [string, string]> = [
  ['over-long', 'a'.repeat(3000)],
  ['control characters', '%00%0D%0Aa%1B'],
  ['a parent segment', '..'],
  ['encoded slashes', '..%2F..%2Fetc'],
  ['a doubly encoded slash', '%252F'],
];

/** Each route, the role that may call it, a body it accepts, and its refusal of a malformed or unknown id. */
const ROUTES_UNDER_TEST: ReadonlyArray<{
  readonly method: string;
  readonly path: (segment: string) => string;
  readonly as: string | 'machine';
  readonly body?: unknown;
  readonly status: number;
  readonly message?: string;
}> = [
  { method: 'GET', path: (v) => `/runs/${v}`, as: 'admin', status: 404, message: TEXTS.runNotFound },
  {
    method: 'POST',
    path: (v) => `/runs/${v}/decision`,
    as: 'approver',
    body: { decision: 'approve', digest: 'x' },
    status: 404,
    message: TEXTS.runNotFound,
  },
  { method: 'GET', path: (v) => `/runs/${v}/events`, as: 'admin', status: 404, message: TEXTS.runNotFound },
  {
    method: 'GET',
    path: (v) => `/runs/${v}/calls/0`,
    as: 'approver',
    status: 404,
    message: TEXTS.runNotFound,
  },
  {
    method: 'GET',
    path: (v) => `/runs/r-1/calls/${v}`,
    as: 'approver',
    status: 400,
    message: TEXTS.callIndexInvalid,
  },
  {
    method: 'GET',
    path: (v) => `/external-runs/${v}`,
    as: 'machine',
    status: 404,
    message: TEXTS.runNotFound,
  },
  {
    method: 'POST',
    path: (v) => `/configurations/${v}/complete`,
    as: 'admin',
    body: { prompt: 'Hello' },
    status: 404,
    message: TEXTS.configurationNotFound,
  },
  // The admin's and the delegation's ids are free text: one no record has is unknown (404).
  { method: 'GET', path: (v) => `/admin/users/${v}`, as: 'admin', status: 404 },
  { method: 'DELETE', path: (v) => `/admin/tasks/${v}`, as: 'admin', status: 404 },
  { method: 'GET', path: (v) => `/admin/skills/${v}`, as: 'admin', status: 404 },
  {
    method: 'PUT',
    path: (v) => `/admin/skills/attachments/tasks/${v}`,
    as: 'admin',
    body: { skillIds: [] },
    status: 404,
  },
  {
    method: 'PUT',
    path: (v) => `/admin/skills/attachments/${v}/t-1`,
    as: 'admin',
    body: { skillIds: [] },
    status: 404,
    message: TEXTS.skillsResourceNotFound,
  },
  { method: 'DELETE', path: (v) => `/users/${v}/away`, as: 'admin', status: 404 },
];

describe('a hostile path parameter gets its route’s documented refusal, never a 500', () => {
  const runtime = useTestRuntime();

  /** One request as written, through the local server's own path matching. */
  async function send(method: string, path: string, token: string, body?: unknown) {
    const url = new URL(runtime.url);
    return new Promise<{ status: number; json: { error?: { code: string; message: string } } }>(
      (resolve, reject) => {
        const sent = request(
          {
            host: url.hostname,
            port: url.port,
            method,
            path,
            headers: {
              authorization: `Bearer ${token}`,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
          },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              text += chunk;
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(text) }));
          },
        );
        sent.on('error', reject);
        sent.end(body === undefined ? undefined : JSON.stringify(body));
      },
    );
  }

  const cases = ROUTES_UNDER_TEST.flatMap((route) =>
    HOSTILE_SEGMENTS.map(
      ([label, segment]) => [`${route.method} ${route.path('{…}')}`, label, route, segment] as const,
    ),
  );

  it.each(cases)('%s with %s', async (_route, _label, route, segment) => {
    // Prepare
    const token =
      route.as === 'machine'
        ? await runtime.machine.clients.issueToken('demo-agent')
        : (runtime.tokens[route.as] ?? '');

    // Act
    const answer = await send(route.method, route.path(segment), token, route.body);

    // Assess
    expect(answer.status).toBe(route.status);
    expect(answer.json.error?.code).toBe(route.status === 400 ? 'bad-request' : 'not-found');
    if (route.message !== undefined) expect(answer.json.error?.message).toBe(route.message);
  });
});
