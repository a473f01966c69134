/**
 * Every sentence a person reads about a run, in one place, so the JSON API, the inbox page
 * and the event stream cannot say different things.
 */
export const TEXTS = {
  staleDigest: 'The pending action changed since you viewed it — please re-review.',
  previewCaveat: 'Captured when the run paused — the target may have changed since.',
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
  decisionExpired: 'The approval window of this run has closed; the run has expired.',
  alreadyDecided: 'This turn was already decided differently.',
  grantRefused: (grant: string) => `You need the "${grant}" grant for this.`,
  gateToolRefused: (tool: string, writes: boolean) =>
    `Decision gate refused: you may not release ${writes ? 'writes' : 'calls'} of tool "${tool}" on this deployment.`,
  gateFourEyes: 'Decision gate refused: four-eyes is on for this configuration, and you started this run.',
  toolDenied: (tool: string) => `Error: tool "${tool}" was denied by the operator.`,
  toolUnavailable: (tool: string) => `Error: tool "${tool}" is not available to this run.`,
  toolInvalidArguments: (tool: string, problem: string) =>
    `Error: invalid arguments for tool "${tool}": ${problem}`,
  toolFailed: (tool: string, errorClass: string) => `Error: tool "${tool}" failed (${errorClass}).`,
  callsTooLarge: (limit: number) =>
    `The model proposed tool calls whose arguments exceed ${Math.round(limit / 1000)} KB, more than an approval card can show.`,
  maxTurnsReached: (maxTurns: number) =>
    `The run reached its limit of ${maxTurns} model turns without a final answer.`,
  expired: (seconds: number) =>
    `No decision was made within the approval window (${formatDuration(seconds)}).`,
  internalFailure: 'The run stopped because of an internal error; operators can find it in the logs.',
} as const;

function formatDuration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  if (seconds % 60 === 0) return `${seconds / 60} minute${seconds === 60 ? '' : 's'}`;
  return `${seconds} seconds`;
}
