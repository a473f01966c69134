import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useTestRuntime } from '../support/local-runtime.js';
import { COMMITTED_OPENAPI_PATH } from '../support/openapi-response-validator.js';

describe('GET /openapi.json', () => {
  const runtime = useTestRuntime();

  it('serves the committed document without a token, as the typed client reads it', async () => {
    // Prepare
    const committed = JSON.parse(await readFile(COMMITTED_OPENAPI_PATH, 'utf8'));

    // Act
    const served = await runtime.client().getOpenApiDocument();

    // Assess
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^application\/json/);
    expect(served.body).toEqual(committed);
  });

  it('still refuses a data route without a token, with the documented refusal', async () => {
    // Act
    const refused = await runtime.client().listInbox();

    // Assess
    expect(refused.status).toBe(401);
    expect(refused.ok).toBe(false);
  });
});
