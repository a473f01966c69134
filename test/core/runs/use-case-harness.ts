import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type * as z from 'zod/mini';
import { announceClosedCards } from '../../../lambdas/adapters/card-closing-announcer.js';
import { EnvelopeSealer } from '../../../lambdas/adapters/envelope-sealer.js';
import { createLocalKeyWrapping } from '../../../lambdas/adapters/local-keyring.js';
import { LocalReceiptSigner } from '../../../lambdas/adapters/local-receipt-signer.js';
import { EnvironmentMcpSecrets } from '../../../lambdas/adapters/mcp/environment-mcp-secrets.js';
import { SdkMcpServers } from '../../../lambdas/adapters/mcp/sdk-mcp-servers.js';
import { InMemoryApproverResponseStore } from '../../../lambdas/adapters/memory/in-memory-approver-response-store.js';
import { InMemoryExternalRunStore } from '../../../lambdas/adapters/memory/in-memory-external-run-store.js';
import { InMemoryReceiptChainStore } from '../../../lambdas/adapters/memory/in-memory-receipt-chain-store.js';
import { InMemoryRunRepository } from '../../../lambdas/adapters/memory/in-memory-run-repository.js';
import { createModelProviderResolver } from '../../../lambdas/adapters/models/model-provider-resolver.js';
import { ScriptedModel } from '../../../lambdas/adapters/models/scripted-model.js';
import type { EscalationTimer } from '../../../lambdas/core/approvals/escalation-ladder.js';
import { configurationSchema } from '../../../lambdas/core/configurations.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import { type UserProfile, userProfileSchema } from '../../../lambdas/core/identity.js';
import type { ModelProvider } from '../../../lambdas/core/model.js';
import { type PolicyFloorInput, policyFloorSchema } from '../../../lambdas/core/policy/policy-floor.js';
import type {
  AwaitingApprovalEvent,
  CardClosedEvent,
  Clock,
  EscalationTimers,
  Metrics,
  RunExecutions,
  RunNotifier,
  RunRepository,
} from '../../../lambdas/core/ports.js';
import { silentLogger } from '../../../lambdas/core/ports.js';
import type { RunDependencies } from '../../../lambdas/core/run-dependencies.js';
import { awaitApproval } from '../../../lambdas/core/runs/await-approval.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { startRun } from '../../../lambdas/core/runs/start-run.js';
import { takeModelTurn } from '../../../lambdas/core/runs/take-model-turn.js';
import { createMcpToolStandIn } from '../../../lambdas/core/tools/mcp/mcp-tools.js';
import { type Tool, ToolRegistry } from '../../../lambdas/core/tools/tool.js';
import { createBuiltInTools } from '../../../lambdas/tools/built-in-tools.js';
import { InMemoryConfigurationRepository } from '../../support/in-memory-configuration-repository.js';
import { InMemoryPageStore } from '../../support/in-memory-page-store.js';
import { InMemorySlackUserDirectory } from '../../support/in-memory-slack-user-directory.js';
import { InMemoryUserDirectory } from '../../support/in-memory-user-directory.js';

/**
 * The run use cases wired to in-memory ports, for unit tests that run in milliseconds: the
 * in-memory run repository (held to the DynamoDB contract suite), the envelope sealer over a
 * local key, the built-in tools over an in-memory page store, the scripted model, and
 * recording stand-ins for what leaves the process (Step Functions, EventBridge, metrics).
 */

/** The clock a test moves: decisions, expiry and the redelivery window read it. */
export class MovableClock implements Clock {
  private current: Date;

  public constructor(start: string) {
    this.current = new Date(start);
  }

  public now(): Date {
    return new Date(this.current);
  }

  public advance(milliseconds: number): void {
    this.current = new Date(this.current.getTime() + milliseconds);
  }
}

/**
 * Step Functions as the use cases see it, recording each call. A task token resumes once:
 * using it again is `token-spent`, as SendTaskSuccess answers for a used token.
 */
export class RecordingRunExecutions implements RunExecutions {
  public readonly started: Array<{ runId: string; executionName: string }> = [];
  public readonly resumed: Array<{ taskToken: string; decision: { kind: 'approve' | 'reject' } }> = [];
  public readonly stopped: Array<{ runId: string; because?: string }> = [];
  /** The next `resume` or `start` fails this way, as a throttled or unreachable service would. */
  public failNext: { call: 'resume' | 'start'; error: Error } | undefined;
  private readonly spentTokens = new Set<string>();

  public async start(input: { runId: string; executionName: string }): Promise<void> {
    this.failIfAsked('start');
    this.started.push(input);
  }

  public async resume(
    taskToken: string,
    decision: { kind: 'approve' } | { kind: 'reject'; reason?: string },
  ): Promise<{ kind: 'delivered' } | { kind: 'token-spent' }> {
    this.failIfAsked('resume');
    if (this.spentTokens.has(taskToken)) return { kind: 'token-spent' };
    this.spentTokens.add(taskToken);
    this.resumed.push({ taskToken, decision });
    return { kind: 'delivered' };
  }

  public async stopExecution(input: { runId: string; because?: string }): Promise<void> {
    this.stopped.push(input);
  }

  private failIfAsked(call: 'resume' | 'start'): void {
    const failure = this.failNext;
    if (failure?.call !== call) return;
    this.failNext = undefined;
    throw failure.error;
  }
}

export class RecordingNotifier implements RunNotifier {
  public readonly events: AwaitingApprovalEvent[] = [];
  public readonly closedCards: CardClosedEvent[] = [];

  public async runAwaitingApproval(event: AwaitingApprovalEvent): Promise<void> {
    this.events.push(event);
  }

  public async cardClosed(event: CardClosedEvent): Promise<void> {
    this.closedCards.push(event);
  }
}

/** Escalation timers armed, in order: a test fires one by calling the escalation with it. */
export class RecordingEscalationTimers implements EscalationTimers {
  public readonly armed: EscalationTimer[] = [];

  public async arm(timers: readonly EscalationTimer[]): Promise<void> {
    this.armed.push(...timers);
  }
}

/** Metric counts by name, so a test can see that a refusal was counted. */
export class CountingMetrics implements Metrics {
  public readonly counts = new Map<string, number>();

  public count(name: string, value = 1): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + value);
  }

  public observe(): void {}
}

export const START = '2026-03-01T10:00:00.000Z';
export const APPROVAL_TIMEOUT_SECONDS = 3_600;
/** The one page the scripted model's instructions write to. */
export const PAGE_ID = '12';

/** The run's owner and approvers of the tests: page 12 readable, the page writer allowed. */
export const OWNER = person('olivia', { grants: ['agent_run', 'agent_approve'] });
export const APPROVER = person('alice', { grants: ['agent_approve'] });
export const SECOND_APPROVER = person('bob', { grants: ['agent_approve'] });

export function person(userId: string, overrides: Partial<UserProfile> = {}): UserProfile {
  return userProfileSchema.parse({
    userId,
    pageAccess: [PAGE_ID],
    languageAccess: '*',
    toolAccess: ['update_page_metadata'],
    ...overrides,
  });
}

export interface UseCaseHarness {
  readonly dependencies: RunDependencies;
  readonly runs: RunRepository;
  readonly executions: RecordingRunExecutions;
  readonly notifier: RecordingNotifier;
  readonly escalations: RecordingEscalationTimers;
  readonly metrics: CountingMetrics;
  readonly clock: MovableClock;
}

/** Fresh ports, one configuration `pages` on the scripted model with the page tools. */
export function createHarness(
  options: {
    /** Overrides of the `pages` configuration, as an admin would write them (defaults apply). */
    configuration?: Partial<z.input<typeof configurationSchema>>;
    users?: readonly UserProfile[];
    /** @default - an InMemoryRunRepository */
    runs?: RunRepository;
    /** Registered beside the built-in tools. */
    extraTools?: readonly Tool[];
    /** The deployment's policy floor. @default - none */
    policyFloor?: PolicyFloorInput;
    /**
     * Wires the MCP client as deployed (the official SDK, loopback allowed) with these bearer
     * secrets by variable name, and the API Lambdas' MCP stand-ins. @default - no MCP client
     */
    mcpSecrets?: Readonly<Record<string, string>>;
    /** Answers in place of the scripted model (same provider name). @default - the scripted model */
    model?: ModelProvider;
  } = {},
): UseCaseHarness {
  const clock = new MovableClock(START);
  const runs = options.runs ?? new InMemoryRunRepository();
  const executions = new RecordingRunExecutions();
  const notifier = new RecordingNotifier();
  const escalations = new RecordingEscalationTimers();
  const metrics = new CountingMetrics();
  let nextId = 0;
  const configuration = configurationSchema.parse({
    configurationId: 'pages',
    label: 'Page metadata',
    provider: 'scripted',
    model: 'scripted',
    allowedTools: ['get_page', 'update_page_metadata'],
    ...options.configuration,
  });
  const dependencies: RunDependencies = {
    // As every deployed composition: a card that closes is announced (`Card Closed`).
    runs: announceClosedCards(runs, { notifier, clock, logger: silentLogger, metrics }),
    sealer: new EnvelopeSealer({ keyWrapping: createLocalKeyWrapping(randomBytes(32)) }),
    configurations: new InMemoryConfigurationRepository({ configurations: [configuration] }),
    users: new InMemoryUserDirectory(options.users ?? [OWNER, APPROVER, SECOND_APPROVER]),
    slackUsers: new InMemorySlackUserDirectory(),
    pages: new InMemoryPageStore([{ pageId: PAGE_ID, language: 'en', title: 'Home' }], {
      now: () => clock.now(),
    }),
    tools: new ToolRegistry(
      [...createBuiltInTools(), ...(options.extraTools ?? [])],
      options.mcpSecrets && ((name) => createMcpToolStandIn(name, async () => configuration)),
    ),
    ...(options.mcpSecrets
      ? {
          mcp: new SdkMcpServers({
            secrets: new EnvironmentMcpSecrets(options.mcpSecrets),
            hostPolicy: { allowedHosts: [], allowLoopback: true },
          }),
        }
      : {}),
    models: createModelProviderResolver({ scripted: options.model ?? new ScriptedModel() }),
    externalRuns: new InMemoryExternalRunStore(),
    executions,
    notifier,
    escalations,
    clock,
    logger: silentLogger,
    metrics,
    settings: {
      approvalTimeoutSeconds: APPROVAL_TIMEOUT_SECONDS,
      maxTurns: 12,
      ...(options.policyFloor ? { policyFloor: policyFloorSchema.parse(options.policyFloor) } : {}),
    },
    newId: () => {
      nextId += 1;
      return `run-${nextId}`;
    },
    // Recorded where the API's and the steps' factories record (decide, cancel, expire).
    receipts: {
      chain: new InMemoryReceiptChainStore(),
      signer: LocalReceiptSigner.withKey(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey),
      responses: new InMemoryApproverResponseStore(),
    },
  };
  return { dependencies, runs, executions, notifier, escalations, metrics, clock };
}

/** What a paused run hands its approvers: its id, the turn and the token the wait holds. */
export interface PausedRun {
  readonly runId: string;
  readonly turn: number;
  readonly taskToken: string;
}

/**
 * A run started by `owner` whose first model turn proposes a page write, paused for approval:
 * the steps the state machine runs (start, model turn, AwaitApproval), through their use cases.
 */
export async function startPausedRun(
  harness: UseCaseHarness,
  owner: UserProfile = OWNER,
  instruction = `Set the title of page ${PAGE_ID} to 'Spring sale'`,
): Promise<PausedRun> {
  const { runId } = await startRun(
    harness.dependencies,
    owner,
    { configurationId: 'pages', input: instruction },
    'user-record',
  );
  const { turn, route } = await takeModelTurn(harness.dependencies, { runId, turn: 0 });
  if (route !== 'approval') throw new Error(`the scripted turn routed to ${route}, not to an approval`);
  const taskToken = `task-token-${runId}-${turn}`;
  await awaitApproval(harness.dependencies, { runId, turn, taskToken });
  return { runId, turn, taskToken };
}

/** The digest the inbox shows `viewer` for the run: what an approver sends back with a decision. */
export async function digestShownTo(
  harness: UseCaseHarness,
  viewer: UserProfile,
  runId: string,
): Promise<string> {
  const { cards } = await listInbox(harness.dependencies, viewer, { limit: 100 });
  const card = cards.find((entry) => entry.runId === runId);
  if (card === undefined || !('digest' in card))
    throw new Error(`the inbox shows ${viewer.userId} no card of ${runId}`);
  return card.digest;
}

/** The error a use case refused with, to assert its code (and field) as the edge maps them. */
export async function refusalOf(promise: Promise<unknown>): Promise<CountersignError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof CountersignError))
    throw new Error(`expected a CountersignError, got ${String(error)}`);
  return error;
}
