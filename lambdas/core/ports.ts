import type { InboxRouting } from './approvals/card-routing.js';
import type { ApprovalRecord, DecisionClaim, DecisionRecord } from './approvals/decision-record.js';
import type { EscalationTimer } from './approvals/escalation-ladder.js';
import type { InboxFilter, InboxOrder } from './approvals/inbox-filter.js';
import type { ApprovalContent, CardClosing, DelegatedApproval, StoredCard } from './approvals/stored-card.js';
import type { Away, UserProfile } from './identity.js';
import type { MetricName, MetricUnit } from './metric-names.js';
import type { RunRecord, RunStatus, RunSummary } from './run-record.js';
import type { CallRecord, CallRecordExpectation } from './runs/call-record.js';

/** What sealed bytes protect; it is part of the encryption context and checked on unseal. */
export type SealPurpose = 'run-state' | 'approval-card' | 'task-token' | 'call-result';

/**
 * Port: envelope encryption of run state. The encryption context names the run and the
 * purpose; `unseal` refuses bytes sealed for another run or purpose, or tampered with, by
 * throwing `CountersignError('sealed-state-rejected')`.
 */
export interface StateSealer {
  seal(purpose: SealPurpose, runId: string, plaintext: Uint8Array): Promise<Uint8Array>;
  unseal(purpose: SealPurpose, runId: string, sealed: Uint8Array): Promise<Uint8Array>;
}

export interface StoredRun {
  record: RunRecord;
  sealedState: Uint8Array;
}

/** One page of the inbox index. */
export interface WaitingCardsPage {
  cards: StoredCard[];
  /** Runs whose card item could not be read at all: each is isolated, never the page's failure. */
  unreadableRunIds?: string[];
  cursor?: string;
}

export type ConditionalOutcome = { kind: 'written' } | { kind: 'condition-failed' };

/**
 * What closing a card did: `closed` when it was open until now (its turn and routing, for the
 * `Card Closed` event); `not-open` when there was no card or it had closed already (either way
 * nothing of it waits); `condition-failed` when the card holds another wait's token
 * (`expectWaitId`), which is not this caller's to close. Only one closing of a card sees it open.
 */
export type CardCloseOutcome =
  | { kind: 'closed'; turn: number; approverGroups: string[] }
  | { kind: 'not-open' }
  | { kind: 'condition-failed' };

export type ClaimOutcome = { kind: 'claimed' } | { kind: 'already-decided'; existing: DecisionRecord };

/**
 * `recorded`: the approval is on record (now or from an earlier request) and `approvedBy` is
 * everyone who has approved the turn, sorted. `card-moved`: the card no longer waits at that
 * turn and digest, so the approval counts for nothing.
 */
export type ApprovalOutcome =
  | {
      kind: 'recorded';
      approvedBy: string[];
      /** Of `approvedBy`, those who approved as someone's delegate (a person counts once). */
      delegatedApprovals: DelegatedApproval[];
      /** Of `approvedBy`, those who approved some calls only, and what (per-call decisions). */
      approvalContents: ApprovalContent[];
    }
  | { kind: 'card-moved' };

/** What is on record about a run's decisions: its card (the last turn's), every approval and decision. */
export interface AuditTrail {
  card?: StoredCard;
  decisions: DecisionRecord[];
  approvals: ApprovalRecord[];
}

/** One thing a person did to a run's turn: decided it (approve, reject, cancel) or approved it (k-of-n). */
export interface RecordedAct {
  kind: 'decision' | 'approval';
  runId: string;
  turn: number;
  at: string;
  digest: string;
  /** The decision, for `kind: 'decision'`. */
  decision?: DecisionRecord['decision'];
  /** The run as it is now; absent once its record is gone (retention). */
  run?: { label: string; status: RunStatus };
}

export type { RunSummary } from './run-record.js';

/**
 * `lapsed`: the approvals are out of the card's tally; `approvedBy` is who still counts and
 * `lapsedApprovers` everyone whose approval lapsed on this card, each sorted.
 */
/** k-of-n: approvals of a waiting turn that no longer qualify (the card at that turn and digest). */
export interface ApprovalLapse {
  runId: string;
  turn: number;
  digest: string;
  approvers: readonly string[];
  /** The lapsed approvers' delegated entries as the tally read them: they go with them. */
  delegatedApprovals?: readonly DelegatedApproval[];
  /** The lapsed approvers' content entries as the tally read them: they go with them too. */
  approvalContents?: readonly ApprovalContent[];
}

export type LapseOutcome =
  | { kind: 'lapsed'; approvedBy: string[]; lapsedApprovers: string[] }
  | { kind: 'card-moved' };

/**
 * Port: runs, their sealed state, approval cards and decisions. DynamoDB deployed and
 * dynalite locally, behind the same adapter. Large sealed state is the adapter's business
 * (it overflows to S3); the core never sees the 400 KB item limit.
 */
export interface RunRepository {
  createRun(record: RunRecord, sealedState: Uint8Array): Promise<void>;
  getRun(runId: string): Promise<StoredRun | undefined>;
  /** The plaintext record only: no sealed state is fetched (no S3 read for an overflowed one). */
  getRunRecord(runId: string): Promise<RunRecord | undefined>;
  /**
   * Writes the record changes (and the sealed state when given) if the run is still in one
   * of `expectStatus`.
   */
  updateRun(
    runId: string,
    changes: Partial<Omit<RunRecord, 'runId'>>,
    options?: {
      sealedState?: Uint8Array;
      expectStatus?: readonly RunStatus[];
      removeFields?: ReadonlyArray<keyof RunRecord>;
    },
  ): Promise<ConditionalOutcome>;
  /**
   * Writes the run's card. With `unlessClosedAtItsTurn`, only over no card, a card of another
   * turn or an open one: a card closed at this turn (decided, or its run ended) is never
   * reopened, and the outcome says so.
   */
  putCard(card: StoredCard, options?: { unlessClosedAtItsTurn?: boolean }): Promise<ConditionalOutcome>;
  /**
   * A retried pause's new task token: sealed into the card only while it is still open at
   * `turn` and `digest` (no decision delivered, nothing reopened), with the id of the wait.
   */
  renewCardToken(
    runId: string,
    change: { turn: number; digest: string; sealedToken: Uint8Array; waitId: string },
  ): Promise<ConditionalOutcome>;
  /** The card's `Run Awaiting Approval` event went out (its outbox), if the card is still at `turn`. */
  markCardNotified(runId: string, turn: number): Promise<void>;
  getCard(runId: string): Promise<StoredCard | undefined>;
  /**
   * Waiting cards, newest first (or `deadline`: oldest first), with an opaque cursor: those
   * `routing` reaches (default: every card). Per page, one query per index partition it reads and
   * one batch read of the cards, whatever the number of waiting cards. A `filter` is applied as
   * the index is read and checked again on the cards; a page that reached its bound of reads may
   * hold fewer cards than `limit` (even none) and still a cursor.
   */
  listWaitingCards(options: {
    limit: number;
    cursor?: string;
    routing?: InboxRouting;
    order?: InboxOrder;
    filter?: InboxFilter;
  }): Promise<WaitingCardsPage>;
  /**
   * The cursor of the inbox page that continues right after `card`, for a page that stops
   * before its query's end (the inbox bounds a page by bytes as well as by count).
   */
  waitingCardCursor(card: Pick<StoredCard, 'runId' | 'pausedAt'>, order?: InboxOrder): string;
  /**
   * Takes the card out of the inbox and records why (the decision was delivered or the run ended).
   * With `expectWaitId`, only while the card still holds that wait's token (`null`: a card from
   * before waits had ids): a delivery that met a spent token does not close a newer wait's card.
   * No card at all is nothing to close: `not-open`.
   */
  closeCard(
    runId: string,
    because: CardClosing,
    options?: { expectWaitId?: string | null },
  ): Promise<CardCloseOutcome>;
  /**
   * Conditional put: the first decision for a (run, turn) wins; later ones read it back. An
   * approval or rejection is undelivered until {@link markDecisionDelivered}: listed by
   * {@link listUndeliveredDecisions}.
   */
  claimDecision(record: DecisionClaim): Promise<ClaimOutcome>;
  getDecision(runId: string, turn: number): Promise<DecisionRecord | undefined>;
  /** Its task token was used (or nothing waits for it any more): the probe leaves it alone. */
  markDecisionDelivered(runId: string, turn: number): Promise<void>;
  /**
   * Approvals and rejections claimed before `decidedBefore` and not marked delivered, oldest
   * first, at most `limit` (one query per inbox shard): what the probe redelivers.
   */
  listUndeliveredDecisions(options: { decidedBefore: string; limit: number }): Promise<DecisionRecord[]>;
  /** The call ledger of one turn, every call an ExecuteTools attempt took (consistent read). */
  listCallRecords(runId: string, turn: number): Promise<CallRecord[]>;
  /** Writes one call record if the stored one is as `expected`: the ledger's only write. */
  putCallRecord(record: CallRecord, expected: CallRecordExpectation): Promise<ConditionalOutcome>;
  /**
   * k-of-n: claims one approver's approval of a waiting turn (a repeat is a no-op) and adds
   * the approver to the card's tally, atomically and only while the card waits at the
   * approval's turn and digest. An approval acting for someone (`actingFor`), or of some calls
   * only (`content`), is added with that, unless its approver is already counted: a person
   * counts once, and their first approval stands. It never delivers anything: the decision claim does.
   */
  recordApproval(approval: ApprovalRecord): Promise<ApprovalOutcome>;
  /** The run's card, approvals and decisions, for its audit (all of them: bounded by the run's turns). */
  readAuditTrail(runId: string): Promise<AuditTrail>;
  /** What `userId` decided or approved, newest first, one page (one query of the history index). */
  listActsOf(userId: string, page: PageRequest): Promise<{ items: RecordedAct[]; cursor?: string }>;
  /** The runs `owner` started, newest first, one page. */
  listRunsOwnedBy(owner: string, page: PageRequest): Promise<{ items: RunSummary[]; cursor?: string }>;
  /**
   * k-of-n: takes approvers whose approval no longer qualifies out of the card's tally and adds
   * them to its `lapsedApprovers`, atomically and only while the card waits at that turn and
   * digest. Their approval records stay (the audit); approving again counts them again.
   */
  lapseApprovals(lapse: ApprovalLapse): Promise<LapseOutcome>;
  /**
   * Escalation: routes the card to the groups of `step` (and of any earlier step not yet
   * routed), atomically and only while it waits at that turn and digest and `step` is not yet
   * routed; the inbox index then lists it under those groups too.
   */
  escalateCard(change: EscalationChange): Promise<EscalationOutcome>;
  /** Escalation's outbox: the event of `step` went out (if the card is still at that turn). */
  markEscalationNotified(change: EscalationChange): Promise<void>;
}

/**
 * `escalated`: the card now also reaches the step's groups (`card` as it is after the write).
 * `card-moved`: the card no longer waits at that turn and digest, or the step was already routed.
 */
export type EscalationOutcome = { kind: 'escalated'; card: StoredCard } | { kind: 'card-moved' };

/** One escalation step of a waiting card (the card at that turn and digest). */
export interface EscalationChange {
  runId: string;
  turn: number;
  digest: string;
  step: number;
}

/** Port: users, their grants and their page and language access. */
export interface UserDirectory {
  getUser(userId: string): Promise<UserProfile | undefined>;
  /**
   * Writes a user's record as an admin does: every field but delegation (`away`, `delegatedBy`),
   * which only {@link setAway} and {@link pointDelegate} change and a put leaves as it was.
   */
  putUser(user: UserProfile): Promise<void>;
  /** Delegation: sets (`undefined`: clears) the user's `away`, only while their record exists. */
  setAway(userId: string, away: Away | undefined): Promise<ConditionalOutcome>;
  /**
   * Delegation: adds `delegator` to (or removes them from) the delegate's `delegatedBy` pointers,
   * while the delegate's record exists (no record: nothing changes).
   */
  pointDelegate(delegate: string, delegator: string, change: 'add' | 'remove'): Promise<void>;
  listUsers(): Promise<UserProfile[]>;
  /** One page of users in id order, with an opaque cursor (a forged one is a 400). */
  listUsersPage(options: PageRequest): Promise<{ items: UserProfile[]; cursor?: string }>;
  /** Removes a user record; false when there was none. */
  deleteUser(userId: string): Promise<boolean>;
}

/** A page of an admin list: at most `limit` items after the one `cursor` stands for. */
export interface PageRequest {
  limit: number;
  cursor?: string;
}

/** Port: Step Functions, as the API sees it. */
export interface RunExecutions {
  /** Starts the run's state machine execution; the name makes a retry idempotent. */
  start(input: { runId: string; executionName: string }): Promise<void>;
  /** Resumes a waiting task. Outcome `token-spent` means the token was used or timed out. */
  resume(
    taskToken: string,
    decision: { kind: 'approve' } | { kind: 'reject'; reason?: string },
  ): Promise<{ kind: 'delivered' } | { kind: 'token-spent' }>;
  /**
   * Stops the run's execution (StopExecution). `executionId` is the one Prepare recorded; without
   * it, the run's first execution (named after the run). An execution already ended is no error.
   * `because` names why in the execution's history: a cancel, or a card that cannot be opened
   * (whose task token can therefore never be trusted). @default 'cancelled'
   */
  stopExecution(input: {
    runId: string;
    executionId?: string;
    because?: 'cancelled' | 'sealed-state-rejected';
  }): Promise<void>;
}

/** What the outside world learns of a paused run: names, never arguments or a token. */
export interface AwaitingApprovalEvent {
  runId: string;
  toolNames: string[];
  pausedAt: string;
  /**
   * The groups to notify, so teams reach the right channel: at the pause, those the card is
   * routed to (empty: every approver); on an escalation, the groups the step added.
   */
  approverGroups: string[];
  /** `paused`: the run just paused. `escalated`: its card went unanswered and reached more groups. */
  reason: 'paused' | 'escalated';
}

/**
 * What the outside world learns when a card stops taking decisions (decided, cancelled, expired,
 * failed, or reopened on a fresh card): names and times, never arguments, a decision's reason or
 * a token. A channel keys its message on run and turn and reads the rest itself.
 */
export interface CardClosedEvent {
  runId: string;
  turn: number;
  because: CardClosing;
  closedAt: string;
  /** The groups the card was routed to; empty: every approver. */
  approverGroups: string[];
}

/**
 * What the outside world learns when an external run is answered (docs/external-agents.md): its
 * outcome and each call's decision by position, never arguments, previews or who decided.
 */
export interface ExternalRunAnsweredEvent {
  runId: string;
  /** The machine client that submitted the turn. */
  owner: string;
  configurationId: string;
  /** `decided`: every call has its decision; `expired`: the window closed without one. */
  status: 'decided' | 'expired';
  /** `edited`: an approved call an approver edited, and who (its arguments: GET /external-runs/{id}). */
  calls: Array<{ index: number; tool: string; decision?: 'approved' | 'rejected'; edited?: { by: string } }>;
}

/** Port: tells the outside world a run waits, and when its card closes (EventBridge deployed). No arguments, no token. */
export interface RunNotifier {
  runAwaitingApproval(event: AwaitingApprovalEvent): Promise<void>;
  cardClosed(event: CardClosedEvent): Promise<void>;
  /** An external run was answered or expired. Optional: a notifier of waiting runs only. */
  externalRunAnswered?(event: ExternalRunAnsweredEvent): Promise<void>;
}

/**
 * Port: the one-time timers of card escalations (EventBridge Scheduler deployed, in-process
 * timers locally). Arming a timer that is already armed is no error: a pause that is entered
 * again re-arms. A timer that fires for a card decided meanwhile does nothing (the escalation
 * checks the card), so nothing is ever cancelled.
 */
export interface EscalationTimers {
  arm(timers: readonly EscalationTimer[]): Promise<void>;
}

export interface Clock {
  now(): Date;
}

/**
 * Port: structured logging. Fields are safe by construction: callers never pass tokens,
 * transcript text, preview lines, skill bodies or tool exception messages.
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Port: metrics (CloudWatch embedded metric format deployed). Names are the contract's
 * {@link MetricName}s only, so every metric emitted is one the dashboard shows.
 */
export interface Metrics {
  count(name: MetricName, value?: number, dimensions?: Record<string, string>): void;
  observe(name: MetricName, value: number, unit: MetricUnit, dimensions?: Record<string, string>): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
export const systemClock: Clock = { now: () => new Date() };
