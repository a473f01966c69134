import { describe, expect, it } from 'vitest';
import { ERROR_NAMES } from '../../../lambdas/contract/state-names.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { errorResponse, RETRY_AFTER_SECONDS } from '../../../lambdas/handlers/http/http-errors.js';
import { stepError } from '../../../lambdas/handlers/steps/define-step.js';

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

  it('answers a transient fault 503 with Retry-After, with the facts written for the client', () => {
    const response = errorResponse(
      new CountersignError('unavailable', 'Your decision is on record.', {
        details: { decisionOnRecord: 'yes' },
      }),
    );
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    expect(bodyOf(response)).toEqual({
      error: { code: 'unavailable', message: 'Your decision is on record.', decisionOnRecord: 'yes' },
    });
  });

  it.each([
    ['a throttle', { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }],
    [
      'DynamoDB throughput',
      { name: 'ProvisionedThroughputExceededException', $metadata: { httpStatusCode: 400 } },
    ],
    ['EC2-style request limit', { name: 'RequestLimitExceeded', $metadata: { httpStatusCode: 503 } }],
    ['a service 500', { name: 'InternalServerError', $fault: 'server', $metadata: { httpStatusCode: 500 } }],
    ['a retryable trait', { name: 'SomethingElse', $retryable: {}, $metadata: { httpStatusCode: 400 } }],
    ['a timeout', { name: 'TimeoutError' }],
    ['a dropped connection', { name: 'Error', code: 'ECONNRESET' }],
  ])('answers %s that reached the edge as the SDK threw it with 503, never 500', (_label, fields) => {
    const response = errorResponse(Object.assign(new Error('Rate exceeded for arn:aws:dynamodb:…'), fields));
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    expect(bodyOf(response)).toEqual({ error: { code: 'unavailable', message: TEXTS.serviceUnavailable } });
  });

  it('keeps a client error of the SDK that does not pass (a failed condition, a validation) a 500 that says nothing', () => {
    const response = errorResponse(
      Object.assign(new Error('The conditional request failed'), {
        name: 'ConditionalCheckFailedException',
        $metadata: { httpStatusCode: 400 },
      }),
    );
    expect(response.statusCode).toBe(500);
    expect(response.headers?.['retry-after']).toBeUndefined();
  });
});

describe('stepError', () => {
  it('names a transient fault countersign.unavailable, which the workflow retries, whether or not an adapter classified it', () => {
    const raw = stepError(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    const classified = stepError(new CountersignError('unavailable', TEXTS.serviceUnavailable));
    expect(raw.name).toBe(ERROR_NAMES.unavailable);
    expect(classified.name).toBe(ERROR_NAMES.unavailable);
    expect(raw.message).toBe(TEXTS.serviceUnavailable);
    expect(stepError(new Error('a bug')).name).toBe(ERROR_NAMES.internal);
  });
});
