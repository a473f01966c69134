import { join } from 'node:path';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { EXTERNAL_RUNS_SCOPE } from '../../lambdas/contract/route-definition.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { LocalJwtIssuer } from '../../lambdas/local/local-jwt-issuer.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import { apiClientWithToken, startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';
import { demoMachineClient, demoTurn, machineClientOf } from './external-runs-support.js';

/** Posts a form to the local token endpoint, as any OAuth client would. */
async function requestToken(tokenUrl: string, form: Record<string, string>, authorization?: string) {
  const response = await fetch(tokenUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(authorization ? { authorization } : {}),
    },
    body: new URLSearchParams(form),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('who may use the approval API, and the 4xx it answers', () => {
  const runtime = useTestRuntime();

  it('issues machine tokens by the client-credentials grant only, to a client whose secret matches', async () => {
    // Prepare
    const { clientId, clientSecret } = demoMachineClient(runtime);
    const { tokenUrl } = runtime.machine;

    // Act
    const granted = await requestToken(
      tokenUrl,
      { grant_type: 'client_credentials' },
      basic(clientId, clientSecret),
    );
    const posted = await requestToken(tokenUrl, {
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    });
    const wrongSecret = await requestToken(
      tokenUrl,
      { grant_type: 'client_credentials' },
      basic(clientId, 'nope'),
    );
    const unknownClient = await requestToken(
      tokenUrl,
      { grant_type: 'client_credentials' },
      basic('x', clientSecret),
    );
    const password = await requestToken(tokenUrl, { grant_type: 'password' }, basic(clientId, clientSecret));
    const otherScope = await requestToken(
      tokenUrl,
      { grant_type: 'client_credentials', scope: 'aws.cognito.signin.user.admin' },
      basic(clientId, clientSecret),
    );

    // Assess
    expect(granted).toMatchObject({
      status: 200,
      json: {
        token_type: 'Bearer',
        expires_in: 3600,
        scope: EXTERNAL_RUNS_SCOPE,
        access_token: expect.any(String),
      },
    });
    expect(posted.status).toBe(200);
    for (const refused of [wrongSecret, unknownClient]) {
      expect(refused).toMatchObject({ status: 401, json: { error: 'invalid_client' } });
    }
    expect(password).toMatchObject({ status: 400, json: { error: 'unsupported_grant_type' } });
    expect(otherScope).toMatchObject({ status: 400, json: { error: 'invalid_scope' } });
  });

  it('takes a machine token on the machine routes only, and a person’s token nowhere there', async () => {
    // Prepare
    const machineToken = await runtime.machine.clients.issueToken('demo-agent');
    const machine = apiClientWithToken(runtime.url, machineToken);
    const { runId: personsRun } = await startRunAndSettle(runtime, 'List the pages');

    // Act
    const person = await runtime.client('editor').submitExternalRun({ body: demoTurn() });
    const admin = await runtime.client('admin').getExternalRun({ path: { id: personsRun } });
    const machineOnPersonRoutes = [
      await machine.listInbox(),
      await machine.startRun({ body: { taskId: 'page-metadata', input: 'List the pages' } }),
      await machine.getRun({ path: { id: personsRun } }),
    ];
    const personsRunAsExternal = await machine.getExternalRun({ path: { id: personsRun } });

    // Assess
    for (const refused of [person, admin, ...machineOnPersonRoutes]) {
      expect(refused.status).toBe(401);
      expect(refusalOf(refused).error.code).toBe('unauthenticated');
    }
    // A run of another kind, or of another owner, does not exist for this caller.
    expect(personsRunAsExternal.status).toBe(404);
  });

  it('refuses a forged, expired or scope-less machine token with 401', async () => {
    // Prepare: tokens signed with a key of our own, and one without the scope
    const key = new TextEncoder().encode('not-the-issuer-key-not-the-issuer-key');
    const forged = await new SignJWT({ client_id: 'demo-agent', scope: EXTERNAL_RUNS_SCOPE })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('demo-agent')
      .setIssuer('http://127.0.0.1/countersign-local')
      .setExpirationTime('1h')
      .sign(key);
    const expired = await runtime.machine.clients.issueToken('demo-agent', 1);
    // Signed by the local issuer's own key, but for another scope.
    const issuer = await LocalJwtIssuer.open({
      keysDirectory: join(runtime.baseDirectory, '.countersign', 'keys'),
    });
    const otherScope = await issuer.issueMachineToken({
      clientId: 'demo-agent',
      scope: 'other/scope',
      expiresInSeconds: 60,
    });
    await new Promise((resolve) => setTimeout(resolve, 2_100));

    // Act
    const answers = await Promise.all(
      [forged, expired, otherScope, 'not.a.token'].map((token) =>
        apiClientWithToken(runtime.url, token).submitExternalRun({ body: demoTurn() }),
      ),
    );

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 401]);
  });

  it.each([
    [
      'a call to a tool the request does not declare',
      { calls: [{ tool: 'delete_everything', arguments: {} }] },
      'body.calls.0.tool',
    ],
    [
      'a turn of reads only',
      {
        tools: [{ name: 'lookup_customer', effect: 'read' as const }],
        calls: [{ tool: 'lookup_customer', arguments: {} }],
      },
      'body.calls',
    ],
    [
      'a webhook over http to another host',
      { webhookUrl: 'http://agent.example.com/hooks' },
      'body.webhookUrl',
    ],
    [
      'a webhook to the metadata service',
      { webhookUrl: 'https://169.254.169.254/latest' },
      'body.webhookUrl',
    ],
    [
      'a tool declared twice',
      {
        tools: [
          { name: 'a', effect: 'write' as const },
          { name: 'a', effect: 'read' as const },
        ],
      },
      'body.tools',
    ],
    [
      'a tool name no tool can have',
      { tools: [{ name: 'billing/send', effect: 'write' as const }] },
      'body.tools.0.name',
    ],
    [
      'a preview line longer than a card shows',
      { calls: [{ tool: 'send_invoice', arguments: {}, preview: ['x'.repeat(501)] }] },
      'body.calls.0.preview.0',
    ],
    ['an unknown configuration', { configurationId: 'nope' }, 'configurationId'],
  ])('answers 400 naming the field for %s, and starts nothing', async (_case, overrides, field) => {
    // Prepare
    const agent = machineClientOf(runtime);
    const submittedBefore = runtime.notifications.length;

    // Act
    const answer = await agent.submitExternalRun({ body: demoTurn(overrides) });

    // Assess
    expect(answer.status).toBe(400);
    expect(refusalOf(answer).error.field).toBe(field);
    expect(runtime.notifications.length).toBe(submittedBefore);
  });

  it('answers 400 for arguments nested deeper than a card can show, and 413 for a body over 64 KiB', async () => {
    // Prepare
    let deep: Record<string, unknown> = {};
    for (let level = 0; level < 200; level += 1) deep = { deeper: deep };
    const agent = machineClientOf(runtime);

    // Act
    const tooDeep = await agent.submitExternalRun({
      body: demoTurn({ calls: [{ tool: 'send_invoice', arguments: deep }] }),
    });
    const tooLarge = await agent.submitExternalRun({
      body: demoTurn({
        summary: 'x'.repeat(3_000),
        calls: [{ tool: 'send_invoice', arguments: { text: 'y'.repeat(70_000) } }],
      }),
    });

    // Assess
    expect(refusalOf(tooDeep).error).toMatchObject({ code: 'bad-request', field: 'body.calls.0.arguments' });
    expect(tooLarge.status).toBe(413);
  });

  it('refuses a configuration whose access list leaves the agent out (403), and a machine without a user record', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const configuration = await runtime.dependencies.configurations.getConfiguration('demo-scripted');
    const agentRecord = await runtime.dependencies.users.getUser('demo-agent');
    if (!configuration || !agentRecord) throw new Error('demo data is missing');
    await runtime.dependencies.configurations.putConfiguration({
      ...configuration,
      startAccess: { grants: [], groups: [], users: ['editor'] },
    });

    // Act
    const outside = await agent.submitExternalRun({ body: demoTurn({ configurationId: 'demo-scripted' }) });
    await runtime.dependencies.users.deleteUser('demo-agent');
    const withoutRecord = await agent.submitExternalRun({ body: demoTurn() });
    await runtime.dependencies.users.putUser(agentRecord);
    await runtime.dependencies.configurations.putConfiguration(configuration);

    // Assess
    expect(refusalOf(outside).error).toEqual({
      code: 'forbidden',
      message: TEXTS.startAccessRefused('configuration "demo-scripted"'),
    });
    expect(withoutRecord.status).toBe(403);
  });

  it('answers an unknown run 404, and a wait beyond 25 seconds 400', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const { runId } = bodyOf(await agent.submitExternalRun({ body: demoTurn() }), 202);

    // Act
    const unknown = await agent.getExternalRun({ path: { id: 'no-such-run' } });
    const tooLong = await agent.send({ method: 'GET', path: `/external-runs/${runId}?wait=26` });

    // Assess
    expect(unknown.status).toBe(404);
    expect(tooLong.status).toBe(400);
    expect((tooLong.body as { error: { field: string } }).error.field).toBe('query.wait');
  });
});
