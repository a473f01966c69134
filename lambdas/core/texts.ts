import type { WebhookUrlProblem } from './external-runs/webhook-url.js';
import type { QuotaName } from './quotas/principal-quotas.js';
import type { McpUrlProblem } from './tools/mcp/mcp-host-policy.js';

/**
 * Every sentence a person reads about a run, in one place, so the JSON API, the inbox page
 * and the event stream cannot say different things.
 */
export const TEXTS = {
  staleDigest: 'The pending action changed since you viewed it — please re-review.',
  previewCaveat: 'Captured when the run paused — the target may have changed since.',
  previewPreconditionCaveat:
    'Captured when the run paused — if the record changes before the write, it is not applied and you are asked again.',
  recordChanged: 'The record changed after the card was shown — review the new preview',
  effectUnconfirmed:
    'Could not confirm this tool is read-only when the run paused — approving it needs everything a write of this tool needs.',
  recordChangedDuringWrite: (tool: string) =>
    `Tool "${tool}" did not write: its record changed after the card was shown.`,
  previewFailed: 'No preview — you are deciding without one',
  previewWithheld: 'The preview is not shown: you hold no permission on the record it describes.',
  noPreview: 'No preview for this call.',
  previewFailedLine: (errorClass: string) => `Preview failed (${errorClass}).`,
  previewMoreLines: (hidden: number) =>
    `… ${hidden.toLocaleString('en-US')} more line${hidden === 1 ? '' : 's'} not shown.`,
  previewRefused: (tool: string, problem: string) =>
    `This call would be refused: tool "${tool}" does not accept these arguments (${problem}).`,
  toolNotRegistered: 'Not a registered tool — this call will not run.',
  callWillNotRun: 'This call will not run: its tool was not offered to this run, or refuses these arguments.',
  nothingToApprove:
    'Nothing on this card can run: every call is to an unregistered tool or would be refused. Reject it to tell the model.',
  approvalWindowCloses: 'Approval window closes',
  approvalWindowClosed: 'The approval window has closed; this card takes no decision.',
  pausedAt: 'Paused',
  runNotFound: 'Run not found.',
  callNotOnCard: (index: number, calls: number) =>
    calls === 0
      ? `index: the card of this run has no call ${index}; it has no calls.`
      : `index: the card of this run has no call ${index}; its calls are numbered 0 to ${calls - 1}.`,
  callIndexInvalid: "index: a call's position on the card, a whole number from 0.",
  argumentsExcerpted: (totalCharacters: number) =>
    `This card shows an excerpt of the arguments (${formatCount(totalCharacters)} characters in all).`,
  argumentTextCut: (totalCharacters: number) =>
    `… (${formatCount(totalCharacters)} characters in all — show full arguments)`,
  argumentEntriesCut: (shownEntries: number, totalEntries: number) =>
    `… (${formatCount(totalEntries - shownEntries)} more of ${formatCount(totalEntries)} entries — show full arguments)`,
  showFullArguments: 'Show full arguments',
  decisionExpired: 'The approval window of this run has closed; the run has expired.',
  alreadyDecided: 'This turn was already decided differently.',
  decisionUnavailable: (onRecord: 'yes' | 'no' | 'unknown') =>
    onRecord === 'yes'
      ? 'Your decision is on record: a service was busy while it was carried out, and countersign delivers it by itself. There is no need to send it again.'
      : onRecord === 'no'
        ? 'Your decision was not recorded: a service countersign depends on is busy or unavailable. Send it again in a moment.'
        : 'It is not known whether your decision was recorded: a service countersign depends on is busy or unavailable. Sending it again is safe: a decision on record is answered, never applied twice.',
  decisionDeliveryDeferred:
    'The decision is on record; its wait kept changing while it was delivered, and countersign delivers it by itself.',
  runCancelled: 'The run was cancelled; this turn takes no decision.',
  cancelAfterApproval:
    'This turn was already approved and its writes are being carried out; the run cannot be cancelled until they finish.',
  cancelEnded: (status: string) => `The run has already ended (${status}); there is nothing to cancel.`,
  cancelKeptChanging: 'The run kept changing while it was being cancelled; try again.',
  decisionWithoutReceipt:
    'The decision is on record without its receipt entry; it is delivered once the approver sends it again.',
  receiptKeptChanging: "The run's receipt kept changing while this was being recorded; try again.",
  redriveNotFailed: (status: string) =>
    `The run is ${status}, not failed; only a failed run can be redriven.`,
  redriveUnrecorded:
    'The run failed before countersign recorded where runs fail, so it cannot be redriven; start it again.',
  redriveNotTransient: (step: string, error: string) =>
    `The run failed in ${step} on ${error}, which another attempt would meet again; it cannot be redriven. Start it again once the cause is fixed.`,
  redriveKeptChanging: 'The run kept changing while it was being redriven; try again.',
  deleteWhileRunsWait: (kind: string, id: string, waiting: number) =>
    `The ${kind} "${id}" is used by ${waiting} waiting run${waiting === 1 ? '' : 's'}; cancel ${waiting === 1 ? 'it' : 'them'} (POST /runs/{id}/cancel) before deleting it.`,
  cardUnopenable: 'This card could not be opened; it cannot be approved.',
  cardUnopenableFailure:
    'The run stopped: its approval card could not be opened, so it could never be decided.',
  decisionRunFailed: 'This run has ended (failed); it no longer takes decisions.',
  grantRefused: (grant: string) => `You need the "${grant}" grant for this.`,
  noUserRecord: (userId: string) =>
    `You are signed in as "${userId}", but countersign has no user record for you, and a run acts as its owner's record (page, language and tool access). Ask an admin to create it: PUT /admin/users/${userId}.`,
  /** THE rule of tool-level authority, word for word in docs/approvers.md and in every refusal. */
  toolAccessRule:
    'approving needs tool access (toolAccess) to every tool whose calls on the card need approval: writes, reads that ask for approval, and tools whose effect could not be confirmed',
  gateToolRefused: (tool: string) =>
    `Decision gate refused: ${TEXTS.toolAccessRule}; yours does not include "${tool}". You may still reject.`,
  gateFourEyes: 'Decision gate refused: four-eyes applies to this turn, and you started this run.',
  gateRecordRefused: (tool: string) =>
    `Decision gate refused: this configuration decides per record, and you hold no permission on the record a "${tool}" call writes. You may still reject.`,
  startAccessRefused: (what: string) => `You are not on the access list of ${what}: ask an admin to add you.`,
  routedTo: 'Routed to',
  routedToEveryApprover: 'every approver',
  approvalProgress: (
    count: number,
    required: number,
    approvers: readonly string[],
    lapsed: readonly string[] = [],
  ) =>
    `${count} of ${required} approvals${approvers.length > 0 ? ` — approved by ${approvers.join(', ')}` : ''}${lapsed.length > 0 ? `; no longer counted: ${lapsed.join(', ')} (no longer authorised to approve)` : ''}`,
  approvalRecorded: (count: number, required: number) =>
    `Your approval is recorded: ${count} of ${required} approvals. The write runs when ${required} approvers have approved.`,
  approvalsLapsed: (count: number, required: number, lapsed: readonly string[]) =>
    `Your approval is recorded, but ${lapsed.length === 1 ? `the approval of ${lapsed[0]} no longer counts: their current record does` : `the approvals of ${lapsed.join(', ')} no longer count: their current records do`} not hold the authority approving this card needs. ${count} of ${required} approvals; the write runs when ${required} approvers who hold it have approved.`,
  // Per-call decisions and edits (docs/approvers.md, "Per-call decisions", "Approve with edits").
  choiceNamedTwice: (index: number) => `index: call ${index} is named twice; name each call once.`,
  choiceReasonOnApproval: 'reason: only a rejected call takes a reason.',
  choicesSplitGroup: (indexes: readonly number[], tools: readonly string[]) =>
    `calls: calls ${indexes.join(', ')} are decided together (${tools.map((tool) => `"${tool}"`).join(', ')} ${tools.length === 1 ? 'declares' : 'declare'} it): approve all of them or reject all of them.`,
  callNotEditable: (tool: string) => `index: tool "${tool}" does not allow its arguments to be edited.`,
  externalCallNotEditable: (tool: string) =>
    `index: "${tool}" is a tool of an agent that runs elsewhere that its agent did not declare editable (tools[].editable): approve or reject the call.`,
  editUnchanged: 'arguments: the same as the call holds now; an edit must change something.',
  editTooLarge:
    'arguments: larger or more deeply nested than a model’s turn may propose (200 KB, 128 levels).',
  callRejectedNote: (reason: string) => ` Reason given: ${reason}`,
  callEditedNote: (editor: string, argumentsJson: string) =>
    `Note: an approver (${editor}) edited the arguments of this call before it ran; it ran with ${argumentsJson}.`,
  editedBy: (editor: string) => `Edited by ${editor}`,
  ownApprovalDiffers:
    'You already approved this card with other per-call choices; your first approval stands. Another approver may approve with the same choices.',
  gateOwnEdit:
    'Decision gate refused: you edited this call, and four-eyes or more than one approval applies: someone else must approve your edit. You may still reject.',
  // Delegation (docs/approvers.md, "Delegation").
  awayNotYours: 'You may set only your own away status (an admin may set anyone’s).',
  awayUntilPast: 'body.until: must be in the future.',
  awayUntilTooFar: (days: number) => `body.until: must be at most ${days} days ahead.`,
  awayOwnDelegate: 'body.delegate: name someone other than the user who is away.',
  awayNotAnApprover: (userId: string) =>
    `"${userId}" does not hold the "agent_approve" grant: there is nothing to delegate.`,
  awayDelegateCannotApprove: (userId: string) =>
    `body.delegate: "${userId}" has no user record with the "agent_approve" grant; a delegate decides only with authority they hold themself.`,
  notActingFor: (userId: string) =>
    `You are not the delegate of "${userId}" now: they have not named you, their away has ended, or they may not approve.`,
  gateActingFor: (userId: string, refusal: string) => `Acting for ${userId}: ${refusal}`,
  actingFor: (userId: string) => `acting for ${userId}`,
  toolDenied: (tool: string) => `Error: tool "${tool}" was denied by the operator.`,
  toolUnavailable: (tool: string) => `Error: tool "${tool}" is not available to this run.`,
  toolInvalidArguments: (tool: string, problem: string) =>
    `Error: invalid arguments for tool "${tool}": ${problem}`,
  toolFailed: (tool: string, errorClass: string) => `Error: tool "${tool}" failed (${errorClass}).`,
  toolOutcomeUnknown: (tool: string) =>
    `Error: tool "${tool}" may or may not have run: an earlier attempt started it and never reported back, and the tool does not declare that running it twice is safe, so it was not run again. Check its target before trying again.`,
  toolNotApplied: (tool: string, errorClass: string, attempts: number) =>
    `Error: tool "${tool}" was not applied: it failed temporarily (${errorClass}) ${attempts} times.`,
  toolRetried: (tool: string, errorClass: string) =>
    `Tool "${tool}" failed temporarily (${errorClass}); it is tried again.`,
  callTakenByAnotherAttempt: 'Another attempt took this call meanwhile; it is read again.',
  mcpServerUnreachable: (server: string) =>
    `Error: the MCP server "${server}" could not be reached; its tools are unavailable right now.`,
  mcpServerHostNotAllowed: (server: string) =>
    `MCP server ${server}: host not allowed. Its URL must be https and its host on the deployment's allowed MCP hosts (mcpAllowedHosts).`,
  mcpServerUrlRefused: (field: string, host: string, problem: McpUrlProblem) =>
    problem === 'not-https'
      ? `${field}: must be an https URL ("${host}" is reached over http, which only loopback hosts may use locally).`
      : problem === 'credentials'
        ? `${field}: must not carry a user name or password; use authSecret.`
        : `${field}: the host "${host}" is not allowed: it is not on the deployment's allowed MCP hosts (mcpAllowedHosts).`,
  callsTooLarge: (limit: number) =>
    `The model proposed tool calls whose arguments exceed ${Math.round(limit / 1000)} KB, more than an approval card can show.`,
  callsTooDeep: (limit: number) =>
    `The model proposed tool call arguments nested more than ${limit} levels deep, more than an approval card can show.`,
  callNameUnusable: (limit: number) =>
    `The model proposed a call to a tool name longer than ${limit} characters or not valid text, which no tool can have.`,
  tooManyCalls: (limit: number) =>
    `The model proposed more than ${limit} tool calls in one turn, more than an approval card can show.`,
  maxTurnsReached: (maxTurns: number) =>
    `The run reached its limit of ${maxTurns} model turns without a final answer.`,
  expired: (seconds: number) =>
    `No decision was made within the approval window (${formatDuration(seconds)}).`,
  internalFailure: 'The run stopped because of an internal error; operators can find it in the logs.',
  tooManyRequests: 'Too many requests — try again in a moment.',
  quotaReached: (quota: QuotaName, seconds: number) => `${QUOTA_SENTENCES[quota]} Try again in ${seconds} s.`,
  localForeignOrigin:
    'This local server answers its own page and clients on this machine only, not pages of other sites.',
  configurationNotFound: 'Configuration not found.',
  nonTextOperation: (operation: string) =>
    `The "${operation}" operation is not text generation: countersign serves completion and translation only, and never gives skills to embeddings, vision or speech.`,
  generationProviderFailed: 'The model provider could not answer this request; try again later.',
  generationProviderUnavailable:
    "This configuration's model provider is not available in this deployment; ask an admin to configure it.",
  generationTimeout: (seconds: number) =>
    `The model did not answer within ${seconds} seconds; ask for less (a shorter prompt or text) or start a run (POST /runs), which has no such limit.`,
  generationEmptyReply: 'The model returned an empty reply; try again.',
  generationReplyTooLarge:
    'The model returned a reply too large to send back; ask for less (a lower maxTokens) or start a run (POST /runs).',
  generationTooLarge: "body: the request does not fit the model's context window; send less text.",
  // Agents that run elsewhere (docs/external-agents.md).
  externalToolDescription: (tool: string) => `The "${tool}" tool of an agent that runs elsewhere.`,
  externalToolRunsElsewhere: 'Error: this tool runs in the agent that proposed it, never in countersign.',
  callerPreviewCaveat:
    'Supplied by the caller — countersign did not compute these lines and cannot vouch for them.',
  callerPreviewOfOriginal:
    'No preview: the caller’s lines describe its own arguments, not the edited ones, so they are not shown.',
  externalUndeclaredTool: (field: string, tool: string) =>
    `${field}: "${tool}" is not one of the tools this request declares (tools[].name).`,
  externalNothingToApprove:
    'calls: every call is to a tool declared "read", which needs no approval; run them without asking.',
  externalArgumentsTooDeep: (field: string, limit: number) =>
    `${field}: nested more than ${limit} levels deep, more than an approval card can show.`,
  externalWebhookUrlRefused: (problem: WebhookUrlProblem) =>
    problem === 'not-a-url'
      ? 'webhookUrl: not a URL.'
      : problem === 'credentials'
        ? 'webhookUrl: must not carry a user name or password.'
        : problem === 'not-https'
          ? 'webhookUrl: must be an https URL.'
          : 'webhookUrl: its host is a loopback, link-local or unspecified address, which no webhook may use.',
  clientKeyReused:
    'clientKey: already used for a different turn; a retry must send the same request, a new turn a new key.',
  externalRunNotAnswered: 'This turn has no answer yet: report what ran once it is decided.',
  externalCallNotOnTurn: (index: number, calls: number) =>
    `reports: this turn has no call ${index}; its calls are numbered 0 to ${calls - 1}.`,
  externalReportConflict: (index: number) =>
    `reports: call ${index} was already reported with another outcome; a report is kept as first sent.`,
  externalReportsRepeated: 'reports: name each call once.',
  // The SDK adapters (docs/external-agents.md): what a model reads for a call, what an agent's error says.
  agentCallRejected: (reason: string | undefined) =>
    reason === undefined ? 'Rejected in countersign by an approver.' : `Rejected in countersign: ${reason}`,
  agentCallEditedNotRunnable:
    'Not run: an approver edited the arguments of this call in countersign, and this adapter cannot run other arguments than the ones proposed. Propose the call again with the arguments the approver wants.',
  agentRanEditedArguments: (editor: string) => `ran the arguments ${editor} edited`,
  agentTurnInvalid: (problems: string) => `The turn cannot be submitted to countersign: ${problems}`,
  agentCountersignUnreachable: (action: string, problem: string) =>
    `countersign could not be reached to ${action} (${problem}); no call was run.`,
  agentCountersignFailing: (action: string, status: number) =>
    `countersign answered ${status} when asked to ${action}, after retries; no call was run.`,
  agentCountersignRefused: (action: string, status: number, message: string) =>
    `countersign refused to ${action} (${status}): ${message}`,
  agentRunEnded: (runId: string, status: string, reason: string | undefined) =>
    `countersign run ${runId} ended ${status}${reason === undefined ? '' : ` (${reason})`}; no call was approved.`,
  agentWaitElapsed: (runId: string, seconds: number) =>
    `countersign run ${runId} was not answered within ${seconds} s; it still waits on its card. Wait again with its run id, or cancel it.`,
  agentAnswerMismatch: (runId: string) =>
    `countersign's answer for run ${runId} does not match the submitted turn; no call was run.`,
  // The MCP approval gateway (docs/external-agents.md#mcp-approval-gateway): what an MCP client reads.
  mcpGatewaySummary: (tool: string) =>
    `An MCP client calls "${tool}" through the countersign MCP gateway; it runs on the upstream server once approved.`,
  mcpGatewayWaiting: (tool: string, runId: string, cardUrl: string) =>
    `Waiting for approval: "${tool}" has not run. A person must countersign it first (run ${runId}, card ${cardUrl}). To get the decision, call "${tool}" again with the same arguments: the same run answers and no second card is made.`,
  mcpGatewayWaitingProgress: (runId: string) =>
    `Waiting for a person to countersign this call (run ${runId}).`,
  mcpGatewayEdited: (tool: string, editor: string, approvedArguments: string) =>
    `An approver (${editor}) changed the arguments of "${tool}" before approving it; it ran with ${approvedArguments}.`,
  mcpGatewayRejected: (tool: string, reason: string | undefined) =>
    `Not run: an approver rejected this call of "${tool}"${reason === undefined ? ' (the reason is not shown to callers)' : `: ${reason}`}.`,
  mcpGatewayNotDecided: (
    tool: string,
    status: 'expired' | 'cancelled' | 'failed',
    reason: string | undefined,
  ) =>
    `Not run: the approval of this call of "${tool}" ${status === 'expired' ? 'expired without a decision' : status === 'cancelled' ? 'was cancelled' : 'failed'}${reason === undefined ? '' : ` (${reason})`}. Calling it again asks for a new approval.`,
  mcpGatewayAlreadyRun: (tool: string, runId: string, outcome: string) =>
    `Not run again: this call of "${tool}" was approved and already ran (run ${runId}, reported ${outcome}). Calling it again asks for a new approval.`,
  mcpGatewayStatusToolDescription:
    'countersign: how a call that waited for approval stands, by the run id its "waiting for approval" answer named. Reads only; to run an approved call, call its tool again with the same arguments.',
  mcpGatewayStatusPending: (runId: string, cardUrl: string) =>
    `Run ${runId} waits for approval: card ${cardUrl}.`,
  mcpGatewayStatusApproved: (runId: string) =>
    `Run ${runId} is approved and has not run: call its tool again with the same arguments to run it.`,
  mcpGatewayStatusRan: (runId: string, outcome: string) =>
    `Run ${runId} was approved and ran (reported ${outcome}).`,
  mcpGatewayStatusRejected: (runId: string, reason: string | undefined) =>
    `Run ${runId} was rejected${reason === undefined ? ' (the reason is not shown to callers)' : `: ${reason}`}; its call will not run.`,
  mcpGatewayStatusEnded: (runId: string, status: string, reason: string | undefined) =>
    `Run ${runId} ended ${status} without a decision${reason === undefined ? '' : ` (${reason})`}; its call will not run.`,
  mcpGatewayStatusNotFound: (runId: string) => `No run "${runId}" of this gateway's machine client.`,
  mcpGatewayApprovalUnavailable:
    "Not run: the gateway could not ask countersign for approval (countersign or its token endpoint did not answer, or refused the gateway's credentials), and a write never runs without one. Try again later.",
  mcpGatewayApprovalRefused: (status: number, message: string | undefined) =>
    `Not run: countersign refused to put this call on a card (HTTP ${status}${message === undefined ? '' : `: ${message}`}).`,
  mcpGatewayUpstreamUnavailable: (tool: string) =>
    `"${tool}" was approved but the upstream MCP server could not be reached; the failure is reported to countersign. Calling it again asks for a new approval.`,
  mcpGatewayReadUnavailable: (tool: string) =>
    `"${tool}" did not run: the upstream MCP server could not be reached.`,
  mcpGatewayListingFailed: 'The upstream MCP server did not list its tools; try again later.',
  mcpGatewayUnknownTool: (tool: string) => `No tool "${tool}": the upstream MCP server does not list it.`,
  mcpGatewayArgumentsTooLarge: (limit: number) =>
    `Not run: the arguments are larger than ${limit.toLocaleString('en-US')} bytes of JSON, more than an approval card takes from the gateway.`,
  mcpGatewayBusy: (limit: number) =>
    `Not run: ${limit} calls already wait for approval through this gateway; try again once one is decided.`,
  // The HTTP edge: what a client reads when its request is refused before any use case runs.
  bearerTokenInvalid: 'The bearer token is missing or invalid.',
  internalError: 'Internal error.',
  runNotStarted:
    'The run could not be started: a service countersign depends on is busy or unavailable. It was recorded as failed; start it again in a moment.',
  serviceUnavailable:
    'A service countersign depends on is busy or unavailable right now; try again in a moment.',
  routeNotFound: 'No route matches this path.',
  requestPathInvalid: 'The request path is not valid.',
  methodNotAllowed: (methods: readonly string[]) => `This path accepts ${methods.join(', ')}.`,
  requestTooLarge: (bytes: number) => `The request body exceeds ${bytes} bytes.`,
  bodyTooLarge: (bytes: number) => `body: larger than ${bytes} bytes.`,
  bodyNotJson: 'body: not valid JSON.',
  bodyNotJsonContentType: 'body: send JSON with content-type application/json.',
  bodyRequired: 'body: a JSON object is required.',
  bodyForbiddenKey: 'body: a key named "__proto__" or "constructor" is not accepted.',
  adminRecordNotFound: (kind: string, id: string) => `No ${kind} "${id}".`,
  adminIdTooLong: (kind: string) => `No ${kind} with this id.`,
  // The id as the client sent it, cut to what no skill id exceeds.
  skillNotFound: (skillId: string) => `No skill "${skillId.slice(0, 100)}".`,
  adminIdMismatch: (field: string, id: string) => `${field}: must equal the id in the path ("${id}").`,
  skillsResourceNotFound: 'No such skills resource.',
  // The inbox page's own sentences (its script shows them beside the API's messages).
  pageSignInInvalid: 'Your sign-in is not valid: paste a fresh token.',
  pageRunGone: 'This run is gone.',
  pageInboxFailed: 'The inbox could not be loaded.',
  pageArgumentsFailed: 'The arguments could not be loaded.',
  pageApproved: 'Approved: the run continues.',
  pageRefuseCall: 'Refuse this call (approve the others)',
  pageMoreChanges: (count: number) => `and ${count} more change${count === 1 ? '' : 's'}`,
  pageRejected: 'Rejected: the model is told.',
  pageDecisionFailed: 'The decision failed.',
  // The channels (docs/approvers.md, "Slack" and "Email"): what a message or a mail says.
  channelApprovalNeeded: 'Approval needed',
  channelRunBy: (owner: string) => `started by ${owner}`,
  channelPreviewWithheld:
    'The preview is not shown here: not every approver this channel reaches may read the record it describes. Open the card to see it, if you may.',
  channelMoreLines: (hidden: number) =>
    `… ${formatCount(hidden)} more line${hidden === 1 ? '' : 's'} on the card.`,
  channelMoreCalls: (hidden: number) =>
    `… ${formatCount(hidden)} more call${hidden === 1 ? '' : 's'} on the card.`,
  channelEscalated: (groups: readonly string[]) => `Unanswered in time: escalated to ${groups.join(', ')}.`,
  channelNothingRuns: 'Nothing on this card can run: it can only be rejected.',
  channelApprove: 'Approve',
  channelReject: 'Reject',
  channelCardLink: 'Open the card',
  channelDecided: (
    decision: 'approve' | 'reject' | 'edit',
    by: string,
    channel: string,
    more: { actingFor?: string; refusedCalls?: number } = {},
  ) =>
    `${decision === 'approve' ? 'Approved' : decision === 'reject' ? 'Rejected' : 'Edited'} by ${by}${
      more.actingFor ? ` for ${more.actingFor}` : ''
    } (${channel === 'slack' ? 'Slack' : 'API'})${
      decision === 'edit'
        ? ': the edited calls wait on a fresh card'
        : more.refusedCalls
          ? `, ${more.refusedCalls === 1 ? 'one call' : `${more.refusedCalls} calls`} refused`
          : ''
    }.`,
  channelClosed: (because: string) =>
    because === 'cancelled'
      ? 'Cancelled: the run was stopped; this card takes no decision.'
      : because === 'expired'
        ? 'Expired: no decision was made within the approval window.'
        : because === 'reopened'
          ? 'A record changed after this card was shown: a fresh card asks again.'
          : 'The run ended; this card takes no decision.',
  slackNotLinked: (slackUserId: string) =>
    `Your Slack account is not linked to a countersign user, so this button decides nothing. Ask an admin to link it: PUT /admin/slack-users/${slackUserId}.`,
  slackLinkedUserMissing: (userId: string) =>
    `Your Slack account is linked to "${userId}", who has no countersign user record, so this button decides nothing. Ask an admin to create it.`,
  slackInteractionRefused: 'This Slack request was refused: its signature is missing, invalid or too old.',
  mailSubject: (label: string) => `Approval needed: ${label}`,
  mailDigestSubject: (count: number) =>
    `${formatCount(count)} card${count === 1 ? '' : 's'} wait for your decision`,
  mailCardLines: (card: { label: string; owner: string; tools: string; closesAt: string; link: string }) => [
    `${card.label}`,
    `Started by ${card.owner}; tools: ${card.tools}.`,
    `The approval window closes ${card.closesAt}.`,
    `Open the card: ${card.link}`,
  ],
  mailFooter:
    'This mail decides nothing: sign in to the inbox to read the card and approve or reject it. You get it because you may decide these cards; an admin can change how often you are mailed (emailDigestMinutes on your user record).',
  // The inbox page's sign-in, live list and history (issue #21); `{count}` and `{name}` are filled in by the page.
  pageSignInPrompt: 'Sign in to see what waits for your decision.',
  pageSignInButton: 'Sign in',
  pageSignInFailed: 'Sign-in did not complete. Please sign in again.',
  pageSignInExpired: 'Your sign-in ended. Sign in again to continue where you were.',
  pageSignedInAs: 'Signed in as',
  pageSignOut: 'Sign out',
  pageTokenFallback: 'Use a bearer token instead (API users)',
  pageTokenHelp: 'Paste a bearer token: it stays in this tab’s memory only.',
  pageNewCardsOne: 'A new card is waiting.',
  pageNewCardsMany: '{count} new cards are waiting.',
  pageShowNewCards: 'Show new cards',
  pageCardsLeftOne: 'A card was decided, cancelled or expired elsewhere and left the list.',
  pageCardsLeftMany: '{count} cards were decided, cancelled or expired elsewhere and left the list.',
  pageCardLeft: 'This card was decided, cancelled or expired elsewhere; it takes no decision here.',
  pageTallyChanged: 'The approvals of a card changed.',
  pageNothingMatches: 'No waiting card matches these filters.',
  pageRunLoading: 'Loading the run…',
  // A card's context (issue #21, item 5).
  contextWithheld:
    'The request and the model’s reason are not shown: a preview on this card is withheld from you, and they may quote the same record.',
  contextRequest: 'Requested',
  contextReasoning: 'The model’s reason',
  contextCut: (totalCharacters: number) => `… (${formatCount(totalCharacters)} characters in all)`,
  approveWithoutPreview:
    'You have not seen what this write would replace: its preview is withheld from you. Approve only if you may release it blind.',
  approveWithoutPreviewButton: 'Approve without the preview',
  diffTitle: 'What changes in',
  diffRemoved: 'removed:',
  diffAdded: 'added:',
  diffUnchanged: (words: number) => `… ${formatCount(words)} unchanged words …`,
  diffCut: 'The rest of the difference is not shown.',
  diffTooDifferent: 'The texts differ too much to show word by word; the lines above show both.',
  pageDecidedByMe: 'Decided by me',
  pageMyRuns: 'My runs',
  pageHistoryEmpty: 'Nothing here yet.',
  pageOlderEntries: 'Older entries',
  // A run's page and its audit (GET /runs/{id}, GET /runs/{id}/audit as HTML). Values arrive already
  // marked and isolated by the page's renderer.
  runSummary: (runId: string, owner: string, status: string, turn: number) =>
    `Run ${runId} by ${owner}: ${status}, turn ${turn}.`,
  runStarted: 'Started',
  runEnded: 'Ended',
  auditTitle: 'What happened to this run',
  auditEmpty: 'No decision is on record yet.',
  auditApproval: (by: string, turn: number, tally: string) => `${by} approved turn ${turn} (${tally}).`,
  auditTally: (count: number, required: number | undefined) =>
    required === undefined ? `approval ${count}` : `${count} of ${required} approvals`,
  auditDecision: (by: string, turn: number, decision: 'approve' | 'reject' | 'edit') =>
    decision === 'edit'
      ? `${by} edited turn ${turn}: the edited calls went on a fresh card.`
      : `${by} ${decision === 'approve' ? 'approved' : 'rejected'} turn ${turn}: the decision on record.`,
  auditActingFor: (delegator: string) => `Acting for ${delegator}.`,
  auditRefusedCalls: 'Refused calls:',
  auditReleasedBy: (approvers: string) => `Released by the approvals of ${approvers}.`,
  auditReason: 'Reason:',
  auditDigest: 'Digest',
  auditCalls: 'Calls on the card:',
  auditPreviewShown: {
    captured: 'preview captured',
    refused: 'preview: would be refused',
    failed: 'preview failed',
    none: 'no preview',
  } as Record<'captured' | 'refused' | 'failed' | 'none', string>,
  auditCancel: (by: string) => `${by} cancelled the run.`,
  auditExpiry: 'The approval window closed: the run expired.',
  auditFailure: 'The run failed.',
  historyAct: {
    approve: 'Approved',
    reject: 'Rejected',
    edit: 'Edited (a fresh card)',
    cancel: 'Cancelled',
    approval: 'Approval recorded (k-of-n)',
  } as Record<'approve' | 'reject' | 'edit' | 'cancel' | 'approval', string>,
  historyRunGone: 'the run is no longer kept',
} as const;

const countFormat = new Intl.NumberFormat('en-US');

function formatCount(count: number): string {
  return countFormat.format(count);
}

function formatDuration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  if (seconds % 60 === 0) return `${seconds / 60} minute${seconds === 60 ? '' : 's'}`;
  return `${seconds} seconds`;
}

/** What each per-principal quota limits, as the 429 says it (the limits are in docs/runbook.md). */
const QUOTA_SENTENCES: Readonly<Record<QuotaName, string>> = {
  'runs-started': 'You started as many runs as you may this minute.',
  'waiting-runs': 'As many of your runs wait for a decision as may at once; decide or cancel some first.',
  'open-event-streams': 'You have as many event streams open as you may; close one first.',
  completions: 'You asked for as many completions as you may this minute.',
};
