import type { UserProfile } from '../identity.js';
import type { TurnPolicy } from '../policy/policy-floor.js';
import type { RunDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';
import { type CallChoice, contentOfChoices, kindOfChoices } from './call-choices.js';
import { type ApproverCheckDependencies, findLapsedApprovers } from './confirm-approvals.js';
import { APPROVAL_RECORD_SCHEMA_VERSION, type DecisionChannel } from './decision-record.js';
import type { ResolvedCall } from './resolve-calls.js';
import type { DelegatedApproval, StoredCard } from './stored-card.js';

/** How far a k-of-n turn is: who has approved the same calls, out of how many needed. */
export interface ApprovalTally {
  count: number;
  required: number;
  approvedBy: string[];
  /** Of `approvedBy`, those who approved as someone's delegate, and for whom. */
  delegatedApprovals?: DelegatedApproval[];
  /**
   * Approvers whose approval made other per-call choices (approved other calls): they do not count
   * toward this one; two approvers agree only when they made the same choices.
   */
  differingApprovers?: string[];
  /** Approvers whose approval stopped counting: they no longer held the authority it needed. */
  lapsedApprovers?: string[];
}

/** What a card's tally holds: who approved, for whom, which calls, and whose approval lapsed. */
export type TallyRecords = Pick<
  StoredCard,
  'approvedBy' | 'delegatedApprovals' | 'approvalContents' | 'lapsedApprovers'
>;

/**
 * The approvals that count toward a turn's decision with `content` (the key of per-call choices;
 * absent: every call approved): the approvers who made the same choices. Under four-eyes neither
 * the owner nor a delegate acting for the owner counts, even if an approval predates the floor. An
 * approver who lapsed and approved again counts again.
 *
 * @example
 * countApprovals({ approvedBy: ['editor', 'ana'] }, { fourEyes: true, requiredApprovals: 2 }, 'editor')
 * // { count: 1, required: 2, approvedBy: ['ana'] }
 */
export function countApprovals(
  records: TallyRecords,
  policy: Pick<TurnPolicy, 'fourEyes' | 'requiredApprovals'>,
  owner: string,
  content?: string,
): ApprovalTally {
  const approvedBy = records.approvedBy ?? [];
  const actingFor = new Map(
    (records.delegatedApprovals ?? []).map((entry) => [entry.approver, entry.actingFor]),
  );
  const contentOf = new Map((records.approvalContents ?? []).map((entry) => [entry.approver, entry.content]));
  const qualifying = approvedBy.filter(
    (userId) => !(policy.fourEyes && (userId === owner || actingFor.get(userId) === owner)),
  );
  const counted = qualifying.filter((userId) => contentOf.get(userId) === content);
  const differing = qualifying.filter((userId) => contentOf.get(userId) !== content);
  const delegated = (records.delegatedApprovals ?? []).filter((entry) => counted.includes(entry.approver));
  const lapsed = (records.lapsedApprovers ?? []).filter((userId) => !approvedBy.includes(userId));
  return {
    count: counted.length,
    required: policy.requiredApprovals,
    approvedBy: counted,
    ...(delegated.length > 0 ? { delegatedApprovals: delegated } : {}),
    ...(differing.length > 0 ? { differingApprovers: differing } : {}),
    ...(lapsed.length > 0 ? { lapsedApprovers: lapsed } : {}),
  };
}

export type TallyOutcome =
  | { kind: 'card-moved' }
  /** This approver's approval is on record with other per-call choices: it stands (a 409). */
  | { kind: 'own-approval-differs' }
  /** The turn needs more approvals that qualify: answered 202 with the tally and `message`. */
  | { kind: 'waiting'; approvals: ApprovalTally; message: string }
  /** K approvals of the same calls qualify now: `approvedBy` (and whom delegates among them acted for) go on record. */
  | { kind: 'complete'; approvedBy: string[]; delegatedApprovals: DelegatedApproval[] };

type TallyDependencies = Pick<RunDependencies, 'runs' | 'metrics' | 'logger'> & ApproverCheckDependencies;

/**
 * k-of-n: claims this approver's approval (a conditional write, audited) and reads the tally.
 * Approvals count together only when they made the same per-call choices (`choices`; none: every
 * call approved). When the tally reaches K, every approval counted is re-checked against its
 * approver's CURRENT record ({@link findLapsedApprovers}); those that no longer qualify lapse (the
 * card's tally says whose) and the turn waits. Whoever sees K approvals qualify goes on to claim
 * the decision, which only one request wins, so the task token is delivered once however many
 * approvals race.
 *
 * @example
 * const tally = await tallyApproval(dependencies, { principal, card, policy, now, approvalCalls, channel: 'api' });
 * if (tally.kind === 'complete') // claim the decision with tally.approvedBy
 */
export async function tallyApproval(
  dependencies: TallyDependencies,
  input: {
    principal: UserProfile;
    /** The approver who is away, when `principal` approves as their delegate. */
    actingFor?: string;
    /** Per-call decisions: what this approval does with each call. @default every call approved */
    choices?: readonly CallChoice[];
    card: StoredCard;
    policy: TurnPolicy;
    now: Date;
    /** The unsealed card's calls, resolved once (the `record` gate's re-checks read them). */
    approvalCalls: () => Promise<readonly ResolvedCall[]>;
    /** Where the approver approved, recorded with the approval. */
    channel: DecisionChannel;
  },
): Promise<TallyOutcome> {
  const { principal, card, policy } = input;
  const partial = input.choices !== undefined && kindOfChoices(input.choices) !== 'approve';
  const content = partial && input.choices ? contentOfChoices(input.choices) : undefined;
  const outcome = await dependencies.runs.recordApproval({
    schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
    runId: card.runId,
    turn: card.turn,
    digest: card.digest,
    approvedBy: principal.userId,
    approvedAt: input.now.toISOString(),
    channel: input.channel,
    ...(input.actingFor === undefined ? {} : { actingFor: input.actingFor }),
    ...(content === undefined || !input.choices ? {} : { choices: [...input.choices], content }),
  });
  if (outcome.kind === 'card-moved') return outcome;
  const recorded = (outcome.approvalContents ?? []).find((entry) => entry.approver === principal.userId);
  if (recorded?.content !== content) return { kind: 'own-approval-differs' };
  const records = { ...outcome, lapsedApprovers: card.lapsedApprovers };
  const approvals = countApprovals(records, policy, card.owner, content);
  dependencies.metrics.count('Approvals');
  dependencies.logger.info('approval recorded', {
    runId: card.runId,
    turn: card.turn,
    approvals: approvals.count,
    requiredApprovals: approvals.required,
  });
  if (approvals.count < approvals.required) return waiting(approvals);
  const delegatedApprovals = approvals.delegatedApprovals ?? [];
  const approvedIndexes =
    content === undefined
      ? undefined
      : new Set((input.choices ?? []).filter((choice) => choice.decision === 'approve').map((c) => c.index));
  const lapsed = await findLapsedApprovers(dependencies, {
    current: principal,
    approvedBy: approvals.approvedBy,
    delegatedApprovals,
    card,
    policy,
    now: input.now,
    approvalCalls: input.approvalCalls,
    ...(approvedIndexes ? { approvedIndexes } : {}),
  });
  if (lapsed.length === 0) return { kind: 'complete', approvedBy: approvals.approvedBy, delegatedApprovals };

  const lapse = await dependencies.runs.lapseApprovals({
    runId: card.runId,
    turn: card.turn,
    digest: card.digest,
    approvers: lapsed,
    delegatedApprovals,
    approvalContents: outcome.approvalContents,
  });
  if (lapse.kind === 'card-moved') return lapse;
  dependencies.logger.info('approvals lapsed', { runId: card.runId, turn: card.turn, lapsed: lapsed.length });
  // Only approvals re-checked here count: one that arrived meanwhile completes on its own request.
  const confirmed = countApprovals(
    {
      ...records,
      approvedBy: approvals.approvedBy.filter((userId) => !lapsed.includes(userId)),
      lapsedApprovers: lapse.lapsedApprovers,
    },
    policy,
    card.owner,
    content,
  );
  if (confirmed.count >= confirmed.required) {
    return {
      kind: 'complete',
      approvedBy: confirmed.approvedBy,
      delegatedApprovals: confirmed.delegatedApprovals ?? [],
    };
  }
  return {
    kind: 'waiting',
    approvals: confirmed,
    message: TEXTS.approvalsLapsed(confirmed.count, confirmed.required, lapsed),
  };
}

function waiting(approvals: ApprovalTally): TallyOutcome {
  return { kind: 'waiting', approvals, message: TEXTS.approvalRecorded(approvals.count, approvals.required) };
}
