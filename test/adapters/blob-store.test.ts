import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import { type BlobStore, FileBlobStore, S3BlobStore } from '../../lambdas/adapters/blob-store.js';
import { CountersignError } from '../../lambdas/core/errors.js';

interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
}

/** An S3 stand-in at the HTTP layer: the real client serialises and parses, nothing leaves the process. */
function createInMemoryS3(): { client: S3Client; requests: RecordedRequest[] } {
  const objects = new Map<string, Buffer>();
  const requests: RecordedRequest[] = [];
  const readBody = async (body: unknown): Promise<Buffer> => {
    if (body === undefined || body === null) return Buffer.alloc(0);
    if (typeof body === 'string' || body instanceof Uint8Array) return Buffer.from(body);
    const chunks: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  };
  const requestHandler = {
    handle: async (request: {
      method: string;
      path: string;
      headers: Record<string, string>;
      body?: unknown;
    }) => {
      requests.push({ method: request.method, path: request.path, headers: { ...request.headers } });
      if (request.method === 'PUT') {
        objects.set(request.path, await readBody(request.body));
        return { response: { statusCode: 200, headers: { etag: '"1"' }, body: Readable.from([]) } };
      }
      const object = objects.get(request.path);
      if (!object) {
        const error =
          '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>';
        return {
          response: {
            statusCode: 404,
            headers: { 'content-type': 'application/xml' },
            body: Readable.from([error]),
          },
        };
      }
      return {
        response: {
          statusCode: 200,
          headers: { 'content-length': String(object.length), 'content-type': 'application/octet-stream' },
          body: Readable.from([object]),
        },
      };
    },
  };
  const client = new S3Client({
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler,
  });
  return { client, requests };
}

describe.each([
  {
    name: 'FileBlobStore',
    start: async () => {
      const directory = await mkdtemp(join(tmpdir(), 'countersign-blobs-'));
      return {
        store: new FileBlobStore(directory) as BlobStore,
        close: () => rm(directory, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'S3BlobStore',
    start: async () => {
      const { client } = createInMemoryS3();
      return {
        store: new S3BlobStore({ client, bucketName: 'state-bucket', kmsKeyId: 'key-1' }) as BlobStore,
        close: async () => client.destroy(),
      };
    },
  },
])('BlobStore contract: $name', ({ start }) => {
  let subject: { store: BlobStore; close(): Promise<unknown> };

  beforeAll(async () => {
    subject = await start();
  });
  afterAll(async () => {
    await subject.close();
  });

  it('returns the bytes put under a key, and the latest ones after an overwrite', async () => {
    // Prepare
    const key = 'runs/run-1/state/abc123';

    // Act
    await subject.store.put(key, Uint8Array.from([1, 2, 3]));
    await subject.store.put(key, Uint8Array.from([4, 5]));
    const bytes = await subject.store.get(key);

    // Assess
    expect(Array.from(bytes ?? [])).toEqual([4, 5]);
  });

  it('answers undefined for a key that holds nothing', async () => {
    // Act
    const bytes = await subject.store.get('runs/run-1/state/missing');

    // Assess
    expect(bytes).toBeUndefined();
  });

  it.each(['../outside', 'runs/../../etc/passwd', '/absolute', 'runs//double', 'runs/a b'])(
    'refuses the key %s',
    async (key) => {
      // Act
      const error = await subject.store.put(key, Uint8Array.from([1])).catch((thrown: unknown) => thrown);

      // Assess
      expect(error).toBeInstanceOf(CountersignError);
    },
  );
});

describe('S3BlobStore', () => {
  it('asks S3 to encrypt each object with the given KMS key and counts the calls', async () => {
    // Prepare
    const { client, requests } = createInMemoryS3();
    const counter = new AwsCallCounter();
    counter.attachTo(client);
    const store = new S3BlobStore({
      client,
      bucketName: 'state-bucket',
      kmsKeyId: 'arn:aws:kms:us-east-1:1:key/k',
    });

    // Act
    await store.put('runs/run-1/state/feed', Uint8Array.from([7]));
    await store.get('runs/run-1/state/feed');

    // Assess
    const put = requests.find((request) => request.method === 'PUT');
    expect(put?.path).toBe('/state-bucket/runs/run-1/state/feed');
    expect(put?.headers['x-amz-server-side-encryption']).toBe('aws:kms');
    expect(put?.headers['x-amz-server-side-encryption-aws-kms-key-id']).toBe('arn:aws:kms:us-east-1:1:key/k');
    expect(put?.headers['x-amz-server-side-encryption-bucket-key-enabled']).toBe('true');
    expect(counter.snapshot()).toEqual({ 'S3:GetObject': 1, 'S3:PutObject': 1 });
    client.destroy();
  });
});

describe('FileBlobStore', () => {
  it('leaves no temporary files behind', async () => {
    // Prepare
    const directory = await mkdtemp(join(tmpdir(), 'countersign-blobs-'));
    const store = new FileBlobStore(directory);

    // Act
    await Promise.all([1, 2, 3].map((value) => store.put('runs/r/state/same', Uint8Array.from([value]))));

    // Assess
    expect(await readdir(join(directory, 'runs', 'r', 'state'))).toEqual(['same']);
    await rm(directory, { recursive: true, force: true });
  });
});
