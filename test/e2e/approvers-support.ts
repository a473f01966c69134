import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importJWK, type JWK, SignJWT } from 'jose';
import { expect } from 'vitest';
import type { ApiClient, ApiRequest, ApiResponse } from '../../lambdas/contract/api-client.js';
import type { UserProfile } from '../../lambdas/core/identity.js';
import { DEMO_USERS } from '../../lambdas/local/demo-data.js';
import { startEmbeddedRuntime } from '../../lambdas/local/embedded-runtime.js';
import { LocalDataDirectory } from '../../lambdas/local/local-data-directory.js';
import {
  LOCAL_JWT_ALGORITHM,
  LOCAL_JWT_AUDIENCE,
  LOCAL_JWT_KEY_FILE_NAME,
} from '../../lambdas/local/local-jwt-issuer.js';
import { bodyOf, type RequestBody } from '../support/api-answers.js';
import {
  apiClientOf,
  apiClientWithToken,
  GENEROUS_QUOTAS,
  type ResponseJson,
  sendThroughClient,
  startRunAndSettle,
  stateMachineDefinition,
  type TestRuntime,
} from '../support/local-runtime.js';

/** A demo user's record (a copy: a test may change it and put it back). */
export function demoUser(userId: string): UserProfile {
  const user = DEMO_USERS.find((candidate) => candidate.userId === userId);
  if (!user) throw new Error(`no demo user ${userId}`);
  return structuredClone(user);
}

/** The state machine definition with the AwaitApproval wait shortened, for expiry tests. */
export function definitionWithApprovalTimeout(seconds: number): Record<string, unknown> {
  const definition = structuredClone(stateMachineDefinition());
  const states = definition.States as Record<string, Record<string, unknown>>;
  const awaitApproval = states.AwaitApproval;
  if (awaitApproval?.TimeoutSeconds === undefined) {
    throw new Error('The synthesized ASL has no AwaitApproval state with TimeoutSeconds.');
  }
  awaitApproval.TimeoutSeconds = seconds;
  return definition;
}

/**
 * Starts the embedded runtime like `startTestRuntime`, but with a given definition (the same
 * synthesized ASL, patched) and the matching approval timeout of the use cases.
 */
export async function startRuntimeWithDefinition(options: {
  definition: Record<string, unknown>;
  approvalTimeoutSeconds: number;
}): Promise<TestRuntime> {
  const baseDirectory = await mkdtemp(join(tmpdir(), 'countersign-approvers-'));
  const logLines: string[] = [];
  const capture = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    logLines.push(JSON.stringify({ level, message, ...fields }));
  };
  const runtime = await startEmbeddedRuntime({
    definition: options.definition,
    baseDirectory,
    port: 0,
    approvalTimeoutSeconds: options.approvalTimeoutSeconds,
    principalQuotas: GENEROUS_QUOTAS,
    logger: {
      debug: capture('debug'),
      info: capture('info'),
      warn: capture('warn'),
      error: capture('error'),
    },
  });
  return {
    ...runtime,
    baseDirectory,
    logLines,
    client: (as) => apiClientOf(runtime, as),
    sendRaw: (method, path, requestOptions = {}) =>
      sendThroughClient(apiClientOf(runtime, requestOptions.as), method, path, requestOptions),
  };
}

/**
 * Signs a token with the runtime's own local signing key, so a test can vary one claim at a
 * time (audience, expiry, subject) and show that the claim alone decides.
 */
export async function signTokenWithRuntimeKey(
  runtime: Pick<TestRuntime, 'baseDirectory' | 'issuerUrl'>,
  claims: {
    sub: string;
    groups?: string[];
    aud?: string;
    iss?: string;
    expiresAt?: number;
    issuedAt?: number;
  },
): Promise<string> {
  const keysDirectory = LocalDataDirectory.resolve({ baseDirectory: runtime.baseDirectory }).keysDirectory;
  const jwk = JSON.parse(await readFile(join(keysDirectory, LOCAL_JWT_KEY_FILE_NAME), 'utf8')) as JWK;
  const key = await importJWK(jwk, LOCAL_JWT_ALGORITHM);
  const now = Math.floor(Date.now() / 1000);
  const groups = claims.groups ?? [];
  return new SignJWT({ name: claims.sub, groups, 'cognito:groups': groups })
    .setProtectedHeader({ alg: LOCAL_JWT_ALGORITHM, typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(claims.iss ?? runtime.issuerUrl)
    .setAudience(claims.aud ?? LOCAL_JWT_AUDIENCE)
    .setIssuedAt(claims.issuedAt ?? now)
    .setExpirationTime(claims.expiresAt ?? now + 3600)
    .sign(key);
}

/** Writes a user record through the admin API and returns a token for that user. */
export async function createUser(runtime: TestRuntime, user: UserProfile): Promise<string> {
  const written = await runtime.client('admin').putUser({ path: { id: user.userId }, body: user });
  if (written.status !== 200) throw new Error(`PUT /admin/users answered ${written.status}: ${written.text}`);
  return signTokenWithRuntimeKey(runtime, { sub: user.userId, groups: user.grants });
}

/** POST /runs/{id}/decision as a demo user, with the typed client. */
export function decide(
  runtime: TestRuntime,
  runId: string,
  body: DecisionBody,
  as = 'approver',
): Promise<ApiResponse<'decideRun'>> {
  return runtime.client(as).decideRun({ path: { id: runId }, body });
}

type DecisionBody = ApiRequest<'decideRun'>['body'];

/** POST /runs/{id}/decision with a body the typed client would not send (malformed on purpose). */
export function decideWithAnyBody(
  runtime: TestRuntime,
  runId: string,
  body: unknown,
  as = 'approver',
): Promise<{ status: number; json: ResponseJson; text: string }> {
  return runtime.sendRaw('POST', `/runs/${encodeURIComponent(runId)}/decision`, { as, body });
}

/**
 * Records every page write a tool applied (its patch as JSON) and every task-token delivery (its
 * outcome kind) at the ports the use cases call, so a test can count that each happened exactly
 * once. A write the store refused (already applied for its key, or its record changed) is none.
 */
export function recordWritesAndDeliveries(
  runtime: TestRuntime,
  records: { readonly pageWrites: string[]; readonly deliveries: string[] },
): void {
  const pages = runtime.dependencies.pages;
  const applyMetadata = pages.applyMetadata.bind(pages);
  pages.applyMetadata = async (pageId, write) => {
    const outcome = await applyMetadata(pageId, write);
    if (outcome.kind === 'written') records.pageWrites.push(JSON.stringify(write.patch));
    return outcome;
  };
  const executions = runtime.dependencies.executions;
  const resume = executions.resume.bind(executions);
  executions.resume = async (taskToken, decision) => {
    const outcome = await resume(taskToken, decision);
    records.deliveries.push(outcome.kind);
    return outcome;
  };
}

/**
 * People and configurations written once through the admin API (on first `prepare()`), and a
 * typed client signed in as each person: what a test of several approvers starts from.
 */
export function preparePeople(
  runtime: TestRuntime,
  people: ReadonlyArray<RequestBody<'putUser'> & { userId: string }>,
  configurations: ReadonlyArray<RequestBody<'putConfiguration'> & { configurationId: string }>,
): { as: (userId: string) => ApiClient; prepare: () => Promise<void> } {
  const clients = new Map<string, ApiClient>();
  let ready: Promise<void> | undefined;
  const prepare = (): Promise<void> => {
    ready ??= (async () => {
      const admin = runtime.client('admin');
      for (const person of people) {
        const written = await admin.putUser({ path: { id: person.userId }, body: person });
        if (written.status !== 200) throw new Error(`PUT user ${person.userId}: ${written.text}`);
        const token = await signTokenWithRuntimeKey(runtime, { sub: person.userId });
        clients.set(person.userId, apiClientWithToken(runtime.url, token));
      }
      for (const configuration of configurations) {
        const id = configuration.configurationId;
        const written = await admin.putConfiguration({ path: { id }, body: configuration });
        if (written.status !== 200) throw new Error(`PUT configuration ${id}: ${written.text}`);
      }
    })();
    return ready;
  };
  const as = (userId: string): ApiClient => {
    const client = clients.get(userId);
    if (!client) throw new Error(`no client for ${userId}: call prepare() first`);
    return client;
  };
  return { as, prepare };
}

/** Starts a run that pauses on a card, and the digest and turn a decision on it names. */
export async function waitingRun(
  runtime: TestRuntime,
  input: string,
  options: { as?: string; configurationId?: string } = {},
): Promise<{ runId: string; digest: string; turn: number }> {
  const { runId, view } = await startRunAndSettle(runtime, input, options);
  expect(view.status).toBe('waiting');
  return { runId, digest: view.digest as string, turn: view.turn as number };
}

/** A run's status as the admin reads it. */
export async function statusOf(runtime: TestRuntime, runId: string): Promise<string> {
  return bodyOf(await runtime.client('admin').getRun({ path: { id: runId } })).status;
}
