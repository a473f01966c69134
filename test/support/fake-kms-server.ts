import {
  createCipheriv,
  createDecipheriv,
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  sign,
} from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A running fake KMS: one symmetric key and one asymmetric `ECC_NIST_P256` signing key, each
 * reachable by its ARN or its key id (the signing key also by its alias).
 */
export interface FakeKmsServer {
  readonly endpoint: string;
  readonly region: string;
  readonly keyArn: string;
  /** The signing key (receipts): Sign with ECDSA_SHA_256 over a RAW message, and GetPublicKey. */
  readonly signingKeyArn: string;
  readonly signingKeyAlias: string;
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
 * context or a flipped byte fails like real KMS (InvalidCiphertextException). Sign and
 * GetPublicKey serve a P-256 key as KMS serves an ECC_NIST_P256 key: the signature DER-encoded,
 * the public key as SPKI DER; a symmetric key refuses them (InvalidKeyUsageException).
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
  const signingKeyId = randomUUID();
  const signingKeyArn = `arn:aws:kms:${region}:111122223333:key/${signingKeyId}`;
  const signingKeyAlias = 'alias/countersign-receipts';
  const signingKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const counts = new Map<string, number>();

  /** Which key a request names: `symmetric` by default, as the operations without a KeyId assume. */
  const resolveKey = (requested: unknown): 'symmetric' | 'signing' => {
    if (requested === undefined || requested === keyArn || requested === keyId) return 'symmetric';
    if (requested === signingKeyArn || requested === signingKeyId || requested === signingKeyAlias)
      return 'signing';
    throw new KmsFault('NotFoundException', 'Key not found.');
  };
  const requireSymmetric = (requested: unknown): void => {
    if (resolveKey(requested) !== 'symmetric') {
      throw new KmsFault('InvalidKeyUsageException', 'The key is not for ENCRYPT_DECRYPT.');
    }
  };
  const requireSigning = (requested: unknown): void => {
    if (requested === undefined || resolveKey(requested) !== 'signing') {
      throw new KmsFault('InvalidKeyUsageException', 'The key is not for SIGN_VERIFY.');
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
      requireSymmetric(input.KeyId);
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
      requireSymmetric(input.KeyId);
      const plaintext = Buffer.from(String(input.Plaintext ?? ''), 'base64');
      return {
        KeyId: keyArn,
        CiphertextBlob: encrypt(plaintext, input.EncryptionContext).toString('base64'),
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      };
    },
    Decrypt: (input) => {
      requireSymmetric(input.KeyId);
      const ciphertext = Buffer.from(String(input.CiphertextBlob ?? ''), 'base64');
      return {
        KeyId: keyArn,
        Plaintext: decrypt(ciphertext, input.EncryptionContext).toString('base64'),
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      };
    },
    Sign: (input) => {
      requireSigning(input.KeyId);
      if (input.SigningAlgorithm !== 'ECDSA_SHA_256') {
        throw new KmsFault('InvalidKeyUsageException', 'The key does not support this signing algorithm.');
      }
      // DIGEST signs a prehashed message, which Node's crypto cannot: the fake serves RAW only.
      if (input.MessageType !== undefined && input.MessageType !== 'RAW') {
        throw new KmsFault('ValidationException', 'The fake KMS signs RAW messages only.');
      }
      const message = Buffer.from(String(input.Message ?? ''), 'base64');
      if (message.byteLength === 0 || message.byteLength > 4096) {
        throw new KmsFault('ValidationException', 'Message must be 1 to 4096 bytes.');
      }
      return {
        KeyId: signingKeyArn,
        Signature: sign('sha256', message, { key: signingKey.privateKey, dsaEncoding: 'der' }).toString(
          'base64',
        ),
        SigningAlgorithm: 'ECDSA_SHA_256',
      };
    },
    GetPublicKey: (input) => {
      requireSigning(input.KeyId);
      return {
        KeyId: signingKeyArn,
        KeySpec: 'ECC_NIST_P256',
        KeyUsage: 'SIGN_VERIFY',
        SigningAlgorithms: ['ECDSA_SHA_256'],
        PublicKey: signingKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
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
    signingKeyArn,
    signingKeyAlias,
    requestCounts: () => Object.fromEntries(counts),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
