import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../../lambdas/core/errors.js';
import { errorResponse } from '../../../lambdas/handlers/http/http-errors.js';

const bodyOf = (response: ReturnType<typeof errorResponse>) => JSON.parse(String(response.body));

describe('errorResponse', () => {
  it.each([
    ['bad-request', 400],
    ['unauthenticated', 401],
    ['forbidden', 403],
    ['not-found', 404],
    ['stale-digest', 409],
    ['conflict', 409],
    ['gone', 410],
    ['payload-too-large', 413],
  ] as const)('maps %s to %i with its message and code', (code, status) => {
    const response = errorResponse(new CountersignError(code, `a ${code} message`, { field: 'body.x' }));
    expect(response.statusCode).toBe(status);
    expect(bodyOf(response)).toEqual({ error: { code, message: `a ${code} message`, field: 'body.x' } });
  });

  it('maps a used-up quota to 429 with Retry-After in seconds', () => {
    const response = errorResponse(
      new CountersignError('too-many-requests', 'You started as many runs as you may this minute.', {
        retryAfterSeconds: 42,
      }),
    );
    expect(response.statusCode).toBe(429);
    expect(response.headers?.['retry-after']).toBe('42');
    expect(bodyOf(response).error.code).toBe('too-many-requests');
  });

  it('says nothing about an unknown error, however it reads', () => {
    const response = errorResponse(new Error('Access denied for user x@host'));
    expect(response.statusCode).toBe(500);
    expect(bodyOf(response)).toEqual({ error: { code: 'internal', message: 'Internal error.' } });
  });

  it('hides the message of an internal countersign error and of one not meant for clients', () => {
    expect(bodyOf(errorResponse(new CountersignError('internal', 'table missing')))).toEqual({
      error: { code: 'internal', message: 'Internal error.' },
    });
    expect(bodyOf(errorResponse(new CountersignError('configuration', 'secret arn:aws:…')))).toEqual({
      error: { code: 'internal', message: 'Internal error.' },
    });
  });

  it('says plainly that a sealed state was refused, as a 500', () => {
    const response = errorResponse(
      new CountersignError('sealed-state-rejected', 'The sealed run state was refused.'),
    );
    expect(response.statusCode).toBe(500);
    expect(bodyOf(response).error.code).toBe('sealed-state-rejected');
  });

  it.each([
    ['model-provider-failed', 502],
    ['model-provider-unavailable', 503],
    ['model-timeout', 504],
  ] as const)('says plainly that the model failed a synchronous request: %s is %i', (code, status) => {
    const response = errorResponse(new CountersignError(code, 'The model provider could not answer.'));
    expect(response.statusCode).toBe(status);
    expect(bodyOf(response)).toEqual({ error: { code, message: 'The model provider could not answer.' } });
  });

  it('still hides a model failure of the run path (its reason goes to the run, not to a client)', () => {
    const response = errorResponse(new CountersignError('model-failed', 'HTTP 429 from the provider'));
    expect(response.statusCode).toBe(500);
    expect(bodyOf(response).error.code).toBe('internal');
  });
});
