import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import { DynamoUserDirectory } from '../../lambdas/adapters/dynamo/user-directory.js';
import { type Away, userProfileSchema } from '../../lambdas/core/identity.js';
import type { UserDirectory } from '../../lambdas/core/ports.js';
import { startDynalite } from '../support/dynalite.js';
import { InMemoryUserDirectory } from '../support/in-memory-user-directory.js';

interface DirectoryUnderContract {
  readonly users: UserDirectory;
  close(): Promise<void>;
}

async function startDynamoDirectory(): Promise<DirectoryUnderContract> {
  const dynamo = await startDynalite();
  return {
    users: new DynamoUserDirectory({ client: dynamo.documentClient, tableName: dynamo.tableName }),
    close: () => dynamo.stop(),
  };
}

async function startInMemoryDirectory(): Promise<DirectoryUnderContract> {
  return { users: new InMemoryUserDirectory(), close: async () => {} };
}

const AWAY: Away = {
  delegate: 'dave',
  until: '2026-03-20T18:00:00.000Z',
  setBy: 'alice',
  setAt: '2026-03-01T10:00:00.000Z',
};

const approver = (userId: string, overrides: Record<string, unknown> = {}) =>
  userProfileSchema.parse({ userId, grants: ['agent_approve'], groups: ['finance'], ...overrides });

describe.each([
  { name: 'DynamoUserDirectory on dynalite', start: startDynamoDirectory },
  { name: 'InMemoryUserDirectory', start: startInMemoryDirectory },
])('user delegation contract: $name', ({ start }) => {
  let directory: DirectoryUnderContract;

  beforeAll(async () => {
    directory = await start();
  });
  afterAll(async () => {
    await directory.close();
  });

  it('keeps an away and its pointer through an admin’s PUT of either record', async () => {
    // Prepare
    const { users } = directory;
    await users.putUser(approver('alice'));
    await users.putUser(approver('dave', { groups: ['ops'] }));
    await users.pointDelegate('dave', 'alice', 'add');
    await users.setAway('alice', AWAY);

    // Act: the admin rewrites both records (no delegation in an admin's body), dropping alice's groups
    await users.putUser(approver('alice', { groups: undefined, displayName: 'Alice' }));
    await users.putUser(approver('dave', { groups: ['ops', 'leads'] }));
    const alice = await users.getUser('alice');
    const dave = await users.getUser('dave');

    // Assess
    expect(alice).toMatchObject({ displayName: 'Alice', away: AWAY });
    expect(alice?.groups).toBeUndefined();
    expect(dave).toMatchObject({ groups: ['ops', 'leads'], delegatedBy: ['alice'] });
  });

  it('counts each delegator once among the pointers, and drops the last one', async () => {
    // Prepare
    const { users } = directory;
    await users.putUser(approver('erin'));

    // Act
    await users.pointDelegate('erin', 'zoe', 'add');
    await users.pointDelegate('erin', 'ben', 'add');
    await users.pointDelegate('erin', 'zoe', 'add');
    const both = (await users.getUser('erin'))?.delegatedBy;
    await users.pointDelegate('erin', 'zoe', 'remove');
    await users.pointDelegate('erin', 'ben', 'remove');
    const none = (await users.getUser('erin'))?.delegatedBy;

    // Assess
    expect(both).toEqual(['ben', 'zoe']);
    expect(none).toBeUndefined();
  });

  it('sets and clears an away only while the record exists, and points from no record to nothing', async () => {
    // Prepare
    const { users } = directory;
    await users.putUser(approver('frank'));

    // Act
    const set = await users.setAway('frank', AWAY);
    const cleared = await users.setAway('frank', undefined);
    const missing = await users.setAway('nobody', AWAY);
    await users.pointDelegate('nobody', 'frank', 'add');

    // Assess
    expect(set).toEqual({ kind: 'written' });
    expect(cleared).toEqual({ kind: 'written' });
    expect((await users.getUser('frank'))?.away).toBeUndefined();
    expect(missing).toEqual({ kind: 'condition-failed' });
    expect(await users.getUser('nobody')).toBeUndefined();
  });
});

describe('user delegation on DynamoDB', () => {
  it('reads a delegate’s pointers with their record, and keeps them through a PUT of it in one write', async () => {
    // Prepare
    const dynamo = await startDynalite();
    const counter = new AwsCallCounter();
    counter.attachTo(dynamo.client);
    const props = { client: dynamo.documentClient, tableName: dynamo.tableName };
    const users = new DynamoUserDirectory(props);
    await users.putUser(approver('dave'));
    await users.pointDelegate('dave', 'alice', 'add');
    counter.reset();

    try {
      // Act
      const user = await users.getUser('dave');
      const writes = (await (async () => {
        counter.reset();
        await users.putUser(approver('dave'));
        return counter.snapshot();
      })()) as Record<string, number>;

      // Assess: a user's PUT is one write, an update that leaves delegation as it is
      expect(user?.delegatedBy).toEqual(['alice']);
      expect(writes).toEqual({ 'DynamoDB:UpdateItem': 1 });
    } finally {
      await dynamo.stop();
    }
  });
});
