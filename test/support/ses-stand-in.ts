import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One SendEmail request as SES received it: the SESv2 JSON body, and the request's signature header. */
export interface ReceivedMail {
  FromEmailAddress: string;
  Destination: { ToAddresses: string[] };
  Content: { Simple: { Subject: { Data: string }; Body: { Text: { Data: string } } } };
  /** The SigV4 `Authorization` header's credential scope: the SDK signed the request as for SES. */
  credentialScope: string;
}

/**
 * A local Amazon SES speaking the one SESv2 operation the email channel calls, SendEmail
 * (`POST /v2/email/outbound-emails`, JSON in, `{MessageId}` out), so the deployed adapter runs
 * unchanged with the AWS SDK pointed at it. It records each mail; it checks no signature.
 */
export class SesStandIn {
  public readonly mails: ReceivedMail[] = [];
  private server: Server | undefined;

  /** Starts listening on 127.0.0.1; resolves with the endpoint for the SDK. */
  public async start(): Promise<string> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.method !== 'POST' || request.url !== '/v2/email/outbound-emails') {
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ message: 'Unknown operation' }));
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Omit<
          ReceivedMail,
          'credentialScope'
        >;
        const credential = /Credential=[^/]+\/[^/]+\/([^/]+)\/([^/]+)\//.exec(
          request.headers.authorization ?? '',
        );
        this.mails.push({ ...body, credentialScope: credential ? `${credential[1]}/${credential[2]}` : '' });
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ MessageId: randomUUID() }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  public async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
