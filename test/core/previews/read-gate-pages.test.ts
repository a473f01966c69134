import { describe, expect, it } from 'vitest';
import type { ApprovalCard } from '../../../lambdas/core/approvals/approval-card.js';
import type { CardView } from '../../../lambdas/core/approvals/card-reader.js';
import { STORED_CARD_SCHEMA_VERSION, type StoredCard } from '../../../lambdas/core/approvals/stored-card.js';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import {
  type Metrics,
  type RunRepository,
  type StateSealer,
  silentLogger,
  systemClock,
} from '../../../lambdas/core/ports.js';
import { READ_GATE_CACHE_TTL_MS, ReadGatePageCache } from '../../../lambdas/core/previews/read-gate-pages.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { type Tool, ToolRegistry } from '../../../lambdas/core/tools/tool.js';
import { updatePageMetadataTool } from '../../../lambdas/tools/update-page-metadata.js';
import { InMemoryPageStore, type PageInput } from '../../support/in-memory-page-store.js';
import { createUser } from '../../tools/page-tool-fixtures.js';

const approver = createUser({
  userId: 'approver',
  grants: ['agent_approve'],
  pageAccess: '*',
  languageAccess: '*',
});
const otherApprover = createUser({
  userId: 'other-approver',
  grants: ['agent_approve'],
  pageAccess: ['p-1'],
  languageAccess: '*',
});

const manyPages: PageInput[] = Array.from({ length: 60 }, (_, index) => ({
  pageId: `p-${index}`,
  language: 'en',
  title: `Page ${index}`,
}));

function fakeClock(start = Date.parse('2026-03-01T10:00:00Z')) {
  let now = start;
  return { now: () => new Date(now), advance: (milliseconds: number) => (now += milliseconds) };
}

/**
 * Cards "sealed" as plain JSON: the inbox's read path without the cryptography. Unsealing
 * takes a different few milliseconds per card, as decryption does, so cards are not ready
 * in the same tick by accident.
 */
function plainSealer(): StateSealer {
  let unsealed = 0;
  return {
    seal: async (_purpose, _runId, plaintext) => plaintext,
    unseal: async (_purpose, _runId, sealed) => {
      unsealed += 1;
      await new Promise((resolve) => setTimeout(resolve, unsealed % 5));
      return sealed;
    },
  };
}

function waitingCards(count: number, callsPerCard: number): StoredCard[] {
  return Array.from({ length: count }, (_, cardIndex) => {
    const runId = `run-${cardIndex}`;
    const pendingCalls = Array.from({ length: callsPerCard }, (_, index) => ({
      index,
      tool: 'update_page_metadata',
      arguments: { pageId: `p-${(cardIndex * callsPerCard + index) % manyPages.length}`, title: 'New' },
      offered: true,
      preview: { lines: ['would change'], failed: false },
    }));
    const card: ApprovalCard = { schemaVersion: 4, runId, turn: 1, digest: `sha256:${runId}`, pendingCalls };
    return {
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      runId,
      owner: 'editor',
      label: 'Page assistant',
      configurationId: 'demo',
      turn: 1,
      digest: card.digest,
      pausedAt: '2026-03-01T09:00:00Z',
      expiresAt: '2026-03-08T09:00:00Z',
      toolNames: ['update_page_metadata'],
      writeToolNames: ['update_page_metadata'],
      fourEyes: false,
      revealRejectionReason: false,
      state: 'open',
      sealedCard: new TextEncoder().encode(JSON.stringify(card)),
      sealedToken: new Uint8Array(),
    };
  });
}

function inboxOf(cards: StoredCard[], pages: InMemoryPageStore) {
  const runs = { listWaitingCards: async () => ({ cards }) } as unknown as RunRepository;
  const dependencies = {
    runs,
    sealer: plainSealer(),
    tools: new ToolRegistry([updatePageMetadataTool as Tool]),
    pages,
    logger: silentLogger,
    metrics: { count() {}, observe() {} } satisfies Metrics,
    clock: systemClock,
    executions: {} as never,
    users: { getUser: async () => undefined },
  };
  // Every card here opens: the entries are cards, never placeholders.
  return async (viewer: UserProfile) =>
    (await listInbox(dependencies, viewer, { limit: 100 })) as { cards: CardView[] };
}

const reads = (pages: InMemoryPageStore) => pages.callCounts.getPage + pages.callCounts.getPages;

describe('the read gate at scale', () => {
  it('reads the pages of a whole inbox page with one batched read, and none again for the same viewer', async () => {
    // Prepare: 50 cards with two previewing calls each.
    const pages = new InMemoryPageStore(manyPages);
    const render = inboxOf(waitingCards(50, 2), pages);

    // Act
    const first = await render(approver);
    const afterFirst = { ...pages.callCounts };
    const second = await render(approver);

    // Assess
    expect(first.cards).toHaveLength(50);
    expect(first.cards.flatMap((card) => card.pendingTools.map((tool) => tool.preview.status))).toEqual(
      Array.from({ length: 100 }, () => 'shown'),
    );
    expect(afterFirst).toMatchObject({ getPages: 1, getPage: 0 });
    expect(second.cards[49]?.pendingTools[1]?.preview.status).toBe('shown');
    expect(pages.callCounts).toMatchObject({ getPages: 1, getPage: 0 });
  });

  it('keeps each viewer apart: another viewer pays their own one read and gets their own answers', async () => {
    // Prepare
    const pages = new InMemoryPageStore(manyPages);
    const render = inboxOf(waitingCards(3, 1), pages);
    await render(approver);

    // Act
    const other = await render(otherApprover);

    // Assess
    expect(pages.callCounts.getPages).toBe(2);
    expect(other.cards.map((card) => card.pendingTools[0]?.preview.status)).toEqual([
      'withheld',
      'shown',
      'withheld',
    ]);
  });
});

describe('ReadGatePageCache', () => {
  it('coalesces the reads of one tick into one getPages call and answers each caller', async () => {
    // Prepare
    const pages = new InMemoryPageStore(manyPages);
    const gate = new ReadGatePageCache(pages).forViewer(approver);

    // Act
    const found = await Promise.all(['p-1', 'p-2', 'p-1', 'missing'].map((pageId) => gate.getPage(pageId)));

    // Assess
    expect(found.map((page) => page?.title)).toEqual(['Page 1', 'Page 2', 'Page 1', undefined]);
    expect(pages.callCounts).toMatchObject({ getPages: 1, getPage: 0 });
  });

  it(`reads again once the ${READ_GATE_CACHE_TTL_MS / 1000}-second bound has passed`, async () => {
    // Prepare
    const clock = fakeClock();
    const pages = new InMemoryPageStore(manyPages);
    const cache = new ReadGatePageCache(pages, { clock });
    await cache.forViewer(approver).getPage('p-1');

    // Act
    clock.advance(READ_GATE_CACHE_TTL_MS - 1);
    await cache.forViewer(approver).getPage('p-1');
    const withinBound = reads(pages);
    clock.advance(2);
    await cache.forViewer(approver).getPage('p-1');

    // Assess
    expect(withinBound).toBe(1);
    expect(reads(pages)).toBe(2);
  });

  it('caches nothing from a failed read, so the next render asks again', async () => {
    // Prepare
    const pages = new InMemoryPageStore(manyPages);
    let failNext = true;
    const flaky = Object.assign(Object.create(pages) as InMemoryPageStore, {
      getPages: async (pageIds: readonly string[]) => {
        if (failNext) {
          failNext = false;
          throw new Error('throttled');
        }
        return pages.getPages(pageIds);
      },
    });
    const cache = new ReadGatePageCache(flaky);

    // Act
    const failed = await cache
      .forViewer(approver)
      .getPage('p-1')
      .catch((error: Error) => error.message);
    const retried = await cache.forViewer(approver).getPage('p-1');

    // Assess
    expect(failed).toBe('throttled');
    expect(retried?.title).toBe('Page 1');
  });

  it('bounds the viewers it remembers, dropping the least recently seen', async () => {
    // Prepare
    const pages = new InMemoryPageStore(manyPages);
    const cache = new ReadGatePageCache(pages, { maxViewers: 2 });
    const viewer = (userId: string) => ({ userId });
    await cache.forViewer(viewer('a')).getPage('p-1');
    await cache.forViewer(viewer('b')).getPage('p-1');
    await cache.forViewer(viewer('a')).getPage('p-1'); // a is now the most recent
    await cache.forViewer(viewer('c')).getPage('p-1'); // evicts b

    // Act
    const before = reads(pages);
    await cache.forViewer(viewer('a')).getPage('p-1');
    const afterKept = reads(pages);
    await cache.forViewer(viewer('b')).getPage('p-1');

    // Assess
    expect(afterKept).toBe(before);
    expect(reads(pages)).toBe(before + 1);
  });
});
