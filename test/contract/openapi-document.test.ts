import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createOpenApiDocument } from '../../lambdas/contract/openapi-document.js';
import { ROUTES } from '../../lambdas/contract/routes.js';
import { serveOpenApiDocument } from '../../lambdas/handlers/routes/openapi-routes.js';
import {
  COMMITTED_OPENAPI_PATH,
  matchRoute,
  OpenApiResponseValidator,
} from '../support/openapi-response-validator.js';

async function readCommitted(): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(COMMITTED_OPENAPI_PATH, 'utf8')) as Record<string, unknown>;
}

async function regenerate(): Promise<Record<string, unknown>> {
  const packageJson = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
  // Through JSON, as the generator writes it: what is compared is what a client reads.
  return JSON.parse(JSON.stringify(createOpenApiDocument({ version: packageJson.version })));
}

type Operation = {
  operationId: string;
  parameters?: Array<{ in: string; name: string }>;
  security: unknown[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, unknown>;
};

describe('the committed OpenAPI document', () => {
  it('is what the contract generates today (run npm run openapi when this fails)', async () => {
    // Prepare
    const committed = await readCommitted();

    // Act
    const regenerated = await regenerate();

    // Assess
    expect(
      committed,
      'docs/openapi.json is out of date with lambdas/contract: run npm run openapi and commit it',
    ).toEqual(regenerated);
  });

  it('describes every route of the manifest, and nothing else, by its operationId', async () => {
    // Act
    const document = (await readCommitted()) as {
      openapi: string;
      paths: Record<string, Record<string, Operation>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(
        ([method, operation]) => `${operation.operationId} ${method.toUpperCase()} ${path}`,
      ),
    );

    // Assess
    expect(document.openapi).toBe('3.1.0');
    expect(operations.sort()).toEqual(
      ROUTES.map((route) => `${route.operationId} ${route.method} ${route.path}`).sort(),
    );
    for (const route of ROUTES) {
      const operation = document.paths[route.path]?.[route.method.toLowerCase()] as Operation;
      // A person's token, a machine client's (docs/external-agents.md), or none (Slack signs its own).
      const scheme = {
        jwt: [{ bearerToken: [] }],
        machine: [{ machineToken: [] }],
        none: [],
        'slack-signature': [],
      }[route.auth];
      expect(operation.security, route.operationId).toEqual(scheme);
      expect(
        Object.keys(operation.responses).some((status) => status.startsWith('2')),
        route.operationId,
      ).toBe(true);
      // OpenAPI requires every `{name}` of a path to be declared as a path parameter.
      const templated = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();
      const declared = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path');
      expect(declared.map((parameter) => parameter.name).sort(), route.operationId).toEqual(templated);
    }
  });

  it('carries the request schemas the handlers validate with (strict bodies, their limits)', async () => {
    // Act
    const document = (await readCommitted()) as { paths: Record<string, Record<string, Operation>> };
    const startRun = document.paths['/runs']?.post?.requestBody?.content['application/json']?.schema;
    const decision =
      document.paths['/runs/{id}/decision']?.post?.requestBody?.content['application/json']?.schema;

    // Assess
    expect(startRun).toMatchObject({
      additionalProperties: false,
      required: ['input'],
      properties: { input: { type: 'string', minLength: 1, maxLength: 100_000 } },
    });
    expect(decision).toMatchObject({
      additionalProperties: false,
      properties: {
        decision: { enum: ['approve', 'reject', 'edit'] },
        reason: { maxLength: 2000 },
        calls: { type: 'array', maxItems: 50 },
        edits: { type: 'array', minItems: 1, maxItems: 50 },
      },
    });
  });

  it('is what GET /openapi.json serves', async () => {
    // Act
    const served = await serveOpenApiDocument();

    // Assess
    expect(served).toMatchObject({ statusCode: 200 });
    expect(served && 'json' in served ? served.json : undefined).toEqual(await readCommitted());
  });
});

describe('checking answers against the document', () => {
  const validator = new OpenApiResponseValidator();
  const runView = {
    runId: 'run-1',
    owner: 'editor',
    label: 'Page metadata',
    status: 'completed',
    turn: 2,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:01.000Z',
    transcript: { messages: 3, toolCalls: 1 },
  };
  const answer = (status: number, body: unknown, contentType = 'application/json; charset=utf-8') => ({
    method: 'GET',
    path: '/runs/run-1',
    status,
    contentType,
    text: JSON.stringify(body),
  });

  it('accepts an answer the document describes', () => {
    expect(validator.problemWith(answer(200, runView))).toBeUndefined();
    expect(
      validator.problemWith(answer(404, { error: { code: 'not-found', message: 'No such run.' } })),
    ).toBeUndefined();
  });

  it('names the path of a body that does not match', () => {
    expect(
      validator.problemWith(answer(200, { ...runView, transcript: { messages: 'three', toolCalls: 1 } })),
    ).toMatch(
      /getRun \(GET \/runs\/\{id\}\) 200: the body does not match the document: \/transcript\/messages must be integer/,
    );
    expect(validator.problemWith(answer(200, { ...runView, secret: 'x' }))).toMatch(
      /must NOT have additional properties \("secret"\)/,
    );
  });

  it('refuses a status or a content type the operation does not list', () => {
    expect(validator.problemWith(answer(418, {}))).toMatch(/answered 418, which the document does not list/);
    expect(validator.problemWith(answer(200, runView, 'text/plain'))).toMatch(/as "text\/plain"/);
  });

  it('holds a path outside the document to the error body', () => {
    const unknown = {
      method: 'GET',
      path: '/nowhere',
      contentType: 'application/json',
      text: '{"error":{}}',
    };
    expect(validator.problemWith({ ...unknown, status: 200 })).toMatch(/is not in the document/);
    expect(validator.problemWith({ ...unknown, status: 404 })).toMatch(
      /\/error must have required property 'code'/,
    );
  });

  it('matches the most literal route of several', () => {
    expect(matchRoute('POST', '/admin/skills/ingest')?.operationId).toBe('ingestSkills');
    expect(matchRoute('POST', '/admin/skills/skl-1/enable')?.operationId).toBe('enableSkill');
    expect(matchRoute('GET', '/runs/run-1/calls/0')?.operationId).toBe('getCall');
    expect(matchRoute('DELETE', '/admin/pages/p1')).toBeUndefined();
  });

  it('checks each server-sent event against the RunEvent schema', () => {
    expect(
      validator.problemWithEvent({
        event: 'tool_result',
        data: { turn: 1, index: 0, tool: 't', isError: false },
      }),
    ).toBeUndefined();
    expect(
      validator.problemWithEvent({ event: 'tool_result', data: { turn: 1, index: 0, tool: 't' } }),
    ).toMatch(/"tool_result" event does not match/);
  });
});
