import * as z from 'zod/mini';
import type { RawApiResponse } from '../contract/api-client.js';
import { CountersignError, type ErrorCode } from '../core/errors.js';
import { TEXTS } from '../core/texts.js';

/** Attempts of one request that met a transient failure (network, 5xx): each is idempotent. */
const ATTEMPTS = 3;

/**
 * One request, sent again on a transient failure (no answer, a timeout, a 5xx): every request
 * here is idempotent (a client key, a read, a first-report-stands report).
 */
export async function sendIdempotent(
  action: string,
  send: (signal: AbortSignal) => Promise<RawApiResponse>,
  options: { signal: AbortSignal | undefined; timeoutSeconds: number; pauseSeconds: number },
): Promise<RawApiResponse> {
  const { signal, timeoutSeconds } = options;
  let failure: CountersignError | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    if (attempt > 0) await pause(Math.ceil(2 ** (attempt - 1) * options.pauseSeconds * 1_000), signal);
    signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(Math.ceil(timeoutSeconds * 1_000));
    try {
      const response = await send(signal ? AbortSignal.any([signal, timeout]) : timeout);
      if (response.status < 500) return response;
      failure = new CountersignError('unavailable', TEXTS.agentCountersignFailing(action, response.status));
    } catch (error) {
      signal?.throwIfAborted();
      const problem = timeout.aborted ? `no answer within ${timeoutSeconds} s` : formatFailure(error);
      failure = new CountersignError('unavailable', TEXTS.agentCountersignUnreachable(action, problem));
    }
  }
  throw failure;
}

/** A refusal (4xx) with the API's own message, written for clients; the code follows the status. */
export function refusalOf(action: string, response: RawApiResponse): CountersignError {
  const message = z.object({ error: z.object({ message: z.string() }) }).safeParse(response.body);
  return new CountersignError(
    CODE_BY_STATUS[response.status] ?? 'internal',
    TEXTS.agentCountersignRefused(
      action,
      response.status,
      message.success ? message.data.error.message : 'an unexpected answer',
    ),
  );
}

const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'bad-request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  410: 'gone',
  413: 'payload-too-large',
  429: 'too-many-requests',
};

/** What failed, by name and code only: a message may quote a URL or a server's text. */
function formatFailure(error: unknown): string {
  const named = error as { name?: unknown; code?: unknown; error?: unknown; cause?: { code?: unknown } };
  const code = [named.code, named.error, named.cause?.code].find((value) => typeof value === 'string');
  const name = typeof named.name === 'string' ? named.name : 'Error';
  return code === undefined ? name : `${name} ${code}`;
}

function pause(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, milliseconds);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
