import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One delivery as the receiver got it: the headers and the exact bytes of the body. */
export interface ReceivedWebhook {
  headers: Record<string, string | undefined>;
  body: string;
  path: string;
}

export interface WebhookReceiver {
  /** Where to post: `http://127.0.0.1:<port>/hooks/countersign` (loopback, as local mode allows). */
  url: string;
  received: ReceivedWebhook[];
  /** The statuses of the next deliveries, one each in order; after them every delivery gets 204. */
  answerWith(statuses: readonly number[]): void;
  stop(): Promise<void>;
}

/** A real HTTP receiver of webhooks on 127.0.0.1, answering 204 unless told otherwise. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const script: number[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        headers: Object.fromEntries(
          Object.entries(request.headers).map(([name, value]) => [name, [value].flat().join(',')]),
        ),
        body: Buffer.concat(chunks).toString('utf8'),
        path: request.url ?? '/',
      });
      response.writeHead(script.shift() ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/countersign`,
    received,
    answerWith: (statuses) => script.push(...statuses),
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
