import * as z from 'zod/mini';
import { type ErrorCode, isCountersignError, nameErrorClass } from '../errors.js';
import type { DecisionDependencies } from '../run-dependencies.js';
import type { DecisionOutcome } from '../runs/decide-run.js';
import { decideRun } from '../runs/decide-run.js';
import { TEXTS } from '../texts.js';
import { SLACK_ACTIONS, type SlackButtonValue, slackButtonValueSchema } from './slack-message.js';
import type { SlackReplayGuard, SlackUserMappings } from './slack-ports.js';
import { SLACK_SIGNATURE_WINDOW_SECONDS, verifySlackSignature } from './slack-signature.js';
import { type SlackDependencies, syncSlackMessages } from './sync-slack-messages.js';

/** What the interaction route needs: a decision's dependencies, the Slack channel and its secrets. */
export type SlackInteractionDependencies = DecisionDependencies &
  SlackDependencies & {
    readonly slackUsers: Pick<SlackUserMappings, 'getSlackUser'>;
    readonly slackReplays: SlackReplayGuard;
    /** The app's signing secret (Secrets Manager deployed), read when a request needs it. */
    readonly slackSigningSecret: () => Promise<string>;
  };

/** A request as Slack sent it: the raw body's bytes and the two signature headers. */
export interface SlackInteractionRequest {
  readonly rawBody: Uint8Array;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
}

export type SlackInteractionOutcome =
  /** Not Slack's, too old, or seen before: nothing was read beyond the headers and nothing decided. */
  | { kind: 'unauthenticated'; reason: 'malformed' | 'expired' | 'forged' | 'replayed' }
  /** Signed, but not a button press of ours (a link button, another interaction): nothing to do. */
  | { kind: 'ignored' }
  | { kind: 'decided'; outcome: DecisionOutcome }
  /** Signed and ours, but refused: the presser is told why (`message`) and nothing was decided. */
  | {
      kind: 'refused';
      reason: 'unlinked' | 'no-user-record' | 'malformed-payload' | ErrorCode;
      message: string;
    };

/**
 * Slack's form body of an interaction: one field, `payload`, holding the interaction's JSON
 * (the OpenAPI document describes the route with this schema).
 */
export const slackInteractionFormSchema = z.strictObject({ payload: z.string() });

/** A block action's payload: what of it the route reads. */
const blockActionsSchema = z.object({
  type: z.literal('block_actions'),
  team: z.object({ id: z.string() }),
  user: z.object({ id: z.string() }),
  channel: z.optional(z.object({ id: z.string() })),
  actions: z.array(z.object({ action_id: z.string(), value: z.optional(z.string()) })).check(z.minLength(1)),
});

/**
 * POST /integrations/slack/interactions: a button of a card's Slack message, decided like the API.
 * Order matters, and nothing is decided unless every step passes:
 * 1. Slack's signature over the raw body, within 5 minutes (`verifySlackSignature`);
 * 2. the signature is claimed as used for those 5 minutes, so a captured request cannot be sent
 *    again (the window bounds what must be remembered);
 * 3. the Slack user must be linked to a countersign user by an admin (never by display name), in
 *    the same workspace, and that user must have a record;
 * 4. `decideRun` as the API calls it, with the channel `slack` in the audit: the digest the button
 *    carries (a stale message's button is refused), gates, four-eyes, routing, k-of-n, exactly once.
 * A refusal is shown to the presser alone and their message brought up to date (a stale one
 * too), as is a k-of-n tally; a decision's message is updated by its `Card Closed`. None of this
 * can change the decision, and none of it failing fails the request.
 *
 * Decided synchronously, inside Slack's 3 seconds: the decision path is one card read, one KMS
 * call, a claim and SendTaskSuccess (docs/approvers.md, "Slack").
 *
 * @example
 * const outcome = await receiveSlackInteraction(dependencies, { rawBody, timestamp, signature });
 * if (outcome.kind === 'unauthenticated') return { statusCode: 401 };
 */
export async function receiveSlackInteraction(
  dependencies: SlackInteractionDependencies,
  request: SlackInteractionRequest,
): Promise<SlackInteractionOutcome> {
  const check = await verifySlackSignature({
    signingSecret: dependencies.slackSigningSecret,
    timestamp: request.timestamp,
    signature: request.signature,
    rawBody: request.rawBody,
    now: dependencies.clock.now(),
  });
  if (check.kind !== 'valid') return refuseRequest(dependencies, check.kind);
  const keepUntil = check.timestampSeconds + SLACK_SIGNATURE_WINDOW_SECONDS + 60;
  if (!(await dependencies.slackReplays.claimSignature(check.signature, keepUntil))) {
    return refuseRequest(dependencies, 'replayed');
  }
  const payload = readBlockActions(request.rawBody);
  if (payload.kind === 'other') return { kind: 'ignored' };
  if (payload.kind === 'malformed') {
    return refuse(dependencies, undefined, 'malformed-payload', TEXTS.bodyNotJson);
  }
  const [action] = payload.actions;
  const decision =
    action?.action_id === SLACK_ACTIONS.approve
      ? 'approve'
      : action?.action_id === SLACK_ACTIONS.reject
        ? 'reject'
        : undefined;
  if (decision === undefined) return { kind: 'ignored' };
  const button = readButtonValue(action?.value);
  const presser = { channel: payload.channel?.id, user: payload.user.id };
  if (button === undefined) return refuse(dependencies, presser, 'malformed-payload', TEXTS.bodyNotJson);

  const link = await dependencies.slackUsers.getSlackUser(payload.user.id);
  if (link === undefined || link.slackTeamId !== payload.team.id) {
    // Nothing about the card changed: no refresh (each costs a user scan and an unseal per route).
    return refuse(dependencies, presser, 'unlinked', TEXTS.slackNotLinked(payload.user.id));
  }
  const principal = await dependencies.users.getUser(link.userId);
  if (principal === undefined) {
    return refuse(dependencies, presser, 'no-user-record', TEXTS.slackLinkedUserMissing(link.userId));
  }
  let outcome: DecisionOutcome;
  try {
    outcome = await decideRun(
      dependencies,
      principal,
      button.runId,
      { digest: button.digest, decision },
      { channel: 'slack' },
    );
  } catch (error) {
    // Refusals are written for the person who asked (gates, a stale digest, a closed card).
    if (!isCountersignError(error) || !error.expose) throw error;
    return refuse(dependencies, presser, error.code, error.message, button);
  }
  // A decided card closes, and its `Card Closed` updates the message; a k-of-n tally moves
  // without a closing, so its message is brought up to date here.
  if (outcome.kind === 'approval-recorded') await bringMessagesUpToDate(dependencies, button);
  return { kind: 'decided', outcome };
}

function refuseRequest(
  dependencies: Pick<SlackInteractionDependencies, 'metrics' | 'logger'>,
  reason: Extract<SlackInteractionOutcome, { kind: 'unauthenticated' }>['reason'],
): SlackInteractionOutcome {
  dependencies.metrics.count('SlackInteractionRefusals', 1, { reason });
  dependencies.logger.warn('slack interaction refused', { reason });
  return { kind: 'unauthenticated', reason };
}

/** A refusal of a signed press: counted, shown to the presser alone, and (given the button) its messages refreshed. */
async function refuse(
  dependencies: SlackInteractionDependencies,
  presser: { channel: string | undefined; user: string } | undefined,
  reason: Extract<SlackInteractionOutcome, { kind: 'refused' }>['reason'],
  message: string,
  button?: SlackButtonValue,
): Promise<SlackInteractionOutcome> {
  dependencies.metrics.count('SlackInteractionRefusals', 1, { reason });
  dependencies.logger.info('slack decision refused', { reason, ...(button ? { runId: button.runId } : {}) });
  if (button !== undefined) await bringMessagesUpToDate(dependencies, button);
  const channel = presser?.channel;
  if (presser !== undefined && channel !== undefined) {
    await dependencies.slack.api
      .postEphemeral({ channel, user: presser.user, text: message })
      .catch((error: unknown) =>
        dependencies.logger.warn('slack refusal not shown', { errorClass: nameErrorClass(error) }),
      );
  }
  return { kind: 'refused', reason, message };
}

/** The run's messages as its card now is (a tally moved, a stale button's message closed); best effort. */
async function bringMessagesUpToDate(
  dependencies: SlackInteractionDependencies,
  button: SlackButtonValue,
): Promise<void> {
  try {
    await syncSlackMessages(dependencies, button.runId, { refresh: true });
  } catch (error) {
    // Counted where it failed; the `Card Closed` event tries again for a closed card.
    dependencies.logger.warn('slack messages not brought up to date', {
      runId: button.runId,
      errorClass: nameErrorClass(error),
    });
  }
}

/** The `payload` form field as a block action; `other` for another interaction type (nothing of ours). */
function readBlockActions(
  rawBody: Uint8Array,
):
  | ({ kind: 'block-actions' } & z.infer<typeof blockActionsSchema>)
  | { kind: 'other' }
  | { kind: 'malformed' } {
  const form = slackInteractionFormSchema.safeParse(
    Object.fromEntries(new URLSearchParams(new TextDecoder().decode(rawBody))),
  );
  if (!form.success) return { kind: 'malformed' };
  let json: unknown;
  try {
    json = JSON.parse(form.data.payload);
  } catch {
    return { kind: 'malformed' };
  }
  const typed = z.object({ type: z.string() }).safeParse(json);
  if (typed.success && typed.data.type !== 'block_actions') return { kind: 'other' };
  const parsed = blockActionsSchema.safeParse(json);
  return parsed.success ? { kind: 'block-actions', ...parsed.data } : { kind: 'malformed' };
}

function readButtonValue(value: string | undefined): SlackButtonValue | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed = slackButtonValueSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
