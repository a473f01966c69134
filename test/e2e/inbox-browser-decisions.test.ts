import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { sealJson, unsealJson } from '../../lambdas/core/sealed-json.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import {
  eventually,
  removeTestData,
  settle,
  startRunAndSettle,
  useTestRuntime,
} from '../support/local-runtime.js';
import { definitionWithApprovalTimeout, startRuntimeWithDefinition } from './approvers-support.js';
import { isPageShell, useInboxBrowser } from './inbox-browser-support.js';

describe('the inbox page in headless Chromium', () => {
  // Registered first, so it stops after the browser closes.
  const runtime = useTestRuntime();
  const { openInbox, cardOf, cardStatus, browserContext } = useInboxBrowser();

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
    expect(await browserContext().cookies()).toEqual([]);
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

  it('never acts on a GET: a decision URL opened in the browser changes nothing', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'not by GET'");
    const page = await browserContext().newPage();

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
