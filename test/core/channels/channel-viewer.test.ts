import { describe, expect, it } from 'vitest';
import { CHANNEL_VIEWER_ID, deriveChannelViewer } from '../../../lambdas/core/channels/channel-viewer.js';
import { InMemoryUserDirectory } from '../../support/in-memory-user-directory.js';

const users = new InMemoryUserDirectory([
  {
    userId: 'ana',
    grants: ['agent_approve'],
    groups: ['finance'],
    pageAccess: ['12', '14'],
    languageAccess: '*',
    toolAccess: '*',
  },
  {
    userId: 'ben',
    grants: ['agent_approve'],
    groups: ['finance'],
    pageAccess: ['14', '20'],
    languageAccess: ['en'],
    toolAccess: ['update_page_metadata'],
  },
  { userId: 'cleo', grants: ['agent_approve'], pageAccess: [], languageAccess: [], toolAccess: [] },
  { userId: 'root', grants: ['admin'], pageAccess: '*', languageAccess: '*', toolAccess: '*' },
  // Starts runs, decides none: no part of any audience.
  {
    userId: 'eda',
    grants: ['agent_run'],
    groups: ['finance'],
    pageAccess: [],
    languageAccess: [],
    toolAccess: [],
  },
]);

describe('deriveChannelViewer', () => {
  it('holds only what every approver of the route’s group holds', async () => {
    // Act
    const viewer = await deriveChannelViewer(
      users,
      { approverGroups: ['finance'] },
      { approverGroup: 'finance' },
    );

    // Assess
    expect(viewer).toEqual({
      userId: CHANNEL_VIEWER_ID,
      displayName: '',
      grants: ['agent_approve'],
      pageAccess: ['14'],
      languageAccess: ['en'],
      toolAccess: ['update_page_metadata'],
      groups: ['finance'],
    });
  });

  it('reads a card routed to every approver as its least-privileged approver: one without rights leaves none', async () => {
    // Act
    const viewer = await deriveChannelViewer(users, {}, {});

    // Assess: cleo may decide it and may read nothing
    expect(viewer).toMatchObject({
      pageAccess: [],
      languageAccess: [],
      toolAccess: [],
      grants: ['agent_approve'],
    });
  });

  it('holds nothing when nobody in the route’s audience may decide the card', async () => {
    const viewer = await deriveChannelViewer(
      users,
      { approverGroups: ['legal'] },
      { approverGroup: 'legal' },
    );
    expect(viewer).toMatchObject({ pageAccess: [], languageAccess: [], toolAccess: [] });
  });

  it('reads page after page of users', async () => {
    // Prepare: 250 approvers of one group, all on page 12, one of them also on page 14
    const many = new InMemoryUserDirectory(
      Array.from({ length: 250 }, (_, index) => ({
        userId: `approver-${String(index).padStart(3, '0')}`,
        grants: ['agent_approve' as const],
        groups: ['ops'],
        pageAccess: index === 249 ? ['12'] : ['12', '14'],
        languageAccess: '*' as const,
        toolAccess: '*' as const,
      })),
    );

    // Act
    const viewer = await deriveChannelViewer(many, { approverGroups: ['ops'] }, { approverGroup: 'ops' });

    // Assess
    expect(viewer.pageAccess).toEqual(['12']);
    expect(viewer.languageAccess).toBe('*');
  });
});
