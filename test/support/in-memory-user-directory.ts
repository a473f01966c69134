import {
  type Away,
  adminUserProfileSchema,
  type UserProfile,
  userProfileSchema,
} from '../../lambdas/core/identity.js';
import type { ConditionalOutcome, PageRequest, UserDirectory } from '../../lambdas/core/ports.js';
import { InMemoryCollection } from './in-memory-collection.js';

/**
 * An in-memory `UserDirectory` for unit tests: users parsed with the schema defaults as the
 * DynamoDB directory stores them, in id order with an opaque cursor.
 *
 * @example
 * const users = new InMemoryUserDirectory([{ userId: 'olivia', grants: ['agent_run'] }]);
 */
export class InMemoryUserDirectory implements UserDirectory {
  private readonly users = new InMemoryCollection<UserProfile>((user) => user.userId);

  public constructor(users: ReadonlyArray<Parameters<typeof userProfileSchema.parse>[0]> = []) {
    for (const user of users) this.users.put(userProfileSchema.parse(user));
  }

  public async getUser(userId: string): Promise<UserProfile | undefined> {
    return this.users.get(userId);
  }

  public async putUser(user: UserProfile): Promise<void> {
    // As on DynamoDB: the profile's fields are written, delegation stays as it was.
    const existing = this.users.get(user.userId);
    this.users.put(
      userProfileSchema.parse({
        ...adminUserProfileSchema.parse(user),
        ...(existing?.away ? { away: existing.away } : {}),
        ...(existing?.delegatedBy ? { delegatedBy: existing.delegatedBy } : {}),
      }),
    );
  }

  public async setAway(userId: string, away: Away | undefined): Promise<ConditionalOutcome> {
    const existing = this.users.get(userId);
    if (!existing) return { kind: 'condition-failed' };
    const { away: _before, ...rest } = existing;
    this.users.put({ ...rest, ...(away ? { away } : {}) });
    return { kind: 'written' };
  }

  public async pointDelegate(delegate: string, delegator: string, change: 'add' | 'remove'): Promise<void> {
    const existing = this.users.get(delegate);
    if (!existing) return;
    const pointers = new Set(existing.delegatedBy ?? []);
    if (change === 'add') pointers.add(delegator);
    else pointers.delete(delegator);
    const { delegatedBy: _before, ...rest } = existing;
    this.users.put({ ...rest, ...(pointers.size > 0 ? { delegatedBy: [...pointers].sort() } : {}) });
  }

  public async listUsers(): Promise<UserProfile[]> {
    return this.users.list();
  }

  public async listUsersPage(options: PageRequest): Promise<{ items: UserProfile[]; cursor?: string }> {
    return this.users.page(options);
  }

  public async deleteUser(userId: string): Promise<boolean> {
    return this.users.delete(userId);
  }
}
