import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running fake KMS: one symmetric key, reachable by its ARN or its key id. */
export interface FakeKmsServer {
  readonly endpoint: string;
  readonly region: string;
  readonly keyArn: string;
  /** Requests served, by operation (`Decrypt`), as the server saw them. */
  requestCounts(): Record<string, number>;
  stop(): Promise<void>;
}

class KmsFault extends Error {
  public constructor(
    public readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Starts an in-process stand-in for KMS on 127.0.0.1 that speaks the AWS JSON 1.1 protocol
 * for GenerateDataKey, Encrypt and Decrypt. Ciphertexts are AES-256-GCM under a key only the
 * server holds, bound to the key ARN and the encryption context (as AAD), so a changed
 * context or a flipped byte fails like real KMS (InvalidCiphertextException).
 *
 * @example
 * const kms = await startFakeKmsServer();
 * const client = new KMS({ endpoint: kms.endpoint, region: kms.region, credentials });
 */
export async function startFakeKmsServer(options: { region?: string } = {}): Promise<FakeKmsServer> {
  const region = options.region ?? 'us-east-1';
  const keyId = randomUUID();
  const keyArn = `arn:aws:kms:${region}:111122223333:key/${keyId}`;
  const keyMaterial = randomBytes(32);
  const counts = new Map<string, number>();

  const resolveKey = (requested: unknown): void => {
    if (requested !== undefined && requested !== keyArn && requested !== keyId) {
      throw new KmsFault('NotFoundException', 'Key not found.');
    }
  };
  const additionalData = (context: unknown): Buffer => {
    const entries = Object.entries((context ?? {}) as Record<string, string>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return Buffer.from(JSON.stringify([keyArn, entries]));
  };
  const encrypt = (plaintext: Buffer, context: unknown): Buffer => {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', keyMaterial, iv);
    cipher.setAAD(additionalData(context));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  };
  const decrypt = (ciphertext: Buffer, context: unknown): Buffer => {
    try {
      const decipher = createDecipheriv('aes-256-gcm', keyMaterial, ciphertext.subarray(0, IV_BYTES));
      decipher.setAAD(additionalData(context));
      decipher.setAuthTag(ciphertext.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(ciphertext.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw new KmsFault('InvalidCiphertextException', 'The ciphertext is invalid.');
    }
  };

  const operations: Record<string, (input: Record<string, unknown>) => Record<string, unknown>> = {
    GenerateDataKey: (input) => {
      resolveKey(input.KeyId);
      const size = input.NumberOfBytes ?? (input.KeySpec === 'AES_128' ? 16 : 32);
      if (typeof size !== 'number' || size < 1 || size > 1024) {
        throw new KmsFault('ValidationException', 'NumberOfBytes is out of range.');
      }
      const plaintext = randomBytes(size);
      return {
        KeyId: keyArn,
        Plaintext: plaintext.toString('base64'),
        CiphertextBlob: encrypt(plaintext, input.EncryptionContext).toString('base64'),
      };
    },
    Encrypt: (input) => {
      resolveKey(input.KeyId);
      const plaintext = Buffer.from(String(input.Plaintext ?? ''), 'base64');
      return {
        KeyId: keyArn,
        CiphertextBlob: encrypt(plaintext, input.EncryptionContext).toString('base64'),
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      };
    },
    Decrypt: (input) => {
      resolveKey(input.KeyId);
      const ciphertext = Buffer.from(String(input.CiphertextBlob ?? ''), 'base64');
      return {
        KeyId: keyArn,
        Plaintext: decrypt(ciphertext, input.EncryptionContext).toString('base64'),
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      };
    },
  };

  const respond = (response: ServerResponse, status: number, body: unknown, errorType?: string): void => {
    const headers: Record<string, string> = { 'content-type': 'application/x-amz-json-1.1' };
    if (errorType) headers['x-amzn-errortype'] = errorType;
    response.writeHead(status, headers);
    response.end(JSON.stringify(body));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = String(request.headers['x-amz-target'] ?? '');
    const operationName = target.startsWith('TrentService.') ? target.slice('TrentService.'.length) : '';
    const operation = operations[operationName];
    if (request.method !== 'POST' || !operation) {
      respond(response, 400, { __type: 'UnknownOperationException', message: 'Unknown operation.' });
      return;
    }
    counts.set(operationName, (counts.get(operationName) ?? 0) + 1);
    try {
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      respond(response, 200, operation(input));
    } catch (error) {
      const fault = error instanceof KmsFault ? error : new KmsFault('ValidationException', 'Bad request.');
      respond(response, 400, { __type: fault.type, message: fault.message }, fault.type);
    }
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => respond(response, 500, { __type: 'KMSInternalException' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    region,
    keyArn,
    requestCounts: () => Object.fromEntries(counts),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
