import { beforeAll, describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard, refusalOf } from '../support/api-answers.js';
import { type ResponseJson, useTestRuntime } from '../support/local-runtime.js';
import { waitingRun } from './approvers-support.js';

describe('approver decisions and the inbox over HTTP: every status code', () => {
  const runtime = useTestRuntime();

  describe("each demo user's view of the inbox", () => {
    let runId: string;

    beforeAll(async () => {
      await runtime.dependencies.pages.updateMetadata('12', { description: 'Visible old value' }, 'test');
      // An older card first, so the inbox has a second page behind the newest one.
      await waitingRun(runtime, "Set the keywords of page 12 to 'older card'");
      ({ runId } = await waitingRun(runtime, "Set the description of page 12 to 'Visible new value'"));
    });

    async function cardFor(
      as: string,
    ): Promise<{ status: number; card: ResponseJson; cards: ResponseJson[] }> {
      const response = await runtime.client(as).listInbox({ query: { limit: 100 } });
      const cards = response.ok ? (response.body?.cards ?? []) : [];
      return {
        status: response.status,
        cards,
        card: cards.find((candidate: ResponseJson) => candidate.runId === runId),
      };
    }

    it('refuses the editor (no agent_approve) with 403', async () => {
      // Act
      const response = await runtime.client('editor').listInbox();

      // Assess
      expect(response.status).toBe(403);
      expect(refusalOf(response).error.message).toBe(TEXTS.grantRefused('agent_approve'));
    });

    it('shows the approver the card with the preview of what the write replaces', async () => {
      // Act
      const { status, card } = await cardFor('approver');

      // Assess
      expect(status).toBe(200);
      expect(card).toMatchObject({ runId, owner: 'editor', label: 'Update page metadata' });
      expect(card.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(card.pendingTools[0]).toMatchObject({
        index: 0,
        tool: 'update_page_metadata',
        arguments: { pageId: '12', description: 'Visible new value' },
        registered: true,
        preview: { status: 'shown', caveat: TEXTS.previewCaveat },
      });
      expect(card.pendingTools[0].preview.lines.join('\n')).toContain('Visible old value');
    });

    it('shows the operations approver the card with the preview withheld', async () => {
      // Act
      const { status, card } = await cardFor('ops-approver');

      // Assess
      expect(status).toBe(200);
      expect(card.pendingTools[0].arguments).toEqual({ pageId: '12', description: 'Visible new value' });
      expect(card.pendingTools[0].preview).toEqual({ status: 'withheld', message: TEXTS.previewWithheld });
      expect(JSON.stringify(card)).not.toContain('Visible old value');
    });

    it('shows the admin every waiting card with its preview', async () => {
      // Act
      const admin = await cardFor('admin');
      const approver = await cardFor('approver');

      // Assess
      expect(admin.status).toBe(200);
      expect(admin.card.pendingTools[0].preview.status).toBe('shown');
      expect(admin.cards.map((card: ResponseJson) => card.runId).sort()).toEqual(
        approver.cards.map((card: ResponseJson) => card.runId).sort(),
      );
      for (const card of admin.cards) {
        for (const tool of card.pendingTools) expect(tool.preview.status).not.toBe('withheld');
      }
    });

    it('pages newest first with an opaque cursor, and refuses a bad limit with 400', async () => {
      // Act
      const first = await runtime.client('approver').listInbox({ query: { limit: 1 } });
      const second = await runtime
        .client('approver')
        .listInbox({ query: { limit: 1, cursor: bodyOf(first).cursor } });
      // raw: a limit the query schema refuses, on purpose
      const badLimit = await runtime.sendRaw('GET', '/inbox?limit=0', { as: 'approver' });

      // Assess
      expect(bodyOf(first).cards).toHaveLength(1);
      expect(bodyOf(first).cards[0]?.runId).toBe(runId);
      expect(bodyOf(second).cards).toHaveLength(1);
      expect(
        openedCard(bodyOf(second).cards[0]).pausedAt <= openedCard(bodyOf(first).cards[0]).pausedAt,
      ).toBe(true);
      expect(badLimit.status).toBe(400);
      expect(badLimit.json.error.field).toBe('query.limit');
    });
  });
});
