import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/**
 * The services a shipped bundle reaches on its first request besides DynamoDB (dynalite) and
 * KMS (test/support/fake-kms-server.ts), each a small server on 127.0.0.1 speaking the real
 * protocol, reached through the SDK's `AWS_ENDPOINT_URL_<SERVICE>` variables: Step Functions
 * and EventBridge (AWS JSON, answering what the handlers read back), and an OIDC issuer for the
 * run events endpoint, which verifies its bearer token itself.
 */
export interface FirstRequestStandIns {
  /** `AWS_ENDPOINT_URL_SFN` and `AWS_ENDPOINT_URL_EVENTBRIDGE`. */
  readonly awsJsonEndpoint: string;
  /** `COUNTERSIGN_JWT_ISSUER`: discovery document and key set. */
  readonly issuerUrl: string;
  /** A token of `subject` for `audience`, valid for an hour. */
  issueToken(subject: string, audience: string): Promise<string>;
  /** Requests served, by `X-Amz-Target` (`AWSStepFunctions.SendTaskSuccess`). */
  requestCounts(): Record<string, number>;
  stop(): Promise<void>;
}

type Answer = (input: Record<string, unknown>) => Record<string, unknown>;

/** What each operation answers: the fields the SDK's deserializers and the adapters read. */
const AWS_JSON_ANSWERS: Readonly<Record<string, Answer>> = {
  'AWSStepFunctions.StartExecution': (input) => ({
    executionArn: `${String(input.stateMachineArn).replace(':stateMachine:', ':execution:')}:${String(input.name ?? randomUUID())}`,
    startDate: Date.now() / 1000,
  }),
  'AWSStepFunctions.SendTaskSuccess': () => ({}),
  'AWSStepFunctions.SendTaskFailure': () => ({}),
  'AWSStepFunctions.StopExecution': () => ({ stopDate: Date.now() / 1000 }),
  'AWSEvents.PutEvents': (input) => ({
    FailedEntryCount: 0,
    Entries: ((input.Entries as unknown[] | undefined) ?? []).map(() => ({ EventId: randomUUID() })),
  }),
};

/** An SDK request handler: what the embedded runtime's DynamoDB client sends through. */
export interface SdkRequestHandler {
  handle(request: {
    method: string;
    protocol: string;
    hostname: string;
    path: string;
    query: Record<string, string>;
    headers: Record<string, string>;
    body: Buffer;
  }): Promise<{ response: { statusCode: number; headers: Record<string, string>; body?: unknown } }>;
}

/**
 * The embedded runtime's DynamoDB (dynalite in its process, no socket since issue #30) on
 * 127.0.0.1 for the shipped bundles in their own processes, for the bench's length only: each
 * request is handed to the runtime client's in-process handler as it came.
 */
export async function startDynamoBridge(
  handler: SdkRequestHandler,
): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const bridge = await listen(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const headers = Object.fromEntries(
      Object.entries(request.headers).flatMap(([name, value]) =>
        typeof value === 'string' ? [[name, value]] : [],
      ),
    );
    const { response: answer } = await handler.handle({
      method: request.method ?? 'POST',
      protocol: 'http:',
      hostname: '127.0.0.1',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body: Buffer.from(await readBody(request), 'utf8'),
    });
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
    response.writeHead(answer.statusCode, answer.headers);
    response.end(Buffer.concat(chunks));
  });
  return { endpoint: bridge.url, stop: bridge.stop };
}

export async function startFirstRequestStandIns(): Promise<FirstRequestStandIns> {
  const counts = new Map<string, number>();
  const awsJson = await listen(async (request, response) => {
    const body = await readBody(request);
    const target = String(request.headers['x-amz-target'] ?? '');
    const answer = AWS_JSON_ANSWERS[target];
    const headers = {
      'content-type': String(request.headers['content-type'] ?? 'application/x-amz-json-1.0'),
    };
    if (!answer) {
      response.writeHead(400, { ...headers, 'x-amzn-errortype': 'UnknownOperationException' });
      response.end(
        JSON.stringify({ __type: 'UnknownOperationException', message: `No stand-in for ${target}.` }),
      );
      return;
    }
    counts.set(target, (counts.get(target) ?? 0) + 1);
    response.writeHead(200, headers);
    response.end(JSON.stringify(answer(JSON.parse(body || '{}') as Record<string, unknown>)));
  });

  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' };
  let issuerUrl = '';
  const issuer = await listen(async (request, response) => {
    const path = new URL(request.url ?? '/', issuerUrl).pathname;
    const document =
      path === '/.well-known/openid-configuration'
        ? { issuer: issuerUrl, jwks_uri: `${issuerUrl}/jwks.json` }
        : path === '/jwks.json'
          ? { keys: [publicJwk] }
          : undefined;
    response.writeHead(document ? 200 : 404, { 'content-type': 'application/json' });
    response.end(JSON.stringify(document ?? {}));
  });
  issuerUrl = issuer.url;

  return {
    awsJsonEndpoint: awsJson.url,
    issuerUrl,
    issueToken: (subject, audience) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
        .setSubject(subject)
        .setIssuer(issuerUrl)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey),
    requestCounts: () => Object.fromEntries(counts),
    stop: async () => {
      await Promise.all([awsJson.stop(), issuer.stop()]);
    },
  };
}

async function listen(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
