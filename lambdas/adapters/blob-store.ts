import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { CountersignError } from '../core/errors.js';

/**
 * Port: opaque bytes under a key, for what does not fit in a DynamoDB item (sealed run state
 * over the 400 KB item limit). The bytes are already sealed; the store adds encryption at
 * rest, not confidentiality.
 */
export interface BlobStore {
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes under `key`, or `undefined` when there are none. */
  get(key: string): Promise<Uint8Array | undefined>;
}

/** Keys are `runs/<runId>/state/<sha256hex>`: plain segments, no traversal, no empty parts. */
const BLOB_KEY_PATTERN = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

function assertValidBlobKey(key: string): void {
  const segments = key.split('/');
  if (
    key.length > 900 ||
    !BLOB_KEY_PATTERN.test(key) ||
    segments.some((part) => part === '.' || part === '..')
  ) {
    throw new CountersignError('internal', 'A blob key has an unsupported shape.', { expose: false });
  }
}

export interface S3BlobStoreProps {
  readonly client: S3Client;
  readonly bucketName: string;
  /** The KMS key (id or ARN) S3 encrypts each object with (SSE-KMS). */
  readonly kmsKeyId: string;
}

/**
 * The S3 client module, imported on the first read or write: the handler bundles ship it beside
 * them as a side module (lib/side-modules.ts), since only run state over the DynamoDB item limit
 * needs it and its code, even unrun inside a bundle, cost every cold start ~10 ms of parsing.
 */
function loadS3Client(): Promise<typeof import('@aws-sdk/client-s3')> {
  return import('@aws-sdk/client-s3');
}

/**
 * Blob store on S3, each object encrypted at rest with SSE-KMS under the given key (an S3
 * Bucket Key keeps that from costing one KMS call per object).
 *
 * @example
 * const store = new S3BlobStore({ client: new S3Client({}), bucketName, kmsKeyId });
 * await store.put('runs/r1/state/ab12', bytes);
 */
export class S3BlobStore implements BlobStore {
  private readonly props: S3BlobStoreProps;

  public constructor(props: S3BlobStoreProps) {
    this.props = props;
  }

  public async put(key: string, bytes: Uint8Array): Promise<void> {
    assertValidBlobKey(key);
    const { PutObjectCommand } = await loadS3Client();
    await this.props.client.send(
      new PutObjectCommand({
        Bucket: this.props.bucketName,
        Key: key,
        Body: bytes,
        ContentLength: bytes.byteLength,
        ContentType: 'application/octet-stream',
        ServerSideEncryption: 'aws:kms',
        SSEKMSKeyId: this.props.kmsKeyId,
        BucketKeyEnabled: true,
      }),
    );
  }

  public async get(key: string): Promise<Uint8Array | undefined> {
    assertValidBlobKey(key);
    const { GetObjectCommand, NoSuchKey } = await loadS3Client();
    try {
      const output = await this.props.client.send(
        new GetObjectCommand({ Bucket: this.props.bucketName, Key: key }),
      );
      if (!output.Body) return undefined;
      return await output.Body.transformToByteArray();
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined;
      throw error;
    }
  }
}

/**
 * Blob store in a directory on disk, for local mode. Writes go through a temporary file and a
 * rename, so a crash never leaves half a blob under its final name.
 *
 * @example
 * const store = new FileBlobStore('.countersign/blobs');
 */
export class FileBlobStore implements BlobStore {
  private readonly directory: string;

  public constructor(directory: string) {
    this.directory = resolve(directory);
  }

  public async put(key: string, bytes: Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const temporaryPath = `${path}.${randomUUID()}.partial`;
    await writeFile(temporaryPath, bytes, { mode: 0o600 });
    await rename(temporaryPath, path);
  }

  public async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(await readFile(this.pathOf(key)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  private pathOf(key: string): string {
    assertValidBlobKey(key);
    const path = join(this.directory, ...key.split('/'));
    // Belt and braces on top of the key pattern: never leave the directory.
    if (!path.startsWith(this.directory + sep)) {
      throw new CountersignError('internal', 'A blob key has an unsupported shape.', { expose: false });
    }
    return path;
  }
}
