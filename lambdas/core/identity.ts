import * as z from 'zod/mini';
import { CountersignError } from './errors.js';
import { TEXTS } from './texts.js';

/** What a user may do in countersign. Grants are data (user records), not code. */
export const GRANTS = ['agent_run', 'agent_approve', 'admin'] as const;
export type Grant = (typeof GRANTS)[number];

/** `'*'` means every page (or every language); otherwise an explicit allow-list. */
export const accessListSchema = z.union([
  z.literal('*'),
  z.array(z.string().check(z.minLength(1), z.maxLength(200))).check(z.maxLength(10_000)),
]);
export type AccessList = z.infer<typeof accessListSchema>;

const userIdSchema = z.string().check(z.minLength(1), z.maxLength(200));

/**
 * An approver away (delegation): until `until`, the cards routed to them also reach `delegate`,
 * who decides them acting for them. Set by the approver themself or an admin (`setBy`).
 */
export const awaySchema = z.object({
  delegate: userIdSchema,
  until: z.string(),
  setBy: userIdSchema,
  setAt: z.string(),
});
export type Away = z.infer<typeof awaySchema>;

/** A user record's fields an admin writes (PUT /admin/users/{id}); delegation has its own route. */
const profileFields = {
  userId: userIdSchema,
  displayName: z._default(z.string().check(z.maxLength(200)), ''),
  grants: z._default(z.array(z.enum(GRANTS)), []),
  pageAccess: z._default(accessListSchema, []),
  languageAccess: z._default(accessListSchema, []),
  /** Tools whose writes this user may release as an approver (tool-level authority). */
  toolAccess: z._default(accessListSchema, []),
  /** Groups the user belongs to (data, like grants): configuration access lists may name them. */
  groups: z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(200))).check(z.maxLength(100))),
  /** Where the email channel mails the cards this user may decide (docs/approvers.md, "Email"). Absent: no mail. */
  email: z.optional(z.string().check(z.maxLength(254), z.email())),
  /**
   * Digest mode: at most one mail per this many minutes (5 to 1,440), listing every card that
   * waited meanwhile. Absent: one mail per card.
   */
  emailDigestMinutes: z.optional(z.number().check(z.int(), z.gte(5), z.lte(1440))),
};

/** The user record as an admin writes it: everything but delegation, which PUT leaves as it was. */
export const adminUserProfileSchema = z.object(profileFields);

export const userProfileSchema = z.object({
  ...profileFields,
  /** Away with a delegate until a date (delegation); absent: not away. */
  away: z.optional(awaySchema),
  /**
   * Who has named this user their delegate, sorted: where the inbox looks for the cards they
   * decide acting for someone. A pointer only: each delegator's own `away` is what counts.
   */
  delegatedBy: z.optional(z.array(userIdSchema).check(z.maxLength(100))),
});

/**
 * A user as the domain sees them: who they are, what they may do, which pages and
 * languages they may touch. A run executes under its owner's profile (the acting user);
 * a card is rendered for a viewer's profile. Never an ambient identity.
 */
export type UserProfile = z.infer<typeof userProfileSchema>;

export function hasGrant(user: UserProfile | undefined, grant: Grant): boolean {
  if (!user) return false;
  return user.grants.includes(grant) || user.grants.includes('admin');
}

/** Refuses (`forbidden`, naming the grant) a user who does not hold `grant`; admins hold every grant. */
export function requireGrant(user: UserProfile | undefined, grant: Grant): void {
  if (!hasGrant(user, grant)) throw new CountersignError('forbidden', TEXTS.grantRefused(grant));
}

export function isAdmin(user: UserProfile | undefined): boolean {
  return user?.grants.includes('admin') ?? false;
}

export function allows(list: AccessList, item: string): boolean {
  return list === '*' || list.includes(item);
}
