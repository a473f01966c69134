import type { ResponseJson, TestRuntime } from './local-runtime.js';

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
  const response = await fetch(`${runtime.url}/runs/${encodeURIComponent(runId)}/events`, {
    headers: as ? { authorization: `Bearer ${runtime.tokens[as]}` } : {},
  });
  const text = await response.text();
  const isStream = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
  const events = isStream ? parseServerSentEvents(text) : [];
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
