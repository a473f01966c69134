import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { CountersignData, DataAccess, SealingAccess, TableAction } from './data.js';
import type { ChannelHandlerName, HandlerName } from './handler-names.js';

/** What one handler may do with the data layer: exactly what its composition calls. */
export interface HandlerDataPermissions {
  /** Item actions on the table. */
  readonly table: readonly TableAction[];
  /** Query on the inbox index (the waiting cards). */
  readonly inboxIndex?: true;
  /** Query on the history index (what a person decided and started). */
  readonly historyIndex?: true;
  /** Overflow objects: sealed run state over the item limit (never cards: they stay small). */
  readonly overflow?: DataAccess;
  /** The sealing key: handlers that open sealed state, cards or task tokens, and those that seal. */
  readonly sealing?: SealingAccess;
  /** kms:Sign with the receipt key: the deciding function only (docs/receipts.md). */
  readonly receiptSigning?: true;
  /** Item actions on the per-principal quota counters (`QUOTA#...` partitions) only. */
  readonly quotaItems?: readonly TableAction[];
}

const GET = 'dynamodb:GetItem';
const BATCH_GET = 'dynamodb:BatchGetItem';
const QUERY = 'dynamodb:Query';
const PUT = 'dynamodb:PutItem';
const UPDATE = 'dynamodb:UpdateItem';
const DELETE = 'dynamodb:DeleteItem';

/**
 * The least-privilege matrix, derived from what each handler's composition calls
 * (lambdas/handlers/<name>.ts and the use cases it composes):
 * - Page reads (Get, BatchGet, Query) come with tool previews and preview read gates
 *   (await-approval, api-runs, api-inbox, api-run-events) and with tools (execute-tools, whose
 *   tools may also write pages).
 * - Only api-admin deletes (configurations and tasks); nobody scans or batch-writes. The quota
 *   counters (`QUOTA#...` partitions) are the one exception, granted apart with a condition on
 *   the partition key: api-runs, api-generate and api-run-events count there and nowhere else.
 * - The end states (finish-run, mark-failed, mark-expired) only update the run and its card.
 * - Overflow is read where sealed run state is loaded and written where it is saved (api-runs
 *   creates a run whose first state may exceed the item limit); cards never overflow.
 * - The sealing key: `seal` where state, cards or task tokens are sealed, `unseal` where they are
 *   only opened (the probe opens the task token of a decision it redelivers); admin, prepare and
 *   the end states never touch sealed data.
 * - Receipt chains (docs/receipts.md): read with a Query of the run's partition and appended with
 *   a conditional put, where approvals, decisions (api-decision), cancels (api-runs; Prepare,
 *   which finishes a cancel whose request failed half-way) and expiries (mark-expired, which
 *   reads the run's turn, and api-decision) are recorded. Only api-decision signs. The probe
 *   reads them: it redelivers a decision only once its entry is on the chain.
 */
export const HANDLER_DATA_PERMISSIONS: Readonly<Record<HandlerName, HandlerDataPermissions>> = {
  prepare: { table: [GET, QUERY, PUT, UPDATE] },
  'model-turn': { table: [GET, UPDATE], overflow: 'read-write', sealing: 'seal' },
  'await-approval': { table: [GET, BATCH_GET, QUERY, PUT, UPDATE], overflow: 'read', sealing: 'seal' },
  'execute-tools': { table: [GET, BATCH_GET, QUERY, PUT, UPDATE], overflow: 'read-write', sealing: 'seal' },
  'record-rejection': { table: [GET, UPDATE], overflow: 'read-write', sealing: 'seal' },
  'finish-run': { table: [UPDATE] },
  'mark-failed': { table: [UPDATE] },
  'mark-expired': { table: [GET, QUERY, PUT, UPDATE] },
  // Starting a run counts it (UpdateItem), remembers it (PutItem) and forgets ended ones (DeleteItem);
  // the history lists read the history index, a run's audit its own partition (Query).
  'api-runs': {
    table: [GET, BATCH_GET, QUERY, PUT, UPDATE],
    historyIndex: true,
    overflow: 'read-write',
    sealing: 'seal',
    quotaItems: [DELETE],
  },
  'api-inbox': { table: [GET, BATCH_GET, QUERY], inboxIndex: true, sealing: 'unseal' },
  'api-decision': { table: [GET, QUERY, PUT, UPDATE], sealing: 'unseal', receiptSigning: true },
  'api-admin': { table: [GET, QUERY, PUT, UPDATE, DELETE] },
  // The caller's user record and the configuration (GetItem), its skills (BatchGetItem); it writes
  // only its completions counter.
  'api-generate': { table: [GET, BATCH_GET], quotaItems: [UPDATE] },
  // Reads the run; writes only its stream slot (taken with a Query and a PutItem, freed with a DeleteItem).
  'api-run-events': {
    table: [GET, BATCH_GET, QUERY],
    overflow: 'read',
    sealing: 'unseal',
    quotaItems: [QUERY, PUT, DELETE],
  },
  // The waiting cards: the index entries, then the cards they point to. And the claimed decisions
  // never delivered (the index's UNDELIVERED partitions): each card read, its token opened, the
  // card closed and the decision marked delivered.
  'report-waiting-runs': { table: [GET, BATCH_GET, QUERY, UPDATE], inboxIndex: true, sealing: 'unseal' },
  // A card escalation step: the card (GetItem), its approver entry and its routing (UpdateItem).
  'escalate-card': { table: [GET, UPDATE] },
  // External runs (docs/external-agents.md). The approval API claims client keys (GetItem, PutItem),
  // creates and reads runs (sealing their state), writes reports (PutItem) and lists them (Query),
  // and counts its quotas like api-runs.
  'api-external': {
    table: [GET, QUERY, PUT, UPDATE],
    overflow: 'read-write',
    sealing: 'seal',
    quotaItems: [DELETE],
  },
  // Ends the run (UpdateItem) after reading it, its decision and its card (GetItem); opens the
  // answered run's state (which calls an approver edited, for the event).
  'record-external-decision': { table: [GET, UPDATE], overflow: 'read', sealing: 'unseal' },
  // Reads the run (unsealing its webhook URL), its decision and its reports: no write at all.
  'notify-caller': { table: [GET, QUERY], overflow: 'read', sealing: 'unseal' },
};

/**
 * The channels' functions, from what their compositions call:
 * - slack-notify reads the card (and the decision of a turn that closed), the users (a route's
 *   least-privileged viewer, one Query per 100 users), the pages of the read gate, and its
 *   messages (Query); it claims (PutItem) and records (UpdateItem) each message; it only opens cards;
 * - slack-interactions is the decision's row (claim, card, tally, the signed receipt entries) plus
 *   the users, the Slack user link (GetItem) and the used signatures (PutItem), and it brings
 *   messages up to date;
 * - email-notify reads cards and users and the digests (Query), claims each mail (PutItem) and
 *   updates digests; a mail holds no preview, so it never touches the sealing key.
 */
export const CHANNEL_HANDLER_DATA_PERMISSIONS: Readonly<Record<ChannelHandlerName, HandlerDataPermissions>> =
  {
    'slack-notify': { table: [GET, BATCH_GET, QUERY, PUT, UPDATE], sealing: 'unseal' },
    'slack-interactions': {
      table: [GET, BATCH_GET, QUERY, PUT, UPDATE],
      sealing: 'unseal',
      receiptSigning: true,
    },
    'email-notify': { table: [GET, QUERY, PUT, UPDATE] },
  };

/** Grants every handler its row of {@link HANDLER_DATA_PERMISSIONS}, and nothing else of the data layer. */
export function grantHandlerDataPermissions(
  data: CountersignData,
  functions: Readonly<Record<HandlerName, IFunction>>,
): void {
  for (const [name, permissions] of Object.entries(HANDLER_DATA_PERMISSIONS) as Array<
    [HandlerName, HandlerDataPermissions]
  >) {
    grantDataPermissions(data, functions[name], permissions);
  }
}

/** Grants one function one row of a permissions matrix, and nothing else of the data layer. */
export function grantDataPermissions(
  data: CountersignData,
  handler: IFunction,
  permissions: HandlerDataPermissions,
): void {
  data.grantTableActions(handler, permissions.table, {
    inboxIndex: permissions.inboxIndex === true,
    historyIndex: permissions.historyIndex === true,
  });
  if (permissions.overflow !== undefined) {
    data.grantOverflow(handler, permissions.overflow);
    data.acknowledgeOverflowWildcard(handler.role ?? handler);
  }
  if (permissions.sealing !== undefined) data.grantSealing(handler, permissions.sealing);
  if (permissions.receiptSigning) data.grantReceiptSigning(handler);
  if (permissions.quotaItems !== undefined) data.grantQuotaItemActions(handler, permissions.quotaItems);
}
