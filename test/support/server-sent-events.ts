import { fillPath } from '../../lambdas/contract/api-client.js';
import { ROUTES } from '../../lambdas/contract/routes.js';
import type { ResponseJson, TestRuntime } from './local-runtime.js';
import { committedDocumentValidator, createValidatingFetch } from './openapi-response-validator.js';

export interface ReceivedEvent {
  event: string;
  data: ResponseJson;
}

/**
 * Opens GET /runs/{id}/events and reads it until the server ends it. Every `data` line is
 * parsed as JSON (a line that is not JSON fails the test: the stream carries JSON only).
 */
export async function readRunEvents(
  runtime: Pick<TestRuntime, 'url' | 'tokens'>,
  runId: string,
  as?: string,
): Promise<{ status: number; headers: Headers; text: string; events: ReceivedEvent[] }> {
  const route = ROUTES.find((candidate) => candidate.operationId === 'streamRunEvents');
  const path = fillPath(route?.path ?? '', { id: runId });
  // The stream is read whole here, so its status and content type are checked by the fetch and
  // every event against the document's RunEvent schema below.
  const response = await createValidatingFetch()(`${runtime.url}${path}`, {
    headers: as ? { authorization: `Bearer ${runtime.tokens[as]}` } : {},
  });
  const text = await response.text();
  const isStream = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
  const events = isStream ? parseServerSentEvents(text) : [];
  for (const event of events) {
    const problem = committedDocumentValidator().problemWithEvent(event);
    if (problem) throw new Error(`The answer does not match docs/openapi.json: ${problem}`);
  }
  return { status: response.status, headers: response.headers, text, events };
}

/** Splits an event stream into its events; each must have one `event:` and one JSON `data:` line. */
export function parseServerSentEvents(text: string): ReceivedEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim().length > 0)
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length));
      if (!event || data.length !== 1) throw new Error(`malformed server-sent event: ${block}`);
      return { event, data: JSON.parse(data[0] as string) };
    });
}
