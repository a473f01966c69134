import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { type BrowserContext, chromium, type Page, type Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sealJson, unsealJson } from '../../lambdas/core/sealed-json.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import {
  eventually,
  type ResponseJson,
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import { definitionWithApprovalTimeout, startRuntimeWithDefinition } from './approvers-support.js';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  isPageShell,
  problemWithPageAnswer,
  signIn,
} from './inbox-browser-support.js';

describe('the inbox page in headless Chromium', () => {
  let runtime: TestRuntime;
  let userDataDirectory: string;
  let context: BrowserContext;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    userDataDirectory = await mkdtemp(join(tmpdir(), 'countersign-chromium-'));
    context = await chromium.launchPersistentContext(userDataDirectory, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
  });

  const pageAnswerChecks: Array<Promise<string | undefined>> = [];

  afterEach(async () => {
    const problems = (await Promise.all(pageAnswerChecks.splice(0))).filter(Boolean);
    expect(problems).toEqual([]);
  });

  afterAll(async () => {
    await context?.close();
    await rm(userDataDirectory, { recursive: true, force: true });
    await runtime.stop();
    await removeTestData(runtime);
  });

  /**
   * Opens the page in a fresh tab that records alerts and every request it makes, and signs in
   * as `user` through the authorization code flow (the local provider's login page).
   */
  async function openInbox(baseUrl: string, user: string | undefined) {
    const page = await context.newPage();
    const requests: Request[] = [];
    const dialogs: string[] = [];
    page.on('request', (request) => requests.push(request));
    // What the page's own API requests got back is held to the committed OpenAPI document too.
    page.on('response', (response) => {
      if (response.url().startsWith(`${baseUrl}/`)) pageAnswerChecks.push(problemWithPageAnswer(response));
    });
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    // Any script that slipped through escaping would trip one of these.
    // (Browser code as strings: this project's TypeScript has no DOM types.)
    await page.addInitScript({ content: 'window.alert = () => { window.__alerted = true; };' });
    await page.goto(`${baseUrl}/`);
    if (user !== undefined) await signIn(page, user);
    return { page, requests, dialogs };
  }

  function cardOf(page: Page, runId: string) {
    return page.locator(`article.card[data-run-id="${runId}"]`);
  }

  async function cardStatus(page: Page, runId: string): Promise<string> {
    const status = cardOf(page, runId).locator('.status');
    await status.filter({ hasText: /\S/ }).waitFor();
    return (await status.textContent()) ?? '';
  }

  it('shows an empty inbox clearly', async () => {
    // Act
    const { page } = await openInbox(runtime.url, 'approver');
    const empty = page.locator('[data-state=empty]');
    await empty.waitFor();

    // Assess
    expect(await empty.textContent()).toBe('Nothing waits for your decision.');
    await page.close();
  });

  it('lets the approver sign in through the code flow, see the card and approve; the run completes', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(
      runtime,
      "Set the description of page 12 to 'Browser sale'",
    );
    const { page, requests } = await openInbox(runtime.url, 'approver');
    const card = cardOf(page, runId);
    await card.waitFor();

    // Act
    await card.locator('button.approve').click();
    const status = await cardStatus(page, runId);
    const finished = await settle(runtime, runId, 'editor', view.turn);

    // Assess: the card as the approver read it
    expect(await card.locator('h2').textContent()).toBe('Update page metadata');
    expect(await card.locator('pre.arguments').textContent()).toContain('"description": "Browser sale"');
    expect(await card.locator('.preview').textContent()).toContain(TEXTS.previewCaveat);
    expect(await card.getAttribute('data-digest')).toBe(view.digest);
    // ...the decision and its effect
    expect(status).toBe(TEXTS.pageApproved);
    expect(await card.getAttribute('data-state')).toBe('decided');
    expect(finished.status).toBe('completed');
    expect((await runtime.dependencies.pages.getPage('12'))?.description).toBe('Browser sale');
    // ...and how it authenticated: the signed-in approver's bearer token on every data request,
    // no cookie, nothing on a GET
    const apiRequests = requests.filter(
      (request) => request.url().startsWith(runtime.url) && !isPageShell(new URL(request.url()).pathname),
    );
    expect(apiRequests.length).toBeGreaterThanOrEqual(2);
    for (const request of apiRequests) {
      const headers = await request.allHeaders();
      expect(decodeJwt(/^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1] ?? '')).toMatchObject({
        sub: 'approver',
        iss: runtime.issuerUrl,
      });
      expect(headers.cookie).toBeUndefined();
      if (request.method() === 'GET') expect(new URL(request.url()).pathname).toBe('/inbox');
    }
    const decisions = apiRequests.filter((request) => request.url().endsWith('/decision'));
    expect(decisions.map((request) => request.method())).toEqual(['POST']);
    expect(JSON.parse(decisions[0]?.postData() ?? '{}')).toEqual({
      digest: view.digest,
      decision: 'approve',
    });
    expect(await context.cookies()).toEqual([]);
    await page.close();
  });

  it('refuses a ticked call and approves the others in one decision, the reason going to the refused call', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(
      runtime,
      "Set the author of page 12 to 'Tick twelve' and the author of page 14 to 'Tick fourteen'",
    );
    const { page, requests } = await openInbox(runtime.url, 'approver');
    const card = cardOf(page, runId);
    await card.waitFor();

    // Act
    await card.locator('input[name=refuse][value="1"]').check();
    await card.locator('input[name=reason]').fill('Not page 14');
    await card.locator('button.approve').click();
    const status = await cardStatus(page, runId);
    const finished = await settle(runtime, runId, 'editor', view.turn);

    // Assess
    expect(status).toBe(TEXTS.pageApproved);
    const decision = requests.find((request) => request.url().endsWith('/decision'));
    expect(JSON.parse(decision?.postData() ?? '{}')).toEqual({
      digest: view.digest,
      decision: 'approve',
      reason: 'Not page 14',
      calls: [{ index: 1, decision: 'reject' }],
    });
    expect(finished.status).toBe('completed');
    expect((await runtime.dependencies.pages.getPage('12'))?.author).toBe('Tick twelve');
    expect((await runtime.dependencies.pages.getPage('14'))?.author).not.toBe('Tick fourteen');
    await page.close();
  });

  it('shows a <script> in a page title and in tool arguments as text and never runs it', async () => {
    // Prepare
    const titleAttack = `<script>alert('title')</script><img src=x onerror="alert('img')">`;
    const argumentAttack = `<script>alert('arguments')</script><img src=y onerror=alert(2)>`;
    await runtime.dependencies.pages.updateMetadata('12', { title: titleAttack }, 'test');
    const { runId } = await startRunAndSettle(runtime, `Set the title of page 12 to "${argumentAttack}"`);

    // Act
    const { page, dialogs } = await openInbox(runtime.url, 'approver');
    const card = cardOf(page, runId);
    await card.waitFor();
    const injected = await page.evaluate(
      "({ alerted: window.__alerted === true, elements: document.querySelectorAll('#cards script, #cards img').length })",
    );

    // Assess
    expect(await card.locator('pre.arguments').textContent()).toContain(argumentAttack);
    // The preview quotes the page's title JSON-style (its quotes escaped), as text all the same.
    expect(await card.locator('.preview').textContent()).toContain(JSON.stringify(titleAttack));
    expect(injected).toEqual({ alerted: false, elements: 0 });
    expect(dialogs).toEqual([]);
    await page.close();
  });

  /**
   * Where `needle` (its `length` characters from `offset` on) is drawn inside the first element
   * matching `selector` whose text contains `line`: the box of a DOM Range over those characters.
   */
  async function drawnBox(
    page: Page,
    selector: string,
    line: string,
    needle: string,
    offset = 0,
    length = needle.length,
  ) {
    // Browser code as a string: this project's TypeScript has no DOM types.
    const box = await page.evaluate(`(() => {
      const needle = ${JSON.stringify(needle)};
      for (const element of document.querySelectorAll(${JSON.stringify(selector)})) {
        const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
        const nodes = [];
        let text = '';
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          nodes.push({ node, start: text.length });
          text += node.data;
        }
        const at = text.indexOf(needle);
        if (at < 0 || !text.includes(${JSON.stringify(line)})) continue;
        const locate = (position) => {
          const entry = nodes.find((candidate) => position <= candidate.start + candidate.node.data.length);
          return [entry.node, position - entry.start];
        };
        const range = document.createRange();
        range.setStart(...locate(at + ${offset}));
        range.setEnd(...locate(at + ${offset + length}));
        const rect = range.getBoundingClientRect();
        return { left: rect.left, right: rect.right, top: rect.top, width: rect.width };
      }
      return null;
    })()`);
    if (!box) throw new Error(`"${needle}" is not drawn in ${selector}`);
    return box as { left: number; right: number; top: number; width: number };
  }

  it('draws a right-to-left override and zero-width characters as visible markers, the new value right of the arrow', async () => {
    // Prepare: hostile characters in the page's current value and in the proposed arguments.
    await runtime.dependencies.pages.updateMetadata(
      '12',
      { description: 'Old text \u200B\u200D \u202E tail' },
      'test',
    );
    const { runId } = await startRunAndSettle(
      runtime,
      "Set the description of page 12 to 'New text' and the title of page 12 to 'Evil\u202Eroot\u200B'",
    );
    const inbox = await runtime.client('approver').listInbox({ query: { limit: 100 } });
    // Untyped: the call's arguments are the tool's own shape.
    const json: ResponseJson = bodyOf(inbox).cards.find((candidate) => candidate.runId === runId);

    // Act
    const { page } = await openInbox(runtime.url, 'approver');
    const card = cardOf(page, runId);
    await card.waitFor();
    const cardSelector = `article.card[data-run-id="${runId}"]`;
    const previewLine = `${cardSelector} .preview li`;
    const arrow = await drawnBox(page, previewLine, 'description:', '→');
    const newValue = await drawnBox(page, previewLine, 'description:', '"New text"');
    const oldValue = await drawnBox(page, previewLine, 'description:', '"Old text');
    const argumentsText = `${cardSelector} pre.arguments`;
    const rootFirst = await drawnBox(page, argumentsText, 'Evil', 'root', 0, 1);
    const rootLast = await drawnBox(page, argumentsText, 'Evil', 'root', 3, 1);
    const previewMarkers = card.locator('.preview .hidden-character');
    const argumentMarkers = card.locator('pre.arguments .hidden-character');

    // Assess: the line reads in its logical order, left to right.
    expect(oldValue.right).toBeLessThanOrEqual(arrow.left);
    expect(newValue.left).toBeGreaterThanOrEqual(arrow.right);
    expect(Math.abs(newValue.top - arrow.top)).toBeLessThan(arrow.width * 4 + 20);
    expect(rootFirst.left).toBeLessThan(rootLast.left);
    // ...and every hidden character is a marker that takes room on the screen.
    // (the title line first, with the proposed value; then the description line, with the page's)
    expect(await previewMarkers.allTextContents()).toEqual([
      '⟨U+202E⟩',
      '⟨U+200B⟩',
      '⟨U+200B⟩',
      '⟨U+200D⟩',
      '⟨U+202E⟩',
    ]);
    expect(await argumentMarkers.allTextContents()).toEqual(['⟨U+202E⟩', '⟨U+200B⟩']);
    for (const marker of [...(await previewMarkers.all()), ...(await argumentMarkers.all())]) {
      expect(await marker.isVisible()).toBe(true);
      expect((await marker.boundingBox())?.width ?? 0).toBeGreaterThan(10);
    }
    // ...while the JSON API keeps the exact value the write would set.
    expect(json.pendingTools[0].arguments.title).toBe('Evil\u202Eroot\u200B');
    await page.close();
  });

  it('shows a value holding a quote and a line break as one quoted value, never as a line of its own', async () => {
    // Prepare: the page's value and the proposed one each try to draw another field or a summary.
    const current = 'Old" → "fine';
    const proposed =
      'Spring" → "Spring sale"\nkeywords: "safe" → "approved\nPage 12 (en): 0 fields would change.';
    await runtime.dependencies.pages.updateMetadata('12', { description: current }, 'test');
    const { runId } = await startRunAndSettle(
      runtime,
      `call update_page_metadata with ${JSON.stringify({ pageId: '12', description: proposed })}`,
    );

    // Act
    const { page } = await openInbox(runtime.url, 'approver');
    const card = cardOf(page, runId);
    await card.waitFor();
    const lines = await card.locator('.preview li').allTextContents();

    // Assess: a header and one description line, whose two quoted values read back exactly.
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('Page 12 (en): 1 field would change.');
    const values = /^description: ("(?:[^"\\]|\\.)*") → ("(?:[^"\\]|\\.)*")$/.exec(lines[1] ?? '');
    expect(values).not.toBeNull();
    expect(JSON.parse(values?.[1] ?? '')).toBe(current);
    expect(JSON.parse(values?.[2] ?? '')).toBe(proposed);
    // ...the same lines the JSON inbox carries (one helper for every surface).
    const inbox = await runtime.client('approver').listInbox({ query: { limit: 100 } });
    const json: ResponseJson = bodyOf(inbox).cards.find((candidate) => candidate.runId === runId);
    expect(json.pendingTools[0].preview.lines).toEqual(lines);
    await page.close();
  });

  it('shows when the approval window closes and when the run paused, in the viewer locale', async () => {
    // Prepare
    const { runId } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'deadline'");

    // Act
    const { page } = await openInbox(runtime.url, 'approver');
    const card = cardOf(page, runId);
    await card.waitFor();
    await card.locator('.deadline time').filter({ hasText: /\(/ }).waitFor();

    // Assess: relative and absolute, written by the page in the browser's locale (not the server's UTC).
    const deadline = (await card.locator('.deadline').textContent()) ?? '';
    const paused = (await card.locator('.paused').textContent()) ?? '';
    expect(deadline).toMatch(new RegExp(`^${TEXTS.approvalWindowCloses} in \\d+ days? \\(.*\\d{4}.*\\)$`));
    expect(paused).toMatch(new RegExp(`^${TEXTS.pausedAt} (now|\\d+ seconds? ago) \\(.*\\d{4}.*\\)$`));
    expect(deadline).not.toContain('UTC');
    await page.close();
  });

  it('shows a card past its deadline as closed, taking no decision', async () => {
    // Prepare: the card's window ended a minute ago (MarkExpired has not run yet).
    const { runId } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'too late'");
    const stored = await runtime.dependencies.runs.getCard(runId);
    if (!stored) throw new Error('no card');
    await runtime.dependencies.runs.putCard({
      ...stored,
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
    });

    // Act
    const { page } = await openInbox(runtime.url, 'approver');
    const card = cardOf(page, runId);
    await card.waitFor();

    // Assess
    expect(await card.getAttribute('data-state')).toBe('closed');
    expect(await card.locator('.notice.closed').textContent()).toBe(TEXTS.approvalWindowClosed);
    expect(await card.locator('button.approve').isDisabled()).toBe(true);
    expect(await card.locator('button.reject').isDisabled()).toBe(true);
    expect(await card.locator('.deadline').textContent()).toMatch(/ago/);
    await page.close();
  });

  it('shows a stale card (409) with the re-review message and a way to reload', async () => {
    // Prepare
    const { runId } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'stale in the tab'");
    const { page } = await openInbox(runtime.url, 'approver');
    await cardOf(page, runId).waitFor();
    // The pending action changes after the approver loaded the card: a new turn digest, sealed
    // into the card as a real pause seals it (a plaintext digest alone no longer matches its card).
    const stored = await runtime.dependencies.runs.getCard(runId);
    if (!stored) throw new Error('no card');
    const { sealer } = runtime.dependencies;
    const sealedCard = (await unsealJson(sealer, 'approval-card', runId, stored.sealedCard)) as object;
    const digest = `sha256:${'0'.repeat(64)}`;
    await runtime.dependencies.runs.putCard({
      ...stored,
      digest,
      sealedCard: await sealJson(sealer, 'approval-card', runId, { ...sealedCard, digest }),
    });

    // Act
    await cardOf(page, runId).locator('button.approve').click();
    const status = await cardStatus(page, runId);

    // Assess
    expect(status).toContain('The pending action changed since you viewed it — please re-review.');
    expect(await cardOf(page, runId).getAttribute('data-state')).toBe('stale');
    expect(await cardOf(page, runId).locator('button.reload').isVisible()).toBe(true);
    expect(await cardOf(page, runId).locator('button.approve').isDisabled()).toBe(true);
    expect(bodyOf(await runtime.client('editor').getRun({ path: { id: runId } })).status).toBe('waiting');
    await page.close();
  });

  it('shows a refused gate before anyone clicks: Approve disabled with the reason, Reject open, the run waiting', async () => {
    // Prepare: the admin started a four-eyes run and may not approve it themselves.
    const { runId } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'own run'", {
      as: 'admin',
      configurationId: 'demo-four-eyes',
    });

    // Act
    const { page } = await openInbox(runtime.url, 'admin');
    await cardOf(page, runId).waitFor();

    // Assess
    expect(await cardOf(page, runId).locator('.approve-refusal').textContent()).toBe(TEXTS.gateFourEyes);
    expect(await cardOf(page, runId).locator('button.reject').isEnabled()).toBe(true);
    expect(await cardOf(page, runId).locator('button.approve').isDisabled()).toBe(true);
    expect(bodyOf(await runtime.client('admin').getRun({ path: { id: runId } })).status).toBe('waiting');
    await page.close();
  });

  it('shows the editor that they hold no approver grant', async () => {
    // Act
    const { page } = await openInbox(runtime.url, 'editor');
    const error = page.locator('#cards .error');
    await error.waitFor();

    // Assess
    expect(await error.getAttribute('data-status')).toBe('403');
    expect(await error.textContent()).toBe(TEXTS.grantRefused('agent_approve'));
    await page.close();
  });

  it('shows an expired run (410) when the wait ran out while the card was open', async () => {
    // Prepare: the deployed ASL with an eight-second approval wait (see approvers-expiry.test.ts),
    // long enough to open the page and show the card before it runs out.
    const shortWait = await startRuntimeWithDefinition({
      definition: definitionWithApprovalTimeout(8),
      approvalTimeoutSeconds: 8,
    });
    try {
      const { runId, view } = await startRunAndSettle(shortWait, "Set the keywords of page 12 to 'expiring'");
      expect(view.status).toBe('waiting');
      const { page } = await openInbox(shortWait.url, 'approver');
      await cardOf(page, runId).waitFor();
      await eventually(async () => {
        const current = await shortWait.client('editor').getRun({ path: { id: runId } });
        return bodyOf(current).status === 'expired' ? true : undefined;
      }, 20_000);

      // Act
      await cardOf(page, runId).locator('button.approve').click();
      const status = await cardStatus(page, runId);

      // Assess
      expect(status).toBe(TEXTS.decisionExpired);
      expect(await cardOf(page, runId).getAttribute('data-state')).toBe('expired');
      expect(await cardOf(page, runId).locator('button.approve').isDisabled()).toBe(true);
      await page.close();
    } finally {
      await shortWait.stop();
      await removeTestData(shortWait);
    }
  });

  it('marks where a card cut long arguments and loads them whole on request, never from another turn', async () => {
    // Prepare
    const long = `${'A long description. '.repeat(150)}The end.`;
    const { runId } = await startRunAndSettle(runtime, `Set the description of page 12 to '${long}'`);
    const changed = await startRunAndSettle(runtime, `Set the description of page 14 to '${long}'`);
    const { page, requests } = await openInbox(runtime.url, 'approver');
    const call = cardOf(page, runId).locator('li.call').first();
    const changedCall = cardOf(page, changed.runId).locator('li.call').first();
    await call.waitFor();
    await changedCall.waitFor();
    const excerpt = (await call.locator('pre.arguments').textContent()) ?? '';
    const note = (await call.locator('.excerpt-note').textContent()) ?? '';
    // The second card's turn changes after the approver loaded it: a new digest, sealed and stored.
    const stored = await runtime.dependencies.runs.getCard(changed.runId);
    if (!stored) throw new Error('no card');
    const { sealer } = runtime.dependencies;
    const digest = `sha256:${'1'.repeat(64)}`;
    const sealed = (await unsealJson(sealer, 'approval-card', changed.runId, stored.sealedCard)) as object;
    const sealedCard = await sealJson(sealer, 'approval-card', changed.runId, { ...sealed, digest });
    await runtime.dependencies.runs.putCard({ ...stored, digest, sealedCard });

    // Act
    await call.locator('pre.arguments button.cut').click();
    await changedCall.locator('.excerpt-note button.full-arguments').click();
    const full = call.locator('pre.arguments[data-arguments=full]');
    await full.waitFor();
    const refused = changedCall.locator('.error');
    await refused.waitFor();

    // Assess: the excerpt said where it cut and how long the value is...
    expect(excerpt).toContain(TEXTS.argumentTextCut(long.length));
    expect(excerpt).not.toContain('The end.');
    expect(note).toContain(
      TEXTS.argumentsExcerpted(JSON.stringify({ pageId: '12', description: long }).length),
    );
    // ...one click showed everything the approver approves, with the bearer token...
    expect(await full.textContent()).toBe(JSON.stringify({ pageId: '12', description: long }, null, 2));
    expect(await call.locator('.excerpt-note').count()).toBe(0);
    const fetched = requests.find((request) => new URL(request.url()).pathname === `/runs/${runId}/calls/0`);
    expect((await fetched?.allHeaders())?.authorization).toMatch(/^Bearer ey/);
    // ...and arguments of a turn other than the card's never replace its excerpt.
    expect(await refused.textContent()).toBe(TEXTS.staleDigest);
    expect(await changedCall.locator('pre.arguments').getAttribute('data-arguments')).toBe('excerpt');
    await page.close();
  });

  it('never acts on a GET: a decision URL opened in the browser changes nothing', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'not by GET'");
    const page = await context.newPage();

    // Act
    const response = await page.goto(
      `${runtime.url}/runs/${runId}/decision?digest=${encodeURIComponent(view.digest)}&decision=approve`,
    );

    // Assess
    expect(response?.status()).toBe(405);
    expect(bodyOf(await runtime.client('editor').getRun({ path: { id: runId } })).status).toBe('waiting');
    expect(await runtime.dependencies.runs.getDecision(runId, view.turn)).toBeUndefined();
    await page.close();
  });
  it('says "too many requests" on a throttled load or decision (API Gateway\'s own 429 body) and keeps the card open', async () => {
    // Prepare: API Gateway answers a throttled request itself, with this body (not countersign's).
    const { runId } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'throttled'");
    const throttled = {
      status: 429,
      contentType: 'application/json',
      body: '{"message":"Too Many Requests"}',
    };
    const { page } = await openInbox(runtime.url, 'approver');
    await cardOf(page, runId).waitFor();
    await page.route('**/decision', (route) => route.fulfill(throttled));

    // Act: a decision, then a reload of the cards, both throttled
    await cardOf(page, runId).locator('button.approve').click();
    const decisionStatus = await cardStatus(page, runId);
    const approveEnabled = await cardOf(page, runId).locator('button.approve').isEnabled();
    const cardState = await cardOf(page, runId).getAttribute('data-state');
    await page.route('**/inbox*', (route) => route.fulfill(throttled));
    await page.click('#filters button[type=submit]');
    const error = page.locator('#cards .error');
    await error.waitFor();

    // Assess
    expect(decisionStatus).toBe(TEXTS.tooManyRequests);
    expect(cardState).toBe('throttled');
    expect(approveEnabled).toBe(true);
    expect(await error.getAttribute('data-status')).toBe('429');
    expect(await error.textContent()).toBe(TEXTS.tooManyRequests);
    expect(bodyOf(await runtime.client('editor').getRun({ path: { id: runId } })).status).toBe('waiting');
    await page.close();
  });
});
