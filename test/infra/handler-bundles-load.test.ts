import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { computeHandlerBundleSettings } from '../../lib/functions.js';
import { startDynalite } from '../support/dynalite.js';
import {
  bundle,
  HANDLERS_DIRECTORY,
  invokeInFreshProcess,
  listHandlerEntries,
  TOOLS_MODULE,
  useBundleDirectory,
} from './handler-bundles-support.js';

const REQUIRED_BUILTINS = ['fs', 'http', 'https', 'process', 'util'];

const USER = { requestContext: { authorizer: { jwt: { claims: { sub: 'bundle-tester' }, scopes: [] } } } };

/** An event each handler answers without any service but DynamoDB. */
function eventFor(name: string): unknown {
  const run = {
    runId: 'run-missing',
    turn: 0,
    executionId: 'arn:aws:states:us-east-1:111122223333:execution:m:run-missing',
  };
  const http = (method: string, path: string, body?: string) => ({
    ...USER,
    version: '2.0',
    rawPath: path,
    headers: { 'content-type': 'application/json' },
    requestContext: { ...USER.requestContext, http: { method, path }, requestId: 'bundle-test' },
    ...(body === undefined ? {} : { body }),
  });
  switch (name) {
    case 'api-inbox':
      return { ...http('GET', '/inbox'), routeKey: 'GET /inbox' };
    case 'api-runs':
      return {
        ...http('GET', '/runs/run-missing'),
        routeKey: 'GET /runs/{id}',
        pathParameters: { id: 'run-missing' },
      };
    case 'api-decision':
      return {
        ...http(
          'POST',
          '/runs/run-missing/decision',
          JSON.stringify({ decision: 'approve', digest: 'x'.repeat(64) }),
        ),
        routeKey: 'POST /runs/{id}/decision',
        pathParameters: { id: 'run-missing' },
      };
    case 'api-admin':
      return {
        ...http('GET', '/admin/configurations'),
        routeKey: 'GET /admin/configurations',
      };
    case 'api-generate':
      return {
        ...http('POST', '/configurations/demo-scripted/complete', JSON.stringify({ prompt: 'Hello.' })),
        routeKey: 'POST /configurations/{id}/complete',
        pathParameters: { id: 'demo-scripted' },
      };
    case 'api-external':
      return {
        ...http('GET', '/external-runs/run-missing'),
        routeKey: 'GET /external-runs/{id}',
        pathParameters: { id: 'run-missing' },
      };
    case 'api-run-events':
      return {
        rawPath: '/runs/run-missing/events',
        headers: {},
        requestContext: { http: { method: 'GET' } },
      };
    case 'await-approval':
      return { ...run, taskToken: 'task-token' };
    case 'mark-failed':
      return { ...run, failure: { Error: 'countersign.internal', Cause: '' } };
    case 'report-waiting-runs':
      return { id: 'bundle-test' };
    case 'escalate-card':
      return { runId: 'run-missing', turn: 0, digest: 'x'.repeat(64), step: 0 };
    case 'slack-notify':
      return {
        id: 'bundle-test',
        source: 'countersign',
        'detail-type': 'Run Awaiting Approval',
        detail: {
          runId: 'run-missing',
          toolNames: [],
          pausedAt: '2026-01-01T00:00:00.000Z',
          approverGroups: [],
        },
      };
    case 'slack-interactions':
      // No signature: refused before the signing secret is read.
      return {
        ...http('POST', '/integrations/slack/interactions', 'payload=%7B%7D'),
        routeKey: 'POST /integrations/slack/interactions',
      };
    case 'email-notify':
      return { id: 'bundle-test', source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
    default:
      return run;
  }
}

describe('the Lambda handler bundles', () => {
  const bundles = useBundleDirectory();

  it('bundle every handler with one bn.js and no readable-stream, and load in Node', async () => {
    // Prepare: the Lambda runtime's global for response streaming (api-run-events).
    const runtimeGlobal = globalThis as { awslambda?: unknown };
    runtimeGlobal.awslambda = {
      streamifyResponse: (handler: unknown) => handler,
      HttpResponseStream: { from: (stream: unknown) => stream },
    };
    const entries = await listHandlerEntries();

    try {
      for (const entry of entries) {
        // Act
        const name = entry.replace(/\.ts$/, '');
        const metafile = await bundle(join(HANDLERS_DIRECTORY, entry), bundles.directory, name);
        const loaded = (await import(pathToFileURL(join(bundles.directory, `${name}.mjs`)).href)) as {
          handler?: unknown;
        };

        // Assess
        const inputs = Object.keys(metafile.inputs);
        expect(inputs.filter((input) => input.includes('node_modules/readable-stream/'))).toEqual([]);
        expect(inputs.filter((input) => /node_modules\/bn\.js\//.test(input)).length).toBeLessThanOrEqual(1);
        expect(inputs.filter((input) => input.includes('asn1.js/node_modules/bn.js'))).toEqual([]);
        expect(typeof loaded.handler, `${name} exports a handler`).toBe('function');
        // The SDK is bundled (tree-shaken): nothing is left for the runtime's own copy to resolve.
        const sideModules = computeHandlerBundleSettings(TOOLS_MODULE).sideModules.map(
          (module) => module.importPath,
        );
        const externals = Object.values(metafile.outputs).flatMap((output) =>
          output.imports.filter(
            (imported) => imported.external && !builtinModules.includes(imported.path.replace(/^node:/, '')),
          ),
        );
        expect(
          externals.map((imported) => imported.path).filter((path) => !sideModules.includes(path)),
          name,
        ).toEqual([]);
        // A side module loads on first use (the Encryption SDK on the first seal or unseal): a
        // static import would load it at every cold start of the handler.
        expect(
          externals.filter((imported) => imported.kind !== 'dynamic-import').map((imported) => imported.path),
          name,
        ).toEqual([]);
        // Built-ins whose ES module facade costs a cold start are required (lib/bundling/node-http.ts).
        const importedBuiltins = Object.values(metafile.outputs).flatMap((output) =>
          output.imports.map((imported) => imported.path.replace(/^node:/, '')),
        );
        expect(
          importedBuiltins.filter((path) => REQUIRED_BUILTINS.includes(path)),
          name,
        ).toEqual([]);
      }
    } finally {
      delete runtimeGlobal.awslambda;
    }
    expect(entries).toContain('await-approval.ts');
  }, 300_000); // esbuild over every handler: more than the default 60 s on a busy machine.

  it('load and answer in a fresh process each, with the AWS SDK bundled as it deploys and DynamoDB on 127.0.0.1', async () => {
    // Prepare: a table in dynalite; each bundle runs in its own Node process, as a cold Lambda.
    const dynamo = await startDynalite();
    const entries = await listHandlerEntries();
    const answers: Record<string, unknown> = {};

    try {
      await Promise.all(
        entries.map((entry) =>
          bundle(join(HANDLERS_DIRECTORY, entry), bundles.directory, entry.replace(/\.ts$/, '')),
        ),
      );
      for (const entry of entries) {
        const name = entry.replace(/\.ts$/, '');

        // Act
        answers[name] = await invokeInFreshProcess(join(bundles.directory, `${name}.mjs`), eventFor(name), {
          AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
          COUNTERSIGN_TABLE_NAME: dynamo.tableName,
        });
      }
    } finally {
      await dynamo.stop();
    }

    // Assess: the step handlers read the table and refuse the unknown run by name; the API
    // handlers answer HTTP; the probe queries the inbox index (its waiting cards and undelivered
    // decisions). None fails as internal.
    for (const step of [
      'prepare',
      'model-turn',
      'await-approval',
      'execute-tools',
      'record-rejection',
      'record-external-decision',
      'notify-caller',
    ]) {
      expect(answers[step], step).toEqual({ error: 'countersign.not-found' });
    }
    // The end states are idempotent: a run already gone has nothing left to end.
    for (const step of ['finish-run', 'mark-failed', 'mark-expired']) {
      expect(answers[step], step).toEqual({ runId: 'run-missing' });
    }
    // The API handlers read the caller from the table; without grants they are refused, fail closed.
    expect(answers['api-inbox']).toMatchObject({ statusCode: 403 });
    expect(answers['api-decision']).toMatchObject({ statusCode: 403 });
    expect(answers['api-admin']).toMatchObject({ statusCode: 403 });
    // The router's error path in the bundle: the API's error shape, one content-type header.
    const refused = answers['api-admin'] as { headers: Record<string, string>; body: string };
    expect(Object.keys(refused.headers).filter((name) => name.toLowerCase() === 'content-type')).toEqual([
      'content-type',
    ]);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'forbidden' } });
    expect(answers['api-generate']).toMatchObject({ statusCode: 403 });
    expect(answers['api-runs']).toMatchObject({ statusCode: 404 });
    // An external run the caller does not own does not exist for it.
    expect(answers['api-external']).toMatchObject({ statusCode: 404 });
    expect(answers['api-run-events']).toMatchObject({
      streamed: expect.stringContaining('"statusCode":401'),
    });
    // The probe in its bundle: the undelivered decisions (none) redelivered, then the backlog.
    expect(answers['report-waiting-runs']).toEqual({
      waiting: 0,
      oldestWaitMilliseconds: 0,
      redelivered: 0,
      undelivered: 0,
    });
    // A card's escalation timer for a run without a card does nothing, and says why.
    expect(answers['escalate-card']).toEqual({
      kind: 'ignored',
      runId: 'run-missing',
      turn: 0,
      step: 0,
      because: 'card-moved',
    });
    // The channels: no card to post, no digest due, and an unsigned Slack request refused.
    expect(answers['slack-notify']).toEqual({ streamed: '' });
    expect(answers['email-notify']).toEqual({ streamed: '' });
    expect(answers['slack-interactions']).toMatchObject({ statusCode: 401 });
    expect(Object.keys(answers)).toHaveLength(entries.length);
  }, 400_000); // every bundle, each in a fresh Node process: more than the default 60 s on a busy machine.
});
