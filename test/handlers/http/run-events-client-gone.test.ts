import { PassThrough } from 'node:stream';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../lambdas/core/ports.js';
import { createRunEventsFunctionUrlHandler } from '../../../lambdas/handlers/http/run-events-function-url.js';

const JWT_SHAPED = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJlZGl0b3IifQ.c2lnbmF0dXJl';

/** Log lines by level, messages only. */
function recordingLogger(): Logger & { lines: Array<{ level: string; message: string }> } {
  const lines: Array<{ level: string; message: string }> = [];
  const at = (level: string) => (message: string) => {
    lines.push({ level, message });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const event = {
  rawPath: '/runs/r1/events',
  headers: { authorization: `Bearer ${JWT_SHAPED}` },
  requestContext: { http: { method: 'GET' }, requestId: 'request-1' },
} as unknown as LambdaFunctionURLEvent;

describe('a client that hangs up on the events function URL', () => {
  it('is logged at WARN at most, and writes after it neither throw nor crash the invocation', async () => {
    // Prepare
    const logger = recordingLogger();
    const responseStream = new PassThrough();
    responseStream.resume();
    const handle = createRunEventsFunctionUrlHandler({
      verify: async () => ({ sub: 'editor' }),
      route: async (_event, stream) => {
        stream.write('event: turn\ndata: {}\n\n');
        // The client disconnects: the runtime errors the response stream.
        responseStream.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
        await new Promise((resolve) => setImmediate(resolve));
        stream.write('event: state\ndata: {}\n\n');
        throw Object.assign(new Error('write after the client left'), { name: 'StreamClosed' });
      },
      logger,
      startResponse: (target) => target,
    });

    // Act
    await handle(event, responseStream);

    // Assess
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(logger.lines).toContainEqual({ level: 'warn', message: 'run events client gone' });
  });

  it('still logs a failure while the client listens as ERROR', async () => {
    // Prepare
    const logger = recordingLogger();
    const responseStream = new PassThrough();
    responseStream.resume();
    const handle = createRunEventsFunctionUrlHandler({
      verify: async () => ({ sub: 'editor' }),
      route: async () => {
        throw Object.assign(new Error('boom'), { name: 'Broken' });
      },
      logger,
      startResponse: (target) => target,
    });

    // Act
    await handle(event, responseStream);

    // Assess
    expect(logger.lines).toContainEqual({ level: 'error', message: 'run events request failed' });
  });
});
