import { type UserProfile, userProfileSchema } from '../../lambdas/core/identity.js';
import type { PageRequest, UserDirectory } from '../../lambdas/core/ports.js';
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
    this.users.put(userProfileSchema.parse(user));
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
