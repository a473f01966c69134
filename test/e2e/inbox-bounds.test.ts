import { beforeAll, describe, expect, it } from 'vitest';
import { CARD_ARGUMENT_VALUE_CHARACTERS } from '../../lambdas/core/previews/excerpt-arguments.js';
import { INBOX_PAGE_MAX_BYTES } from '../../lambdas/core/runs/list-inbox.js';
import { MAX_TURN_ARGUMENTS_BYTES } from '../../lambdas/core/runs/take-model-turn.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import {
  apiClientWithToken,
  type ResponseJson,
  startRunAndSettle,
  useTestRuntime,
} from '../support/local-runtime.js';
import { readRunEvents } from '../support/server-sent-events.js';
import { createUser } from './approvers-support.js';

/**
 * Issue #9, item 7: bounded cards and pages. Twenty runs each propose a turn near the 200 KB
 * limit (ten calls of four 4,800-character fields, through the scripted model and a task
 * whose template repeats the input); the inbox must stay within its byte bound per page, its
 * cursor must yield every other card, and every argument a card cuts must be one request away.
 */
const RUNS = 20;
const CALLS_PER_TURN = 10;
const FIELDS = ['title', 'description', 'keywords', 'author'] as const;
const VALUE_CHARACTERS = 4_800;

const BULKY_TASK = {
  taskId: 'bulky-metadata',
  label: 'Bulky metadata',
  configurationId: 'demo-scripted',
  promptTemplate: Array.from(
    { length: CALLS_PER_TURN },
    (_, call) =>
      `set the title of page bulk-${call} to '{{input}}' and the description to '{{input}}' ` +
      `and the keywords to '{{input}}' and the author to '{{input}}'`,
  ).join(' and '),
};

/** A distinct value per run, so a card or an argument of one run can never pass for another's. */
function inputOf(run: number): string {
  const head = `run ${run} `;
  return `${head}${'abcdefghij'.repeat(VALUE_CHARACTERS / 10)}`.slice(0, VALUE_CHARACTERS);
}

function proposedArguments(run: number, call: number): Record<string, string> {
  return { pageId: `bulk-${call}`, ...Object.fromEntries(FIELDS.map((field) => [field, inputOf(run)])) };
}

describe('bounded cards and pages (issue #9, item 7)', () => {
  // 200 full-argument reads in a row: above the per-client default burst (100), which this test
  // does not measure (test/local/local-throttling.test.ts does).
  const runtime = useTestRuntime({ throttling: { rateLimit: 1_000, burstLimit: 1_000 } });
  /** Run id → the run's number (which input it was given). */
  const runs = new Map<string, number>();

  beforeAll(async () => {
    const task = await runtime.client('admin').putTask({ path: { id: BULKY_TASK.taskId }, body: BULKY_TASK });
    expect(task.status).toBe(200);
    for (let run = 0; run < RUNS; run += 1) {
      const { runId, view } = await startRunAndSettle(runtime, inputOf(run), { taskId: BULKY_TASK.taskId });
      expect(view.status, view.failureReason).toBe('waiting');
      runs.set(runId, run);
    }
  }, 120_000);

  /** Every page of GET /inbox as the approver, following the cursor; each answer's size in bytes. */
  async function readAllPages(
    accept?: string,
  ): Promise<Array<{ bytes: number; runIds: string[]; body: ResponseJson }>> {
    const pages: Array<{ bytes: number; runIds: string[]; body: ResponseJson }> = [];
    let cursor: string | undefined;
    do {
      const answer = await runtime
        .client('approver')
        .listInbox({ query: { limit: RUNS, cursor }, ...(accept ? { headers: { accept } } : {}) });
      expect(answer.status, answer.text.slice(0, 300)).toBe(200);
      const html = accept === 'text/html';
      const runIds = html
        ? [...answer.text.matchAll(/<article class="card" data-run-id="([^"]+)"/g)].map(
            (match) => match[1] as string,
          )
        : bodyOf(answer).cards.map((card) => card.runId);
      cursor = html ? /data-cursor="([^"]+)"/.exec(answer.text)?.[1] : bodyOf(answer).cursor;
      pages.push({
        bytes: Buffer.byteLength(answer.text, 'utf8'),
        runIds,
        body: html ? answer.text : answer.body,
      });
    } while (cursor !== undefined && pages.length <= RUNS);
    return pages;
  }

  it('proposes turns near the per-turn limit, twenty of which are far past one bounded page', async () => {
    // Act
    const turnBytes = Buffer.byteLength(
      JSON.stringify(Array.from({ length: CALLS_PER_TURN }, (_, call) => proposedArguments(0, call))),
    );

    // Assess
    expect(turnBytes).toBeLessThanOrEqual(MAX_TURN_ARGUMENTS_BYTES);
    expect(turnBytes).toBeGreaterThan(MAX_TURN_ARGUMENTS_BYTES * 0.95);
    expect(RUNS * turnBytes).toBeGreaterThan(3 * INBOX_PAGE_MAX_BYTES);
    expect(runs.size).toBe(RUNS);
  });

  it('stops each JSON page within its byte bound and yields every card once through the cursor', async () => {
    // Act
    const pages = await readAllPages();

    // Assess
    expect(pages.length).toBeGreaterThan(1);
    expect(pages[0]?.runIds.length).toBeLessThan(RUNS); // the byte bound ended the page, not the count
    for (const page of pages) expect(page.bytes).toBeLessThanOrEqual(INBOX_PAGE_MAX_BYTES);
    const listed = pages.flatMap((page) => page.runIds);
    expect(listed.sort()).toEqual([...runs.keys()].sort());
  });

  it('stops each HTML page within its byte bound and yields every card once through the cursor', async () => {
    // Act
    const pages = await readAllPages('text/html');

    // Assess
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) expect(page.bytes).toBeLessThanOrEqual(INBOX_PAGE_MAX_BYTES);
    expect(pages.flatMap((page) => page.runIds).sort()).toEqual([...runs.keys()].sort());
    const firstPage = String(pages[0]?.body);
    expect(firstPage).toContain(escapeForHtml(TEXTS.argumentTextCut(VALUE_CHARACTERS)));
    expect(firstPage).toContain(
      `<button type="button" class="full-arguments">${TEXTS.showFullArguments}</button>`,
    );
  });

  it('excerpts every long value on the card with its full size, and serves each call whole and as proposed', async () => {
    // Prepare
    const cards = (await readAllPages()).flatMap((page) => page.body.cards as ResponseJson[]);

    for (const card of cards) {
      const run = runs.get(card.runId) as number;
      expect(card.pendingTools).toHaveLength(CALLS_PER_TURN);
      for (const call of card.pendingTools) {
        const proposed = proposedArguments(run, call.index);
        // The card: a prefix of each field, and a typed cut stating its full size.
        expect(call.argumentsExcerpt.totalCharacters).toBe(JSON.stringify(proposed).length);
        for (const cut of call.argumentsExcerpt.cuts) {
          expect(cut).toMatchObject({ kind: 'text', totalCharacters: VALUE_CHARACTERS });
          const field = cut.path[0] as (typeof FIELDS)[number];
          expect(cut.shownCharacters).toBeLessThanOrEqual(CARD_ARGUMENT_VALUE_CHARACTERS);
          expect(proposed[field]?.startsWith(call.arguments[field])).toBe(true);
          expect(call.arguments[field]).toHaveLength(cut.shownCharacters);
        }

        // Act
        const full = await runtime
          .client('approver')
          .getCall({ path: { id: card.runId, index: call.index } });

        // Assess
        expect(full.status).toBe(200);
        expect(full.body).toEqual({
          runId: card.runId,
          turn: card.turn,
          digest: card.digest,
          index: call.index,
          tool: 'update_page_metadata',
          arguments: proposed,
        });
      }
    }
    expect(cards).toHaveLength(RUNS);
  });

  it('shows the same excerpt on the run view and in the awaiting_approval event as in the inbox', async () => {
    // Prepare
    const [runId] = [...runs.keys()] as [string];
    const inboxCard = (await readAllPages())
      .flatMap((page) => page.body.cards as ResponseJson[])
      .find((card) => card.runId === runId);
    const excerptsOf = (pendingTools: ResponseJson[] | undefined) =>
      pendingTools?.map((call) => ({ arguments: call.arguments, argumentsExcerpt: call.argumentsExcerpt }));

    // Act
    const view = await runtime.client('editor').getRun({ path: { id: runId } });
    const stream = await readRunEvents(runtime, runId, 'editor');

    // Assess
    const awaiting = stream.events.find((event) => event.event === 'awaiting_approval');
    expect(excerptsOf(bodyOf(view).pendingTools)).toEqual(excerptsOf(inboxCard.pendingTools));
    expect(excerptsOf(awaiting?.data.pendingTools)).toEqual(excerptsOf(inboxCard.pendingTools));
    expect(bodyOf(view).pendingTools?.[0]?.argumentsExcerpt?.cuts.length).toBeGreaterThan(0);
  });

  it('serves the whole arguments as HTML for the page, carrying the digest the page checks', async () => {
    // Prepare
    const [runId] = [...runs.keys()] as [string];
    const digest = (await runtime.dependencies.runs.getCard(runId))?.digest;

    // Act
    const answer = await runtime
      .client('approver')
      .getCall({ path: { id: runId, index: 3 }, headers: { accept: 'text/html' } });

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(
      new RegExp(`^<pre class="arguments" data-arguments="full" data-digest="${digest}">`),
    );
    expect(answer.text).toContain(
      `<bdi>&quot;description&quot;</bdi>: <bdi>&quot;${inputOf(runs.get(runId) as number)}&quot;</bdi>`,
    );
    expect(answer.text).not.toContain('class="cut');
  });

  describe('the status codes of GET /runs/{id}/calls/{index}', () => {
    it('answers 401 without a valid token', async () => {
      const [runId] = [...runs.keys()] as [string];
      const missing = await runtime.client().getCall({ path: { id: runId, index: 0 } });
      const forged = await runtime
        .client()
        .getCall({ path: { id: runId, index: 0 }, headers: { authorization: 'Bearer not-a-token' } });
      expect(missing.status).toBe(401);
      expect(forged.status).toBe(401);
    });

    it('answers 403 to a user who may not read the card, whether or not the run exists, and 200 to its owner', async () => {
      // Prepare
      const [runId] = [...runs.keys()] as [string];
      const outsider = await createUser(runtime, {
        userId: 'outsider',
        displayName: 'Out Sider',
        grants: ['agent_run'],
        pageAccess: '*',
        languageAccess: '*',
        toolAccess: [],
      });
      const asOutsider = (id: string) =>
        apiClientWithToken(runtime.url, outsider).getCall({ path: { id, index: 0 } });

      // Act
      const existing = await asOutsider(runId);
      const unknown = await asOutsider('00000000-0000-4000-8000-000000000000');
      const owner = await runtime.client('editor').getCall({ path: { id: runId, index: 0 } });

      // Assess
      expect(existing.status).toBe(403);
      expect(refusalOf(existing).error.message).toBe(TEXTS.grantRefused('agent_approve'));
      expect(existing.text).not.toContain('abcdefghij');
      expect(unknown.status).toBe(403);
      expect(owner.status).toBe(200);
    });

    it('answers 404 for an unknown run, a malformed run id, a run that no longer waits, and an index past the card', async () => {
      // Prepare
      const [, decidedRunId, runId] = [...runs.keys()] as [string, string, string];
      const digest = (await runtime.dependencies.runs.getCard(decidedRunId))?.digest;
      const rejected = await runtime
        .client('approver')
        .decideRun({ path: { id: decidedRunId }, body: { digest, decision: 'reject' } });
      expect(rejected.status).toBe(200);
      runs.delete(decidedRunId);

      // Act
      const unknown = await runtime
        .client('approver')
        .getCall({ path: { id: '00000000-0000-4000-8000-000000000000', index: 0 } });
      const malformed = await runtime.client('approver').getCall({ path: { id: 'not_a_run!', index: 0 } });
      const decided = await runtime.client('approver').getCall({ path: { id: decidedRunId, index: 0 } });
      const pastTheCard = await runtime
        .client('approver')
        .getCall({ path: { id: runId, index: CALLS_PER_TURN } });

      // Assess
      for (const answer of [unknown, malformed, decided]) {
        expect(answer.status).toBe(404);
        expect(refusalOf(answer).error.message).toBe(TEXTS.runNotFound);
      }
      expect(pastTheCard.status).toBe(404);
      expect(refusalOf(pastTheCard).error).toMatchObject({
        field: 'index',
        message: TEXTS.callNotOnCard(CALLS_PER_TURN, CALLS_PER_TURN),
      });
    });

    it.each(['abc', '-1', '01', '1.5', '1e3', '9999999'])(
      'answers 400 naming the index for index %j',
      async (index) => {
        const [runId] = [...runs.keys()] as [string];
        // raw: an index the path schema refuses, sent as written
        const answer = await runtime.sendRaw('GET', `/runs/${runId}/calls/${index}`, { as: 'approver' });
        expect(answer.status).toBe(400);
        expect(answer.json.error).toEqual({
          code: 'bad-request',
          field: 'index',
          message: TEXTS.callIndexInvalid,
        });
      },
    );
  });
});

function escapeForHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
