import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export type BodyOutcome = { kind: 'read'; body: Buffer } | { kind: 'too-large' } | { kind: 'client-gone' };

/**
 * Reads a request body up to `maxBytes`; stops reading (and says so) as soon as it is larger.
 * A client that hangs up before its body ended is `client-gone`: its own choice, not a failure.
 */
export async function readBody(request: IncomingMessage, maxBytes: number): Promise<BodyOutcome> {
  const declaredLength = Number(request.headers['content-length'] ?? '0');
  if (Number.isFinite(declaredLength) && declaredLength > maxBytes) return { kind: 'too-large' };
  return new Promise<BodyOutcome>((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) {
        request.off('data', onData);
        request.off('end', onEnd);
        request.pause();
        resolve({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => resolve({ kind: 'read', body: Buffer.concat(chunks) });
    request.on('data', onData);
    request.once('end', onEnd);
    // A reset connection errors the request ('aborted', ECONNRESET); a settled promise ignores it.
    request.once('error', () => resolve({ kind: 'client-gone' }));
    request.once('close', () => {
      if (!request.complete) resolve({ kind: 'client-gone' });
    });
  });
}

/**
 * Writes a Lambda's result as API Gateway does: a result without `statusCode` is a 200 JSON body;
 * a malformed one is `'malformed'` (nothing written: the caller answers 500).
 */
export function writeLambdaResult(response: ServerResponse, result: unknown): 'written' | 'malformed' {
  if (typeof result !== 'object' || result === null || !('statusCode' in result)) {
    const body = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
    return 'written';
  }
  const structured = result as APIGatewayProxyStructuredResultV2;
  const statusCode = structured.statusCode;
  if (
    typeof statusCode !== 'number' ||
    !Number.isInteger(statusCode) ||
    statusCode < 100 ||
    statusCode > 599
  ) {
    return 'malformed';
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {}))
    headers[name.toLowerCase()] = String(value);
  if (structured.cookies && structured.cookies.length > 0) headers['set-cookie'] = structured.cookies;
  const body = structured.body ?? '';
  if (body.length > 0 && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  response.writeHead(statusCode, headers);
  response.end(structured.isBase64Encoded ? Buffer.from(body, 'base64') : body);
  return 'written';
}

/** Stops a local server and closes every connection (an open event stream or long poll too). */
export async function closeHttpServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

/** Starts a local server on `host` (a free port for 0) and answers the port it listens on. */
export async function listenLocally(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
