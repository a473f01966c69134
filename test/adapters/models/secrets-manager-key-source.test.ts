import { Readable } from 'node:stream';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import {
  API_KEY_CACHE_MILLISECONDS,
  createSecretsManagerKeySource,
} from '../../../lambdas/adapters/models/secrets-manager-key-source.js';

const secretArn = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:model-key-AbCdEf';

/** A real Secrets Manager client whose transport answers each call with the next response. */
function createClientAnswering(responses: Array<{ statusCode: number; body: unknown; errorType?: string }>) {
  const requests: unknown[] = [];
  const client = new SecretsManagerClient({
    region: 'eu-central-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example-secret' },
    maxAttempts: 1,
    requestHandler: {
      async handle(request: { body?: unknown }) {
        const body =
          typeof request.body === 'string'
            ? request.body
            : new TextDecoder().decode(request.body as Uint8Array);
        requests.push(JSON.parse(body));
        const next = responses[Math.min(requests.length - 1, responses.length - 1)];
        if (next === undefined) throw new Error('no response prepared');
        return {
          response: {
            statusCode: next.statusCode,
            headers: {
              'content-type': 'application/x-amz-json-1.1',
              ...(next.errorType ? { 'x-amzn-errortype': next.errorType } : {}),
            },
            body: Readable.from([Buffer.from(JSON.stringify(next.body), 'utf8')]),
          },
        };
      },
    },
  });
  return { client, requests };
}

function secretValue(secretString: string) {
  return {
    statusCode: 200,
    body: { ARN: secretArn, Name: 'model-key', SecretString: secretString, VersionId: 'v1' },
  };
}

describe('createSecretsManagerKeySource', () => {
  it('reads the key once and reuses it for five minutes', async () => {
    // Prepare
    let now = 1_000_000;
    const { client, requests } = createClientAnswering([secretValue('sk-first'), secretValue('sk-rotated')]);
    const apiKey = createSecretsManagerKeySource(client, secretArn, { now: () => now });

    // Act
    const first = await apiKey();
    now += API_KEY_CACHE_MILLISECONDS - 1;
    const cached = await apiKey();
    now += 1;
    const reread = await apiKey();

    // Assess
    expect([first, cached, reread]).toEqual(['sk-first', 'sk-first', 'sk-rotated']);
    expect(requests).toEqual([{ SecretId: secretArn }, { SecretId: secretArn }]);
  });

  it('shares one read between concurrent callers', async () => {
    // Prepare
    const { client, requests } = createClientAnswering([secretValue('sk-first')]);
    const apiKey = createSecretsManagerKeySource(client, secretArn);

    // Act
    const keys = await Promise.all([apiKey(), apiKey(), apiKey()]);

    // Assess
    expect(keys).toEqual(['sk-first', 'sk-first', 'sk-first']);
    expect(requests).toHaveLength(1);
  });

  it('reads the apiKey field of a JSON secret', async () => {
    // Prepare
    const { client } = createClientAnswering([secretValue('{"apiKey":"sk-from-json"}')]);

    // Act
    const key = await createSecretsManagerKeySource(client, secretArn)();

    // Assess
    expect(key).toBe('sk-from-json');
  });

  it('fails with a safe reason and does not cache the failure', async () => {
    // Prepare
    const { client, requests } = createClientAnswering([
      {
        statusCode: 400,
        errorType: 'AccessDeniedException',
        body: {
          __type: 'AccessDeniedException',
          message: 'User arn:aws:sts::123456789012:assumed-role/x is not authorized',
        },
      },
      secretValue('sk-after-fix'),
    ]);
    const apiKey = createSecretsManagerKeySource(client, secretArn);

    // Act
    const failure = await apiKey().catch((error: unknown) => error);
    const retried = await apiKey();

    // Assess
    expect(failure).toMatchObject({
      code: 'model-failed',
      message: 'The model provider API key could not be read from Secrets Manager.',
    });
    expect(retried).toBe('sk-after-fix');
    expect(requests).toHaveLength(2);
  });

  it('refuses an empty secret as a configuration error', async () => {
    // Prepare
    const { client } = createClientAnswering([secretValue('   ')]);

    // Act
    const failure = await createSecretsManagerKeySource(client, secretArn)().catch((error: unknown) => error);

    // Assess
    expect(failure).toMatchObject({ code: 'configuration' });
  });
});
