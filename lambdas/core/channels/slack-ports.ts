import * as z from 'zod/mini';
import { userProfileSchema } from '../identity.js';
import type { PageRequest } from '../ports.js';
import type { SlackBlock } from './slack-message.js';
import type { SlackRoute } from './slack-routes.js';

/** Port: Slack's Web API as the channel uses it (chat.postMessage, chat.update, chat.postEphemeral). */
export interface SlackApi {
  /** Posts a message; answers its `ts`, the message's id within the channel. */
  postMessage(message: { channel: string; text: string; blocks: SlackBlock[] }): Promise<{ ts: string }>;
  updateMessage(message: { channel: string; ts: string; text: string; blocks: SlackBlock[] }): Promise<void>;
  /** A message only `user` sees, in `channel`: why their button decided nothing. */
  postEphemeral(message: { channel: string; user: string; text: string }): Promise<void>;
}

/** Which message of a channel shows one turn of a run. */
export interface SlackMessageKey {
  runId: string;
  turn: number;
  channelId: string;
}

/**
 * A card's message as the channel keeps it: `posting` while a post is under way (claimed, no
 * `ts` yet), `open` while it offers buttons, `closed` once it says what happened.
 */
export interface SlackMessageRecord extends SlackMessageKey {
  state: 'posting' | 'open' | 'closed';
  ts?: string;
  updatedAt: string;
}

/** Port: the messages a Slack channel posted, keyed on run, turn and channel (one per key). */
export interface SlackMessageStore {
  listMessages(runId: string): Promise<SlackMessageRecord[]>;
  /**
   * Claims the post of a message (a conditional write): true for the first caller, or for one
   * taking over a claim last written before `staleBefore` (its poster died before recording).
   */
  claimPosting(key: SlackMessageKey, now: string, staleBefore: string): Promise<boolean>;
  /** Gives a claim back after a failed post, so the next attempt may post at once. */
  abandonPosting(key: SlackMessageKey): Promise<void>;
  recordPosted(key: SlackMessageKey, ts: string, now: string): Promise<void>;
  recordClosed(key: SlackMessageKey, now: string): Promise<void>;
}

/** Port: the signatures of Slack requests already served, so a captured request cannot be replayed. */
export interface SlackReplayGuard {
  /** Records a signature as used until `keepUntilSeconds`; false when it was used before. */
  claimSignature(signature: string, keepUntilSeconds: number): Promise<boolean>;
}

/**
 * The admin's link of a Slack user to a countersign user: the only way a button press acts as
 * someone (never a display name, which anyone may set). The Slack workspace is part of it: the
 * same user id from another workspace maps to nobody.
 */
export const slackUserMappingSchema = z.strictObject({
  slackUserId: z.string().check(z.regex(/^[UW][A-Z0-9]{2,31}$/, 'a Slack user id such as U0123456789')),
  slackTeamId: z.string().check(z.regex(/^[TE][A-Z0-9]{2,31}$/, 'a Slack workspace id such as T0123456789')),
  userId: userProfileSchema.shape.userId,
});
export type SlackUserMapping = z.infer<typeof slackUserMappingSchema>;

/** Port: the Slack user links (admin API: /admin/slack-users). */
export interface SlackUserMappings {
  getSlackUser(slackUserId: string): Promise<SlackUserMapping | undefined>;
  putSlackUser(mapping: SlackUserMapping): Promise<void>;
  /** False when there was none. */
  deleteSlackUser(slackUserId: string): Promise<boolean>;
  listSlackUsersPage(options: PageRequest): Promise<{ items: SlackUserMapping[]; cursor?: string }>;
}

/** The Slack channel of a deployment: its API, what it posted, where cards go and where they link. */
export interface SlackChannel {
  readonly api: SlackApi;
  readonly messages: SlackMessageStore;
  readonly routes: readonly SlackRoute[];
  /** The card's page on the inbox (the hosted page's deep link). */
  readonly cardUrl: (runId: string) => string;
}
