import {
  type ApprovalRecord,
  approvalRecordSchema,
  type DecisionClaim,
  type DecisionRecord,
  decisionRecordSchema,
} from '../../core/approvals/decision-record.js';
import type { InboxOrder } from '../../core/approvals/inbox-filter.js';
import {
  type CardClosing,
  isCardUndecided,
  STORED_CARD_SCHEMA_VERSION,
  type StoredCard,
  storedCardSchema,
} from '../../core/approvals/stored-card.js';
import { CountersignError } from '../../core/errors.js';
import type {
  ApprovalLapse,
  ApprovalOutcome,
  AuditTrail,
  CardCloseOutcome,
  ClaimOutcome,
  ConditionalOutcome,
  EscalationChange,
  EscalationOutcome,
  LapseOutcome,
  PageRequest,
  RecordedAct,
  RunRepository,
  RunSummary,
  StoredRun,
  WaitingCardsPage,
} from '../../core/ports.js';
import { type RunRecord, runRecordSchema } from '../../core/run-record.js';
import {
  type CallRecord,
  type CallRecordExpectation,
  callRecordSchema,
} from '../../core/runs/call-record.js';
import type { BlobStore } from '../blob-store.js';
import { encodeInboxCursor, inboxSortKey, undeliveredSortKey } from '../dynamo/inbox-index.js';
import { parseItem, withoutUndefined } from '../dynamo/item-codec.js';
import { assertTurn, runFromKey } from '../dynamo/run-item-keys.js';
import {
  parseRunUpdate,
  type RunChanges,
  type RunUpdateOptions,
  type WaitingCardsRequest,
} from '../dynamo/run-item-schemas.js';
import {
  SealedStateOverflow,
  type StoredSealedState,
  sealedStateAttributes,
} from '../dynamo/sealed-state-overflow.js';
import { pageActsOf, pageRunsOwnedBy } from './in-memory-history.js';
import { pageWaitingCards } from './in-memory-inbox.js';

export interface InMemoryRunRepositoryProps {
  /**
   * Where sealed state over 300,000 bytes goes, as on DynamoDB.
   * @default - none: such a state is refused with a `configuration` error, as on DynamoDB
   */
  readonly blobStore?: BlobStore;
}

interface RunEntry {
  readonly record: RunRecord;
  readonly state: StoredSealedState;
}

/**
 * `RunRepository` in memory, for use-case unit tests that run in milliseconds. It is held to
 * the same contract suite as `DynamoRunRepository` (test/adapters/repository-contract-*.test.ts)
 * and shares its schemas, cursor format, inbox routing and sealed-state limit, so a use case
 * sees what it would see on DynamoDB:
 *
 * - every write that DynamoDB makes conditional is a check-and-set with no `await` between the
 *   check and the set, so it is atomic against concurrent calls: the first run id, decision
 *   claim and approval wins, a run update applies only while the run is in an expected status,
 *   and an approval counts only while the card waits at its turn and digest;
 * - what goes in and comes out is a copy, as an item in a table is.
 *
 * It lives with the adapters, not in lambdas/local/: it implements a core port as the DynamoDB
 * adapter does, while the embedded runtime keeps dynalite so `npm start` runs the deployed one.
 *
 * @example
 * const runs = new InMemoryRunRepository();
 * await runs.createRun(record, sealedState);
 * const claim = await runs.claimDecision(decision);
 */
export class InMemoryRunRepository implements RunRepository {
  private readonly overflow: SealedStateOverflow;
  private readonly runs = new Map<string, RunEntry>();
  private readonly cards = new Map<string, StoredCard>();
  private readonly decisions = new Map<string, DecisionRecord>();
  private readonly approvals = new Map<string, ApprovalRecord>();
  /** Keys of claimed approvals and rejections not yet marked delivered. */
  private readonly undelivered = new Set<string>();
  private readonly calls = new Map<string, CallRecord>();

  public constructor(props: InMemoryRunRepositoryProps = {}) {
    this.overflow = new SealedStateOverflow(props.blobStore);
  }

  public async createRun(record: RunRecord, sealedState: Uint8Array): Promise<void> {
    const parsed = withoutUndefined(runRecordSchema.parse(record));
    const state = await this.overflow.store(parsed.runId, sealedState);
    if (this.runs.has(parsed.runId)) {
      throw new CountersignError('conflict', 'A run with this id already exists.');
    }
    this.runs.set(parsed.runId, copyOf({ record: parsed, state }));
  }

  public async getRun(runId: string): Promise<StoredRun | undefined> {
    const entry = this.runs.get(runId);
    if (entry === undefined) return undefined;
    const sealedState = await this.overflow.load(runId, sealedStateAttributes(entry.state));
    return { record: this.recordOf(runId, entry), sealedState: copyOf(sealedState) };
  }

  public async getRunRecord(runId: string): Promise<RunRecord | undefined> {
    const entry = this.runs.get(runId);
    return entry === undefined ? undefined : this.recordOf(runId, entry);
  }

  public async updateRun(
    runId: string,
    changes: RunChanges,
    options: RunUpdateOptions = {},
  ): Promise<ConditionalOutcome> {
    const update = parseRunUpdate(changes, options);
    if (update === undefined) return { kind: 'condition-failed' };
    // As on DynamoDB, an overflowing state is in the blob store before the conditional write.
    const state =
      options.sealedState === undefined ? undefined : await this.overflow.store(runId, options.sealedState);
    const entry = this.runs.get(runId);
    if (entry === undefined) return { kind: 'condition-failed' };
    if (options.expectStatus && !options.expectStatus.includes(entry.record.status)) {
      return { kind: 'condition-failed' };
    }
    const record: Record<string, unknown> = { ...entry.record, ...copyOf(update.changes) };
    for (const field of update.removeFields) delete record[field];
    this.runs.set(runId, { record: record as RunRecord, state: state ?? entry.state });
    return { kind: 'written' };
  }

  public async putCard(
    card: StoredCard,
    options: { unlessClosedAtItsTurn?: boolean } = {},
  ): Promise<ConditionalOutcome> {
    const { approvedBy, lapsedApprovers, delegatedApprovals, approvalContents, ...parsed } =
      storedCardSchema.parse(card);
    const existing = this.cards.get(parsed.runId);
    if (options.unlessClosedAtItsTurn && existing?.turn === parsed.turn && !isCardUndecided(existing)) {
      return { kind: 'condition-failed' };
    }
    // DynamoDB keeps no empty set: nobody has approved (or lapsed) means no attribute.
    this.cards.set(
      parsed.runId,
      copyOf({
        ...parsed,
        ...(approvedBy && approvedBy.length > 0 ? { approvedBy } : {}),
        ...(lapsedApprovers && lapsedApprovers.length > 0 ? { lapsedApprovers } : {}),
        ...(delegatedApprovals && delegatedApprovals.length > 0 ? { delegatedApprovals } : {}),
        ...(approvalContents && approvalContents.length > 0 ? { approvalContents } : {}),
      }),
    );
    return { kind: 'written' };
  }

  public async renewCardToken(
    runId: string,
    change: { turn: number; digest: string; sealedToken: Uint8Array; waitId: string },
  ): Promise<ConditionalOutcome> {
    const card = this.cards.get(runId);
    if (!card || !isCardUndecided(card) || card.turn !== change.turn || card.digest !== change.digest) {
      return { kind: 'condition-failed' };
    }
    this.cards.set(runId, {
      ...card,
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      sealedToken: copyOf(change.sealedToken),
      waitId: change.waitId,
    });
    return { kind: 'written' };
  }

  public async markCardNotified(runId: string, turn: number): Promise<void> {
    const card = this.cards.get(runId);
    if (card?.turn === turn) this.cards.set(runId, { ...card, notification: 'sent' });
  }

  public async getCard(runId: string): Promise<StoredCard | undefined> {
    const card = this.cards.get(runId);
    return card === undefined ? undefined : copyOf(card);
  }

  public async listWaitingCards(options: WaitingCardsRequest): Promise<WaitingCardsPage> {
    const page = pageWaitingCards(this.cards.values(), options);
    return { ...page, cards: page.cards.map(copyOf) };
  }

  public waitingCardCursor(card: Pick<StoredCard, 'runId' | 'pausedAt'>, order?: InboxOrder): string {
    return encodeInboxCursor(inboxSortKey(card), order);
  }

  public async closeCard(
    runId: string,
    because: CardClosing,
    options: { expectWaitId?: string | null } = {},
  ): Promise<CardCloseOutcome> {
    const card = this.cards.get(runId);
    // No card: nothing is in the inbox, which is what closing wants.
    if (card === undefined) return { kind: 'not-open' };
    if (options.expectWaitId !== undefined && (card.waitId ?? null) !== options.expectWaitId) {
      return { kind: 'condition-failed' };
    }
    this.cards.set(runId, {
      ...card,
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      state: 'closed',
      closedBecause: because,
    });
    return isCardUndecided(card)
      ? { kind: 'closed', turn: card.turn, approverGroups: [...(card.approverGroups ?? [])] }
      : { kind: 'not-open' };
  }

  public async claimDecision(record: DecisionClaim): Promise<ClaimOutcome> {
    const parsed = withoutUndefined(decisionRecordSchema.parse(record));
    assertTurn(parsed.turn);
    const key = decisionKey(parsed.runId, parsed.turn);
    const existing = this.decisions.get(key);
    if (existing !== undefined) return { kind: 'already-decided', existing: copyOf(existing) };
    this.decisions.set(key, copyOf(parsed));
    // A cancel is carried out by its own request: nothing waits for its delivery.
    if (parsed.decision !== 'cancel') this.undelivered.add(key);
    return { kind: 'claimed' };
  }

  public async markDecisionDelivered(runId: string, turn: number): Promise<void> {
    assertTurn(turn);
    this.undelivered.delete(decisionKey(runId, turn));
  }

  public async listUndeliveredDecisions(options: {
    decidedBefore: string;
    limit: number;
  }): Promise<DecisionRecord[]> {
    return [...this.undelivered]
      .flatMap((key) => {
        const decision = this.decisions.get(key);
        return decision === undefined ? [] : [decision];
      })
      .filter((decision) => undeliveredSortKey(decision) < options.decidedBefore)
      .sort((left, right) => undeliveredSortKey(left).localeCompare(undeliveredSortKey(right)))
      .slice(0, options.limit)
      .map(copyOf);
  }

  public async listCallRecords(runId: string, turn: number): Promise<CallRecord[]> {
    assertTurn(turn);
    return [...this.calls.values()]
      .filter((record) => record.runId === runId && record.turn === turn)
      .sort((left, right) => left.index - right.index)
      .map(copyOf);
  }

  public async putCallRecord(
    record: CallRecord,
    expected: CallRecordExpectation,
  ): Promise<ConditionalOutcome> {
    const parsed = withoutUndefined(callRecordSchema.parse(record));
    assertTurn(parsed.turn);
    const key = `${parsed.runId}#${parsed.turn}#${parsed.index}`;
    const stored = this.calls.get(key);
    const holds =
      expected.kind === 'absent'
        ? stored === undefined
        : stored?.attemptId === expected.attemptId && stored.state === expected.state;
    if (!holds) return { kind: 'condition-failed' };
    this.calls.set(key, copyOf(parsed));
    return { kind: 'written' };
  }

  public async getDecision(runId: string, turn: number): Promise<DecisionRecord | undefined> {
    assertTurn(turn);
    const decision = this.decisions.get(decisionKey(runId, turn));
    return decision === undefined ? undefined : copyOf(decision);
  }

  public async recordApproval(approval: ApprovalRecord): Promise<ApprovalOutcome> {
    const parsed = approvalRecordSchema.parse(approval);
    assertTurn(parsed.turn);
    // The audit record first, as on DynamoDB: the first approval of an approver stands.
    const approvalKey = `${decisionKey(parsed.runId, parsed.turn)}#${parsed.approvedBy}`;
    if (!this.approvals.has(approvalKey)) this.approvals.set(approvalKey, copyOf(parsed));
    // The tally is a set, so the same approver approving again changes nothing.
    const card = this.cards.get(parsed.runId);
    if (!cardWaitsAt(card, parsed)) return { kind: 'card-moved' };
    const counted = (card.approvedBy ?? []).includes(parsed.approvedBy);
    const approvedBy = [...new Set([...(card.approvedBy ?? []), parsed.approvedBy])].sort();
    // Acting for someone, or approving some calls only, is recorded only for a person not
    // counted yet: the first approval stands.
    const byApprover = <Entry extends { approver: string }>(entries: Entry[]) =>
      entries.sort((left, right) => (left.approver < right.approver ? -1 : 1));
    const delegatedApprovals =
      parsed.actingFor === undefined || counted
        ? (card.delegatedApprovals ?? [])
        : byApprover([
            ...(card.delegatedApprovals ?? []),
            { approver: parsed.approvedBy, actingFor: parsed.actingFor },
          ]);
    const approvalContents =
      parsed.content === undefined || counted
        ? (card.approvalContents ?? [])
        : byApprover([
            ...(card.approvalContents ?? []),
            { approver: parsed.approvedBy, content: parsed.content },
          ]);
    this.cards.set(parsed.runId, {
      ...card,
      approvedBy,
      ...(delegatedApprovals.length > 0 ? { delegatedApprovals } : {}),
      ...(approvalContents.length > 0 ? { approvalContents } : {}),
    });
    return {
      kind: 'recorded',
      approvedBy: [...approvedBy],
      delegatedApprovals: copyOf(delegatedApprovals),
      approvalContents: copyOf(approvalContents),
    };
  }

  public async readAuditTrail(runId: string): Promise<AuditTrail> {
    const card = this.cards.get(runId);
    return {
      ...(card === undefined ? {} : { card: copyOf(card) }),
      decisions: [...this.decisions.values()].filter((decision) => decision.runId === runId).map(copyOf),
      approvals: [...this.approvals.values()].filter((approval) => approval.runId === runId).map(copyOf),
    };
  }

  public async listActsOf(
    userId: string,
    page: PageRequest,
  ): Promise<{ items: RecordedAct[]; cursor?: string }> {
    const records = { decisions: this.decisions.values(), approvals: this.approvals.values() };
    return pageActsOf(records, (runId) => this.runs.get(runId)?.record, userId, page);
  }

  public async listRunsOwnedBy(
    owner: string,
    page: PageRequest,
  ): Promise<{ items: RunSummary[]; cursor?: string }> {
    return pageRunsOwnedBy(
      [...this.runs.values()].map(({ record }) => record),
      owner,
      page,
    );
  }

  public async lapseApprovals(lapse: ApprovalLapse): Promise<LapseOutcome> {
    assertTurn(lapse.turn);
    const card = this.cards.get(lapse.runId);
    if (!cardWaitsAt(card, lapse)) return { kind: 'card-moved' };
    const approvedBy = (card.approvedBy ?? []).filter((userId) => !lapse.approvers.includes(userId));
    const lapsedApprovers = [...new Set([...(card.lapsedApprovers ?? []), ...lapse.approvers])].sort();
    const delegatedApprovals = (card.delegatedApprovals ?? []).filter(
      (entry) => !lapse.approvers.includes(entry.approver),
    );
    const approvalContents = (card.approvalContents ?? []).filter(
      (entry) => !lapse.approvers.includes(entry.approver),
    );
    const {
      approvedBy: _before,
      delegatedApprovals: _delegatedBefore,
      approvalContents: _contentsBefore,
      ...rest
    } = card;
    this.cards.set(lapse.runId, {
      ...rest,
      ...(approvedBy.length > 0 ? { approvedBy } : {}),
      ...(delegatedApprovals.length > 0 ? { delegatedApprovals } : {}),
      ...(approvalContents.length > 0 ? { approvalContents } : {}),
      lapsedApprovers,
    });
    return { kind: 'lapsed', approvedBy: [...approvedBy], lapsedApprovers: [...lapsedApprovers] };
  }

  public async escalateCard(change: EscalationChange): Promise<EscalationOutcome> {
    const card = this.cards.get(change.runId);
    const escalation = card?.escalation;
    if (!cardWaitsAt(card, change) || !escalation || escalation.reached > change.step) {
      return { kind: 'card-moved' };
    }
    if (escalation.steps[change.step] === undefined) return { kind: 'card-moved' };
    const escalated: StoredCard = { ...card, escalation: { ...escalation, reached: change.step + 1 } };
    this.cards.set(change.runId, escalated);
    return { kind: 'escalated', card: copyOf(escalated) };
  }

  public async markEscalationNotified(change: EscalationChange): Promise<void> {
    const card = this.cards.get(change.runId);
    const escalation = card?.escalation;
    if (!card || !escalation || card.turn !== change.turn || card.digest !== change.digest) return;
    if (escalation.notified > change.step) return;
    this.cards.set(change.runId, { ...card, escalation: { ...escalation, notified: change.step + 1 } });
  }

  /** The record as DynamoDB reads it back: parsed, and its run id from the key. */
  private recordOf(runId: string, entry: RunEntry): RunRecord {
    return runFromKey(runId, parseItem(runRecordSchema, copyOf(entry.record), 'run'));
  }
}

/** Whether the card is open at this turn and digest: what a k-of-n tally's conditional write checks. */
function cardWaitsAt(card: StoredCard | undefined, at: { turn: number; digest: string }): card is StoredCard {
  return card !== undefined && isCardUndecided(card) && card.turn === at.turn && card.digest === at.digest;
}

function decisionKey(runId: string, turn: number): string {
  return `${runId}#${turn}`;
}

/** Stored values are copies, so a caller changing what it passed or got changes nothing here. */
function copyOf<Value>(value: Value): Value {
  return structuredClone(value);
}
