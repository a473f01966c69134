import type { UserProfile } from '../identity.js';
import type { UserDirectory } from '../ports.js';

/** Users read per page: the admin list's page size. */
const USERS_PAGE_SIZE = 100;

/**
 * Every user record, page by page: who a channel reaches is found among them (routing and grants
 * are on the records, and the directory has no index by group). One query per 100 users.
 *
 * @example
 * const approvers = (await listEveryUser(users)).filter((user) => hasGrant(user, 'agent_approve'));
 */
export async function listEveryUser(users: Pick<UserDirectory, 'listUsersPage'>): Promise<UserProfile[]> {
  const everyone: UserProfile[] = [];
  let cursor: string | undefined;
  do {
    const page = await users.listUsersPage({
      limit: USERS_PAGE_SIZE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    everyone.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return everyone;
}
