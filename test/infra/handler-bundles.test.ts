import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { builtinModules } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { App, Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import * as esbuild from 'esbuild';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoRunRepository } from '../../lambdas/adapters/dynamo/run-repository.js';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import {
  buildSideModules,
  computeHandlerBundleSettings,
  createEsbuildOptions,
  LAMBDA_RUNTIME,
} from '../../lib/functions.js';
import { buildHandlerAsset, createHandlerCode } from '../../lib/handler-assets.js';
import { resolveProjectPath } from '../../lib/project-path.js';
import { startDynalite } from '../support/dynalite.js';
import { startFakeKmsServer } from '../support/fake-kms-server.js';
import { MCP_TEST_TOKEN, startMcpTestServer } from '../support/mcp-test-server.js';
import { makeStoredRun } from '../support/stored-run-fixtures.js';
import { synthesizeTestStack } from './synthesize-test-stack.js';

const TOOLS_MODULE = resolveProjectPath('lambdas/tools/no-team-tools.ts');
const HANDLERS_DIRECTORY = resolveProjectPath('lambdas/handlers');

/** Every Lambda entry: a file in lambdas/handlers/ that exports `handler`. */
async function listHandlerEntries(): Promise<string[]> {
  const files = (await readdir(HANDLERS_DIRECTORY)).filter((file) => file.endsWith('.ts'));
  const entries: string[] = [];
  for (const file of files) {
    const source = await readFile(join(HANDLERS_DIRECTORY, file), 'utf8');
    if (/^export const handler\b/m.test(source)) entries.push(file);
  }
  return entries.sort();
}

/** Bundles an entry with the deployed settings into `directory`, as `<name>.mjs`. */
async function bundle(
  entry: string,
  directory: string,
  name: string,
  options: { withSideModules?: boolean } = {},
): Promise<Metafile> {
  const result = await build({
    ...createEsbuildOptions(entry, TOOLS_MODULE),
    outfile: join(directory, `${name}.mjs`),
    metafile: true,
  });
  // What deploys beside the bundle (the tokenizer, the Encryption SDK), as the CDK builds it.
  if (options.withSideModules) {
    await buildSideModules(directory, await readFile(join(directory, `${name}.mjs`), 'utf8'), TOOLS_MODULE);
  }
  return result.metafile;
}

/** The built-ins the handler bundles require instead of importing (`computeHandlerBundleSettings`'s aliases). */
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

// Runs in the child: the Lambda runtime's streaming global, one invocation, its answer as JSON.
const INVOKE_ONCE = `
const chunks = [];
globalThis.awslambda = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: { from: (stream, prelude) => { chunks.push(JSON.stringify(prelude)); return stream; } },
};
const { handler } = await import(process.argv[1]);
const stream = { write: (chunk) => { chunks.push(String(chunk)); return true; }, end: (chunk) => { if (chunk) chunks.push(String(chunk)); }, on: () => stream, once: () => stream, setContentType: () => {} };
let answer;
try {
  const result = await handler(JSON.parse(process.argv[2]), stream);
  answer = result === undefined ? { streamed: chunks.join('') } : result;
} catch (error) {
  answer = { error: error.name };
}
process.stdout.write('\\n' + 'ANSWER ' + JSON.stringify(answer));
`;

async function invokeInFreshProcess(
  bundlePath: string,
  event: unknown,
  environment: Record<string, string>,
): Promise<unknown> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', INVOKE_ONCE, pathToFileURL(bundlePath).href, JSON.stringify(event)],
    {
      env: {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        COUNTERSIGN_SEALING_KEY_ARN:
          'arn:aws:kms:us-east-1:111122223333:key/00000000-0000-0000-0000-000000000000',
        COUNTERSIGN_OVERFLOW_BUCKET: 'countersign-overflow-test',
        COUNTERSIGN_OVERFLOW_KEY_ARN:
          'arn:aws:kms:us-east-1:111122223333:key/11111111-1111-1111-1111-111111111111',
        // The deciding functions' receipt key (the construct tells api-decision and slack-interactions).
        COUNTERSIGN_RECEIPT_KEY_ARN:
          'arn:aws:kms:us-east-1:111122223333:key/22222222-2222-2222-2222-222222222222',
        COUNTERSIGN_MODEL_PROVIDER: 'scripted',
        COUNTERSIGN_JWT_ISSUER: 'https://issuer.example.com',
        COUNTERSIGN_JWT_AUDIENCE: 'countersign',
        // The channels' settings, as the construct sets them on their functions.
        COUNTERSIGN_SLACK_BOT_TOKEN_SECRET_ARN:
          'arn:aws:secretsmanager:us-east-1:111122223333:secret:bot-abcdef',
        COUNTERSIGN_SLACK_SIGNING_SECRET_ARN:
          'arn:aws:secretsmanager:us-east-1:111122223333:secret:signing-abcdef',
        COUNTERSIGN_SLACK_ROUTES: '[{"channelId":"C0123456789"}]',
        COUNTERSIGN_EMAIL_FROM_ADDRESS: 'countersign@example.com',
        COUNTERSIGN_INBOX_URL: 'https://abc.execute-api.us-east-1.amazonaws.com/',
        POWERTOOLS_LOG_LEVEL: 'ERROR',
        ...environment,
      },
    },
  );
  // The handler's own log lines share stdout; the answer is the last line.
  const answer = stdout.split('\n').at(-1) ?? '';
  return JSON.parse(answer.replace(/^ANSWER /, ''));
}

describe('the Lambda handler bundles', () => {
  // Inside node_modules, so a bundle resolves @aws-sdk/* as the Lambda runtime provides it.
  let directory: string;

  beforeAll(async () => {
    const cache = resolveProjectPath('node_modules/.cache');
    await mkdir(cache, { recursive: true });
    // Its real path: Node reports where a module resolved without the symlinks on the way.
    directory = await realpath(await mkdtemp(join(cache, 'countersign-bundles-')));
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

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
        const metafile = await bundle(join(HANDLERS_DIRECTORY, entry), directory, name);
        const loaded = (await import(pathToFileURL(join(directory, `${name}.mjs`)).href)) as {
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
          bundle(join(HANDLERS_DIRECTORY, entry), directory, entry.replace(/\.ts$/, '')),
        ),
      );
      for (const entry of entries) {
        const name = entry.replace(/\.ts$/, '');

        // Act
        answers[name] = await invokeInFreshProcess(join(directory, `${name}.mjs`), eventFor(name), {
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

  it('serve the runbook from the inbox bundle: this build’s docs/runbook.md, every alarm at its anchor', async () => {
    // Prepare: the alarms the construct creates, and the inbox function as it deploys
    const alarmNames = Object.keys(synthesizeTestStack().stack.countersign.observability.alarms);
    await bundle(join(HANDLERS_DIRECTORY, 'api-inbox.ts'), directory, 'api-inbox-runbook');
    const bundled = await readFile(join(directory, 'api-inbox-runbook.mjs'), 'utf8');
    const event = {
      version: '2.0',
      rawPath: '/runbook',
      routeKey: 'GET /runbook',
      headers: { accept: 'text/html' },
      requestContext: { http: { method: 'GET', path: '/runbook' }, requestId: 'bundle-test' },
    };

    // Act: a fresh process, as a cold Lambda; no table is reached for a public page
    const answer = (await invokeInFreshProcess(join(directory, 'api-inbox-runbook.mjs'), event, {
      COUNTERSIGN_TABLE_NAME: 'countersign-runbook-test',
    })) as { statusCode: number; headers: Record<string, string>; body: string };

    // Assess: the runbook's text is inside the bundle (no file is read beside it) and rendered
    expect(bundled).toContain('This is the on-call page.');
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-/);
    expect(alarmNames.length).toBeGreaterThan(15);
    for (const name of alarmNames) expect(answer.body, name).toContain(`id="${name.toLowerCase()}"`);
    for (const anchor of ['redrive', 'spend-and-model-health', 'production-checklist', 'smoke-test']) {
      expect(answer.body, anchor).toContain(`id="${anchor}"`);
    }
    expect(answer.body).toContain('href="https://unpkg.com/countersign/docs/approvers.md#the-inbox"');
  });

  it('stamp the retention the construct sets on a run the bundled composition ends', async () => {
    // Prepare: a running run in dynalite; the bundle gets the retention as the construct sets it.
    const dynamo = await startDynalite();
    const retentionSeconds = 30 * 86_400;
    const runId = 'run-ending';
    await new DynamoRunRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tableName,
    }).createRun(makeStoredRun(runId), Uint8Array.from([1, 2, 3]));
    await bundle(join(HANDLERS_DIRECTORY, 'finish-run.ts'), directory, 'finish-run');

    try {
      // Act
      const before = Math.floor(Date.now() / 1000);
      const answer = await invokeInFreshProcess(
        join(directory, 'finish-run.mjs'),
        { runId, turn: 0, executionId: 'arn:aws:states:us-east-1:111122223333:execution:m:run-ending' },
        {
          AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
          COUNTERSIGN_TABLE_NAME: dynamo.tableName,
          COUNTERSIGN_ENDED_RUN_RETENTION_SECONDS: String(retentionSeconds),
        },
      );
      const after = Math.ceil(Date.now() / 1000);
      const { Item } = await dynamo.documentClient.send(
        new GetCommand({
          TableName: dynamo.tableName,
          Key: { [TABLE_LAYOUT.partitionKey]: `RUN#${runId}`, [TABLE_LAYOUT.sortKey]: 'RUN' },
        }),
      );

      // Assess: the per-handler composition passes the retention on to the run repository.
      expect(answer).toEqual({ runId });
      expect(Item?.status).toBe('completed');
      const removeAfter = Item?.[TABLE_LAYOUT.timeToLiveAttribute] as number;
      expect(removeAfter).toBeGreaterThanOrEqual(before + retentionSeconds);
      expect(removeAfter).toBeLessThanOrEqual(after + retentionSeconds);
    } finally {
      await dynamo.stop();
    }
  });

  it('keep the sealer sealing through the Encryption SDK beside the bundle, refusing tampering, another run and an extended blob, and carrying 2 MB', async () => {
    // Prepare
    const metafile = await bundle(
      resolveProjectPath('test/infra/fixtures/sealer-bundle-entry.ts'),
      directory,
      'sealer',
      { withSideModules: true },
    );
    const bundled = await import(pathToFileURL(join(directory, 'sealer.mjs')).href);
    const keysDirectory = join(directory, 'keys');
    const sealer = new bundled.EnvelopeSealer({
      keyWrapping: await new bundled.LocalKeyring(keysDirectory).keyWrapping(),
    });
    const state = new TextEncoder().encode(JSON.stringify({ transcript: 'x'.repeat(64) }));
    const large = randomBytes(2 * 1024 * 1024);

    // Act
    const sealed: Uint8Array = await sealer.seal('run-state', 'run-1', state);
    const flipped = Uint8Array.from(sealed);
    flipped[flipped.length - 40] = (flipped[flipped.length - 40] ?? 0) ^ 0x01;
    const extended = new Uint8Array([...sealed, 0]);
    const sealedLarge: Uint8Array = await sealer.seal('run-state', 'run-2', large);

    // Assess: the SDK is the side module, imported on first use only; each blob is one SDK message
    const imports = Object.values(metafile.outputs).flatMap((output) => output.imports);
    expect(imports.filter((imported) => imported.path === '@aws-crypto/client-node')).toEqual([
      { path: '@aws-crypto/client-node', kind: 'dynamic-import', external: true },
    ]);
    expect(Object.keys(metafile.inputs).filter((input) => input.includes('@aws-crypto/'))).toEqual([]);
    expect([sealed[0], sealed[1], sealed[2]]).toEqual([0x02, 0x04, 0x78]);
    expect(Buffer.from(await sealer.unseal('run-state', 'run-1', sealed))).toEqual(Buffer.from(state));
    for (const [runId, blob] of [
      ['run-1', flipped],
      ['run-other', sealed],
      ['run-1', extended],
    ] as const) {
      await expect(sealer.unseal('run-state', runId, blob)).rejects.toMatchObject({
        code: 'sealed-state-rejected',
      });
    }
    expect(Buffer.from(await sealer.unseal('run-state', 'run-2', sealedLarge)).equals(large)).toBe(true);
  });

  it('keep the sealer wrapping its keys with KMS through the Encryption SDK beside the bundle', async () => {
    // Prepare: the SDK's KMS keyring and KMS client, from the side module, against a fake KMS.
    await bundle(resolveProjectPath('test/infra/fixtures/sealer-bundle-entry.ts'), directory, 'sealer', {
      withSideModules: true,
    });
    const bundled = await import(pathToFileURL(join(directory, 'sealer.mjs')).href);
    const kms = await startFakeKmsServer();
    const createSealer = () =>
      new bundled.EnvelopeSealer({
        keyWrapping: bundled.createKmsKeyWrapping({
          keyArn: kms.keyArn,
          clientConfig: {
            endpoint: kms.endpoint,
            credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
            maxAttempts: 1,
          },
        }),
      });

    try {
      // Act: one container seals, a cold one unseals
      const sealed: Uint8Array = await createSealer().seal(
        'approval-card',
        'run-kms',
        new Uint8Array([1, 2, 3]),
      );
      const unsealed: Uint8Array = await createSealer().unseal('approval-card', 'run-kms', sealed);

      // Assess: the KMS client is the bundle's (the side module's default one would throw), and
      // the side module carries no copy of the AWS SDK core (its first load paid for one)
      const sideModule = await readFile(
        join(directory, 'node_modules/@aws-crypto/client-node/index.mjs'),
        'utf8',
      );
      expect([...unsealed]).toEqual([1, 2, 3]);
      expect(kms.requestCounts()).toEqual({ GenerateDataKey: 1, Decrypt: 1 });
      expect(sideModule).not.toContain('amz-sdk-invocation-id');
      expect(sideModule.length).toBeLessThan(250_000);
    } finally {
      await kms.stop();
    }
  });

  it('keep the Encryption SDK signing suites working with the one bn.js (asn1.js and the curve math)', async () => {
    // Prepare: a signing suite reaches asn1.js (PEM keys) and bn.js (point decompression).
    await bundle(resolveProjectPath('test/infra/fixtures/encryption-sdk-bundle-entry.ts'), directory, 'sdk', {
      withSideModules: true,
    });
    const sdk = await import(pathToFileURL(join(directory, 'sdk.mjs')).href);
    const keyring = new sdk.RawAesKeyringNode({
      keyName: 'test',
      keyNamespace: 'countersign-test',
      unencryptedMasterKey: new Uint8Array(randomBytes(32)),
      wrappingSuite: sdk.RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
    });
    const client = sdk.buildClient(sdk.CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT);
    const plaintext = randomBytes(100_000);

    // Act
    const { result } = await client.encrypt(keyring, plaintext, {
      suiteId: sdk.AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY_ECDSA_P384,
    });
    const decrypted = await client.decrypt(keyring, result);
    const tampered = Buffer.from(result);
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] ?? 0) ^ 0x01;

    // Assess
    expect(Buffer.from(decrypted.plaintext).equals(plaintext)).toBe(true);
    expect(decrypted.messageHeader.suiteId).toBe(
      sdk.AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY_ECDSA_P384,
    );
    await expect(client.decrypt(keyring, tampered)).rejects.toThrow();
  });

  it('keep the error names a card and a log show when minified: PreviewTimeout, not a letter', async () => {
    // Prepare
    await bundle(resolveProjectPath('test/infra/fixtures/card-names-bundle-entry.ts'), directory, 'names');
    const source = await readFile(join(directory, 'names.mjs'), 'utf8');
    const bundled = await import(pathToFileURL(join(directory, 'names.mjs')).href);
    const writer = (name: string, preview: () => Promise<string[]>) => ({
      name,
      description: name,
      effect: 'write',
      input: bundled.z.object({}),
      execute: async () => ({ content: 'ok', isError: false }),
      preview,
    });
    const call = (index: number, tool: string) => ({
      index,
      callId: `call-${index}`,
      tool,
      arguments: {},
      offered: true,
    });
    const silent = () => undefined;

    // Act
    const previews = await bundled.capturePreviews({
      calls: bundled.resolveCalls(
        [call(0, 'slow_write'), call(1, 'empty_write'), call(2, 'refusing_write')],
        new bundled.ToolRegistry([
          writer('slow_write', () => new Promise(() => undefined)),
          writer('empty_write', async () => []),
          writer('refusing_write', async () => {
            throw new bundled.CountersignError('forbidden', 'Access denied for user x@host');
          }),
        ]),
      ),
      actingUser: { userId: 'editor', grants: [], pageAccess: '*', languageAccess: '*', toolAccess: [] },
      context: {},
      logger: { debug: silent, info: silent, warn: silent, error: silent },
      timeBudgetMs: 20,
    });

    // Assess: the classes were renamed by minification, and the names shown are still the real ones.
    expect(source).not.toMatch(/class PreviewTimeout\b/);
    expect(previews.map((call: { preview?: { lines: string[] } }) => call.preview?.lines)).toEqual([
      ['Preview failed (PreviewTimeout).'],
      ['Preview failed (EmptyPreview).'],
      ['Preview failed (CountersignError).'],
    ]);
    expect(bundled.nameErrorClass(new bundled.CountersignError('internal', 'x'))).toBe('CountersignError');
  });

  it("ship model-turn's tokenizer beside its bundle, where the lazy import resolves, and not inside it", async () => {
    // Prepare
    const modelTurn = await bundle(join(HANDLERS_DIRECTORY, 'model-turn.ts'), directory, 'model-turn');
    const bundleText = await readFile(join(directory, 'model-turn.mjs'), 'utf8');

    // Act
    const built = await buildSideModules(directory, bundleText, TOOLS_MODULE);
    const probe = join(directory, 'probe-tokenizer.mjs');
    await writeFile(
      probe,
      "const { countTokens } = await import('gpt-tokenizer/encoding/cl100k_base');\n" +
        "process.stdout.write(JSON.stringify({ where: import.meta.resolve('gpt-tokenizer/encoding/cl100k_base'), tokens: countTokens('hello world') }));\n",
    );
    const { stdout } = await promisify(execFile)(process.execPath, [probe]);

    // Assess
    const inputs = Object.keys(modelTurn.inputs).filter((input) => input.includes('gpt-tokenizer/'));
    const bundled = Object.values(modelTurn.outputs).flatMap((output) =>
      Object.keys(output.inputs).filter((input) => input.includes('gpt-tokenizer/')),
    );
    expect(inputs).toEqual([]);
    expect(bundled).toEqual([]);
    expect(built).toEqual([
      join(directory, 'node_modules/gpt-tokenizer/encoding/cl100k_base.mjs'),
      join(directory, 'node_modules/@aws-crypto/client-node/index.mjs'),
      join(directory, 'node_modules/@modelcontextprotocol/sdk/client/index.mjs'),
      join(directory, 'node_modules/@modelcontextprotocol/sdk/client/streamableHttp.mjs'),
      join(directory, 'node_modules/@aws-sdk/client-s3/index.mjs'),
    ]);
    expect(JSON.parse(stdout)).toEqual({
      where: pathToFileURL(join(directory, 'node_modules/gpt-tokenizer/encoding/cl100k_base.mjs')).href,
      tokens: 2,
    });
    expect(await buildSideModules(directory, 'export const handler = () => 1;', TOOLS_MODULE)).toEqual([]);
  });

  it('ship the MCP SDK beside execute-tools, not inside it, and talk to an MCP server from there', async () => {
    // Prepare
    const executeTools = await bundle(
      join(HANDLERS_DIRECTORY, 'execute-tools.ts'),
      directory,
      'execute-tools',
    );
    const bundleText = await readFile(join(directory, 'execute-tools.mjs'), 'utf8');
    const server = await startMcpTestServer();

    try {
      // Act
      const built = await buildSideModules(directory, bundleText, TOOLS_MODULE);
      const probe = join(directory, 'probe-mcp.mjs');
      await writeFile(
        probe,
        "const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');\n" +
          "const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');\n" +
          "const client = new Client({ name: 'probe', version: '1' });\n" +
          `await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2]), { requestInit: { headers: { authorization: 'Bearer ${MCP_TEST_TOKEN}' } } }));\n` +
          "const result = await client.callTool({ name: 'lookup', arguments: { ticket: 'T-7' } });\n" +
          'await client.close();\n' +
          "process.stdout.write(JSON.stringify({ where: import.meta.resolve('@modelcontextprotocol/sdk/client/index.js'), result: result.content }));\n",
      );
      const { stdout } = await promisify(execFile)(process.execPath, [probe, server.url]);

      // Assess
      const bundled = Object.values(executeTools.outputs).flatMap((output) =>
        Object.keys(output.inputs).filter((input) => input.includes('@modelcontextprotocol/')),
      );
      expect(bundled).toEqual([]);
      expect(built).toContain(join(directory, 'node_modules/@modelcontextprotocol/sdk/client/index.mjs'));
      expect(JSON.parse(stdout)).toEqual({
        where: pathToFileURL(join(directory, 'node_modules/@modelcontextprotocol/sdk/client/index.mjs')).href,
        result: [{ type: 'text', text: 'Ticket T-7: open, assigned to Ana.' }],
      });
    } finally {
      await server.stop();
    }
  });

  it('ship the S3 client beside every bundle, load it only when state overflows, and store and read an object with it', async () => {
    // Prepare: prepare's bundle in a folder whose S3 side module throws when evaluated.
    const isolated = await mkdtemp(join(directory, 's3-side-module-'));
    const prepare = await bundle(join(HANDLERS_DIRECTORY, 'prepare.ts'), isolated, 'prepare');
    const bundleText = await readFile(join(isolated, 'prepare.mjs'), 'utf8');
    const built = await buildSideModules(isolated, bundleText, TOOLS_MODULE);
    const sideModule = join(isolated, 'node_modules/@aws-sdk/client-s3/index.mjs');
    const realSideModule = await readFile(sideModule, 'utf8');
    await writeFile(sideModule, "throw new Error('the S3 client was loaded at init');\n");
    const objects = new Map<string, Buffer>();
    const s3 = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const key = new URL(request.url ?? '/', 'http://s3').pathname;
        if (request.method === 'PUT') objects.set(key, Buffer.concat(chunks));
        const body = request.method === 'GET' ? objects.get(key) : undefined;
        response.writeHead(request.method === 'GET' && !body ? 404 : 200, { etag: '"e"' });
        response.end(body);
      });
    });
    await new Promise<void>((resolve) => s3.listen(0, '127.0.0.1', resolve));

    try {
      // Act: a cold start, then the side module as the overflow store uses it.
      const { stdout: loaded } = await promisify(execFile)(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          'const { handler } = await import(process.argv[1]); process.stdout.write(typeof handler);',
          pathToFileURL(join(isolated, 'prepare.mjs')).href,
        ],
        { env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1' } },
      );
      await writeFile(sideModule, realSideModule);
      const probe = join(isolated, 'probe-s3.mjs');
      await writeFile(
        probe,
        "const { S3Client, PutObjectCommand, GetObjectCommand } = await import('@aws-sdk/client-s3');\n" +
          "const client = new S3Client({ region: 'us-east-1', endpoint: process.argv[2], forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });\n" +
          "await client.send(new PutObjectCommand({ Bucket: 'overflow', Key: 'runs/r1/state', Body: new Uint8Array([1, 2, 3]) }));\n" +
          "const read = await client.send(new GetObjectCommand({ Bucket: 'overflow', Key: 'runs/r1/state' }));\n" +
          "process.stdout.write(JSON.stringify({ where: import.meta.resolve('@aws-sdk/client-s3'), bytes: [...(await read.Body.transformToByteArray())] }));\n",
      );
      const address = s3.address() as AddressInfo;
      const { stdout } = await promisify(execFile)(process.execPath, [
        probe,
        `http://127.0.0.1:${address.port}`,
      ]);

      // Assess
      const bundled = Object.values(prepare.outputs).flatMap((output) =>
        Object.keys(output.inputs).filter((input) => input.includes('@aws-sdk/client-s3/')),
      );
      expect(bundled).toEqual([]);
      expect(built).toEqual([sideModule]);
      expect(loaded).toBe('function');
      expect(JSON.parse(stdout)).toEqual({ where: pathToFileURL(sideModule).href, bytes: [1, 2, 3] });
    } finally {
      await new Promise((resolve) => s3.close(resolve));
    }
  });

  it('are the bytes the CDK deploys: the build and the construct bundle alike, side modules included', async () => {
    // Prepare
    const outdir = join(directory, 'cdk.out');
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundles');
    for (const name of ['prepare', 'model-turn'] as const) {
      new LambdaFunction(stack, name, {
        code: createHandlerCode(name, { prebuiltDirectory: join(directory, 'no-prebuilt') }),
        handler: 'index.handler',
        runtime: LAMBDA_RUNTIME,
      });
    }

    // Act
    const assembly = app.synth();
    const assets = (await readdir(assembly.directory)).filter((entry) => entry.startsWith('asset.'));
    const deployed = await Promise.all(
      assets.map(async (asset) => {
        const assetDirectory = join(assembly.directory, asset);
        const sideModule = join(assetDirectory, 'node_modules/gpt-tokenizer/encoding/cl100k_base.mjs');
        return {
          bytes: (await readFile(join(assetDirectory, 'index.mjs'))).byteLength,
          sideModuleBytes: (await readFile(sideModule).catch(() => undefined))?.byteLength,
        };
      }),
    );
    // What `npm run build` ships for the same handlers (lib/handler-assets.ts).
    const benched = async (name: 'prepare' | 'model-turn') => {
      buildHandlerAsset(esbuild, name, join(directory, 'built', name), TOOLS_MODULE);
      return (await readFile(join(directory, 'built', name, 'index.mjs'))).byteLength;
    };
    const prepareBytes = await benched('prepare');
    const modelTurnBytes = await benched('model-turn');
    const benchedSideModule = (
      await readFile(join(directory, 'built/model-turn/node_modules/gpt-tokenizer/encoding/cl100k_base.mjs'))
    ).byteLength;

    // Assess: model-turn ships the tokenizer beside it, built alike; prepare ships nothing beside
    expect(deployed).toHaveLength(2);
    expect(deployed).toContainEqual({ bytes: prepareBytes, sideModuleBytes: undefined });
    expect(deployed).toContainEqual({
      bytes: modelTurnBytes,
      sideModuleBytes: benchedSideModule,
    });
  }, 300_000); // a whole cdk synth with bundling: more than the default 60 s on a busy machine.
});
