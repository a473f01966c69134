import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../../lambdas/core/errors.js';
import type { Logger } from '../../../lambdas/core/ports.js';
import { createHttpHandler } from '../../../lambdas/handlers/http/http-route.js';

function capturingLogger(): Logger & { lines: Array<{ level: string; message: string; fields: unknown }> } {
  const lines: Array<{ level: string; message: string; fields: unknown }> = [];
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push({ level, message, fields });
  };
  return { lines, debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

const publicEvent = (routeKey: string) =>
  ({ routeKey, requestContext: { requestId: 'request-123', http: { method: 'GET' } } }) as never;

describe('the HTTP edge', () => {
  it.each([
    ['an unknown error', new TypeError('secret text')],
    ['an internal countersign error', new CountersignError('internal', 'secret text', { expose: false })],
    [
      'a refused sealed state (a 500 whose message is exposed)',
      new CountersignError('sealed-state-rejected', 'x'),
    ],
  ])('writes exactly one ERROR line with the request id for %s', async (_name, thrown) => {
    // Prepare
    const logger = capturingLogger();
    const handler = createHttpHandler(
      {
        'GET /boom': async () => {
          throw thrown;
        },
      },
      { users: { getUser: async () => undefined }, logger },
      { publicRoutes: ['GET /boom'] },
    );

    // Act
    const response = await handler(publicEvent('GET /boom'));

    // Assess
    expect(response.statusCode).toBe(500);
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      message: 'request failed',
      fields: { requestId: 'request-123', status: 500 },
    });
    expect(JSON.stringify(logger.lines)).not.toContain('secret text');
  });

  it('writes no ERROR line for a 4xx', async () => {
    // Prepare
    const logger = capturingLogger();
    const handler = createHttpHandler(
      {
        'GET /gone': async () => {
          throw new CountersignError('gone', 'It is gone.');
        },
      },
      { users: { getUser: async () => undefined }, logger },
      { publicRoutes: ['GET /gone'] },
    );

    // Act
    const response = await handler(publicEvent('GET /gone'));

    // Assess
    expect(response.statusCode).toBe(410);
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});
