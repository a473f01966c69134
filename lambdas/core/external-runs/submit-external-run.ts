import type { RunStateCall } from '../approvals/pending-call.js';
import { canonicalJson, sha256Hex } from '../canonical-json.js';
import type { Configuration } from '../configurations.js';
import { CountersignError, isCountersignError } from '../errors.js';
import { requireGrant, type UserProfile } from '../identity.js';
import { nestsDeeperThan } from '../json-depth.js';
import { mayStartWith } from '../policy/start-access.js';
import type { PrincipalSource } from '../principal.js';
import { enforceRunStartQuotas, recordStartedRun } from '../quotas/enforce-quotas.js';
import type { RunDependencies } from '../run-dependencies.js';
import { requireUserRecord } from '../runs/require-user-record.js';
import { RUN_STATE_SCHEMA_VERSION, type RunState } from '../runs/run-state.js';
import { computeRunPolicy, newRunRecord, startExecutionOrFail } from '../runs/start-run.js';
import { MAX_TURN_ARGUMENTS_DEPTH } from '../runs/take-model-turn.js';
import { sealJson } from '../sealed-json.js';
import { TEXTS } from '../texts.js';
import { boundCallerPreview } from './caller-previews.js';
import {
  CLIENT_KEY_SCHEMA_VERSION,
  type ClientKeyClaim,
  type ExternalRunStore,
} from './external-run-store.js';
import { externalToolName } from './external-tool-names.js';
import { guardOfDeclaredEffect, type SubmitExternalRunRequest } from './external-turn.js';
import { checkWebhookUrl, DEPLOYED_WEBHOOK_URL_POLICY } from './webhook-url.js';

/** What submitting an external turn needs: starting a run, and the store of client keys. */
export type SubmitExternalRunDependencies = Pick<
  RunDependencies,
  'runs' | 'sealer' | 'configurations' | 'executions' | 'clock' | 'newId' | 'logger' | 'metrics'
> &
  Partial<Pick<RunDependencies, 'quotas' | 'settings'>> & { externalRuns: ExternalRunStore };

/** `repeated`: the key was used before for this same turn, whose run this is. */
export type SubmitExternalRunOutcome = { kind: 'submitted'; runId: string; repeated: boolean };

/**
 * An agent that runs elsewhere submits one turn for approval (docs/external-agents.md). It
 * becomes a run of its own kind: one execution of the same state machine, which pauses on the
 * same card, so every gate, the routing, the expiry and the audit apply as to any run.
 *
 * Idempotent by the caller's `clientKey`: the first request claims the key (a conditional put)
 * before it creates the run, and a retry of the same request gets the same run, finishing what a
 * first attempt left half done; the same key with another request is a 409.
 */
export async function submitExternalRun(
  dependencies: SubmitExternalRunDependencies,
  principal: UserProfile,
  request: SubmitExternalRunRequest,
  principalSource: PrincipalSource,
): Promise<SubmitExternalRunOutcome> {
  requireGrant(principal, 'agent_run');
  requireUserRecord(principal, principalSource);
  const turn = readTurn(dependencies, request);
  const requestDigest = `sha256:${sha256Hex(canonicalJson(request))}`;
  const earlier = await dependencies.externalRuns.getClientKey(principal.userId, request.clientKey);
  if (earlier) return repeatSubmission(dependencies, principal, turn, earlier, requestDigest);

  const configuration = await readConfiguration(dependencies, principal, request.configurationId);
  // Per-principal quotas after the access checks: a refused submission costs no counter.
  await enforceRunStartQuotas(dependencies, principal, configuration);
  const claim: ClientKeyClaim = {
    schemaVersion: CLIENT_KEY_SCHEMA_VERSION,
    owner: principal.userId,
    clientKey: request.clientKey,
    runId: dependencies.newId(),
    requestDigest,
    claimedAt: dependencies.clock.now().toISOString(),
  };
  const claimed = await dependencies.externalRuns.claimClientKey(claim);
  if (claimed.kind === 'exists') {
    return repeatSubmission(dependencies, principal, turn, claimed.existing, requestDigest);
  }
  await createExternalRun(dependencies, principal, turn, configuration, claim.runId);
  dependencies.metrics.count('ExternalRunsSubmitted');
  dependencies.logger.info('external run submitted', {
    runId: claim.runId,
    configurationId: configuration.configurationId,
    calls: turn.calls.length,
  });
  return { kind: 'submitted', runId: claim.runId, repeated: false };
}

/** A submission checked beyond its schema: each call's declared effect, its depth, the webhook. */
interface ExternalTurnInput {
  request: SubmitExternalRunRequest;
  calls: Array<
    SubmitExternalRunRequest['calls'][number] & { guard: RunStateCall['guard']; editable: boolean }
  >;
  webhookUrl?: string;
}

function readTurn(
  dependencies: SubmitExternalRunDependencies,
  request: SubmitExternalRunRequest,
): ExternalTurnInput {
  const declared = new Map(request.tools.map((tool) => [tool.name, tool]));
  const calls = request.calls.map((call, index) => {
    const effect = declared.get(call.tool)?.effect;
    if (effect === undefined) {
      const field = `body.calls.${index}.tool`;
      throw new CountersignError('bad-request', TEXTS.externalUndeclaredTool(field, call.tool), { field });
    }
    if (nestsDeeperThan(call.arguments, MAX_TURN_ARGUMENTS_DEPTH)) {
      const field = `body.calls.${index}.arguments`;
      throw new CountersignError(
        'bad-request',
        TEXTS.externalArgumentsTooDeep(field, MAX_TURN_ARGUMENTS_DEPTH),
        {
          field,
        },
      );
    }
    return {
      ...call,
      guard: guardOfDeclaredEffect(effect),
      editable: declared.get(call.tool)?.editable === true,
    };
  });
  if (calls.every((call) => call.guard === 'none')) {
    throw new CountersignError('bad-request', TEXTS.externalNothingToApprove, { field: 'body.calls' });
  }
  if (request.webhookUrl === undefined) return { request, calls };
  const policy = dependencies.settings?.webhookUrlPolicy ?? DEPLOYED_WEBHOOK_URL_POLICY;
  const verdict = checkWebhookUrl(request.webhookUrl, policy);
  if (verdict.kind === 'refused') {
    throw new CountersignError('bad-request', TEXTS.externalWebhookUrlRefused(verdict.problem), {
      field: 'body.webhookUrl',
    });
  }
  return { request, calls, webhookUrl: verdict.url.href };
}

async function readConfiguration(
  dependencies: SubmitExternalRunDependencies,
  principal: UserProfile,
  configurationId: string,
): Promise<Configuration> {
  const configuration = await dependencies.configurations.getConfiguration(configurationId);
  if (!configuration) {
    throw new CountersignError(
      'bad-request',
      `configurationId: no configuration "${configurationId}" exists.`,
      {
        field: 'configurationId',
      },
    );
  }
  // Who may use a configuration is data the admins set, for machines as for people.
  if (!mayStartWith(principal, configuration.startAccess)) {
    dependencies.metrics.count('StartRefusals');
    throw new CountersignError(
      'forbidden',
      TEXTS.startAccessRefused(`configuration "${configuration.configurationId}"`),
    );
  }
  return configuration;
}

/**
 * The key was claimed before. The same request is a retry: it gets the same run, and whatever a
 * first attempt left undone (the run not created, its execution not started) is done now.
 */
async function repeatSubmission(
  dependencies: SubmitExternalRunDependencies,
  principal: UserProfile,
  turn: ExternalTurnInput,
  claim: ClientKeyClaim,
  requestDigest: string,
): Promise<SubmitExternalRunOutcome> {
  if (claim.requestDigest !== requestDigest) {
    throw new CountersignError('conflict', TEXTS.clientKeyReused, { field: 'body.clientKey' });
  }
  const record = await dependencies.runs.getRunRecord(claim.runId);
  if (!record) {
    const configuration = await readConfiguration(dependencies, principal, turn.request.configurationId);
    await createExternalRun(dependencies, principal, turn, configuration, claim.runId);
  } else if (record.status === 'running' && record.executionId === undefined) {
    // Prepare records the execution: none yet means its start may never have gone out.
    await startExecutionOrFail(dependencies, claim.runId);
  }
  return { kind: 'submitted', runId: claim.runId, repeated: true };
}

/** The run record, its sealed state (the calls, the caller's previews, the webhook), its execution. */
async function createExternalRun(
  dependencies: SubmitExternalRunDependencies,
  principal: UserProfile,
  { request, calls, webhookUrl }: ExternalTurnInput,
  configuration: Configuration,
  runId: string,
): Promise<void> {
  const now = dependencies.clock.now().toISOString();
  const pendingCalls: RunStateCall[] = calls.map((call, index) => ({
    index,
    callId: call.callId ?? `call-${index}`,
    tool: externalToolName(configuration.configurationId, call.tool),
    arguments: call.arguments,
    offered: true,
    guard: call.guard,
    ...(call.editable ? { editable: true } : {}),
  }));
  const state: RunState = {
    schemaVersion: RUN_STATE_SCHEMA_VERSION,
    runId,
    turn: 0,
    // What the turn is for opens the transcript, as a run's input does: the card's request.
    transcript:
      request.summary === undefined
        ? []
        : [{ role: 'user', content: [{ type: 'text', text: request.summary }] }],
    pendingCalls,
    actingUser: principal,
    external: {
      clientKey: request.clientKey,
      callerPreviews: calls.flatMap((call, index) =>
        call.preview === undefined ? [] : [{ index, lines: boundCallerPreview(call.preview) }],
      ),
      ...(webhookUrl === undefined ? {} : { webhookUrl }),
    },
  };
  const record = newRunRecord({
    runId,
    kind: 'external',
    owner: principal.userId,
    label: configuration.label,
    configurationId: configuration.configurationId,
    policy: computeRunPolicy(configuration, undefined, dependencies.settings?.policyFloor),
    now,
  });
  await recordStartedRun(dependencies, principal, { runId, configurationId: configuration.configurationId });
  try {
    await dependencies.runs.createRun(record, await sealJson(dependencies.sealer, 'run-state', runId, state));
  } catch (error) {
    // A concurrent retry of the same request created it first: it is the same run, and its
    // creator starts it (a later retry starts it when that creator did not get to).
    if (isCountersignError(error, 'conflict')) return;
    throw error;
  }
  await startExecutionOrFail(dependencies, runId);
}
