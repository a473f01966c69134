import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page, type Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardPagePath } from '../../lambdas/contract/card-address.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import {
  removeTestData,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import { CHROMIUM, CHROMIUM_ARGS, signIn } from './inbox-browser-support.js';

/** Short-lived access tokens, so a refresh happens within a test (halfway through: after 4 s). */
const ACCESS_TOKEN_SECONDS = 8;

describe('the inbox page keeps an approver signed in, and lets them out', () => {
  let runtime: TestRuntime;
  let userDataDirectory: string;
  let context: BrowserContext;

  beforeAll(async () => {
    runtime = await startTestRuntime({ signIn: { accessTokenSeconds: ACCESS_TOKEN_SECONDS } });
    userDataDirectory = await mkdtemp(join(tmpdir(), 'countersign-chromium-'));
    context = await chromium.launchPersistentContext(userDataDirectory, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
  });

  afterAll(async () => {
    await context?.close();
    await rm(userDataDirectory, { recursive: true, force: true });
    await runtime.stop();
    await removeTestData(runtime);
  });

  async function openPage(path: string) {
    const page = await context.newPage();
    const requests: Request[] = [];
    page.on('request', (request) => requests.push(request));
    await page.goto(`${runtime.url}${path}`);
    return { page, requests };
  }

  /** Where the page keeps anything: storage, cookies and its address. */
  async function whatThePageKeeps(page: Page) {
    return page.evaluate(`({
      local: Object.keys(localStorage),
      session: Object.fromEntries(Object.keys(sessionStorage).map((key) => [key, sessionStorage.getItem(key)])),
      cookies: document.cookie,
      address: location.pathname + location.search,
    })`) as Promise<{ local: string[]; session: Record<string, string>; cookies: string; address: string }>;
  }

  function tokenRequests(requests: readonly Request[], grantType: string): Request[] {
    return requests.filter(
      (request) =>
        request.url() === `${runtime.issuerUrl}/oauth2/token` &&
        new URLSearchParams(request.postData() ?? '').get('grant_type') === grantType,
    );
  }

  it('keeps no token in storage, a cookie or the address, and refreshes the access token before it expires', async () => {
    // Prepare
    await startRunAndSettle(runtime, "Set the keywords of page 12 to 'session'");
    const { page, requests } = await openPage('/');

    // Act
    await signIn(page, 'approver');
    await page.locator('#cards article.card').first().waitFor();
    const kept = await whatThePageKeeps(page);
    const firstInbox = requests.find((request) => new URL(request.url()).pathname === '/inbox');
    const firstToken = (await firstInbox?.allHeaders())?.authorization;
    await page.waitForRequest((request) => tokenRequests([request], 'refresh_token').length === 1, {
      timeout: ACCESS_TOKEN_SECONDS * 1000,
    });
    const polled = await page.waitForResponse(
      (response) =>
        new URL(response.url()).pathname === '/inbox' &&
        response.request().headers().authorization !== firstToken,
      { timeout: 15_000 },
    );

    // Assess
    expect(kept).toEqual({ local: [], session: { 'countersign.signed-in': '1' }, cookies: '', address: '/' });
    expect(await page.textContent('#who')).toBe('Abe Approver');
    expect([200, 304]).toContain(polled.status());
    // The code was traded once, with its PKCE verifier; past the one redirect that brings it, no
    // request of the page carries it.
    const codeExchanges = tokenRequests(requests, 'authorization_code');
    expect(codeExchanges).toHaveLength(1);
    expect(new URLSearchParams(codeExchanges[0]?.postData() ?? '').get('code_verifier')).toMatch(
      /^[\w-]{43,}$/,
    );
    for (const request of requests.filter(
      (each) => each.url().startsWith(runtime.url) && !each.isNavigationRequest(),
    )) {
      expect(new URL(request.url()).search).not.toMatch(/code=|state=/);
    }
    await page.close();
  });

  it('goes back through sign-in to the same card when the session ends mid-way, and the card still waits', async () => {
    // Prepare: signed in at the card's own address
    const { runId } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'mid-session'");
    const { page } = await openPage(cardPagePath(runId));
    await signIn(page, 'approver');
    await page.locator(`#run article.card[data-run-id="${runId}"]`).waitFor();
    // The session ends: the API refuses the token and the provider the refresh token, once each.
    await page.route(
      '**/decision',
      (route) =>
        route.fulfill({ status: 401, contentType: 'application/json', body: '{"message":"Unauthorized"}' }),
      { times: 1 },
    );
    await page.route(
      `${runtime.issuerUrl}/oauth2/token`,
      (route) =>
        route.fulfill({ status: 400, contentType: 'application/json', body: '{"error":"invalid_grant"}' }),
      { times: 1 },
    );

    // Act
    await page.locator('button.approve').click();
    await page.locator('button[name=user][value=approver]').click();
    const card = page.locator(`#run article.card[data-run-id="${runId}"]`);
    await card.waitFor();

    // Assess
    expect(new URL(page.url()).pathname).toBe(cardPagePath(runId));
    expect(await card.getAttribute('data-state')).toBe('waiting');
    expect(bodyOf(await runtime.client('editor').getRun({ path: { id: runId } })).status).toBe('waiting');
    await page.close();
  });

  it('signs out: the refresh token is revoked, the provider session ended, and the page asks to sign in again', async () => {
    // Prepare
    const { page, requests } = await openPage('/');
    await signIn(page, 'reviewer');

    // Act
    await page.locator('#sign-out').click();
    await page.locator('#sign-in-button').waitFor();
    const kept = await whatThePageKeeps(page);

    // Assess
    const revocations = requests.filter((request) => request.url() === `${runtime.issuerUrl}/oauth2/revoke`);
    expect(revocations).toHaveLength(1);
    expect(new URLSearchParams(revocations[0]?.postData() ?? '').get('token')).toEqual(expect.any(String));
    expect(requests.some((request) => request.url().startsWith(`${runtime.issuerUrl}/logout?`))).toBe(true);
    expect(kept).toEqual({ local: [], session: {}, cookies: '', address: '/' });
    expect(await page.isVisible('#account')).toBe(false);
    await page.close();
  });

  it('still takes a pasted bearer token, the fallback for API users, and forgets it on reload', async () => {
    // Prepare
    const { page } = await openPage('/');

    // Act
    await page.locator('#sign-in details summary').click();
    await page.fill('#token', runtime.tokens.approver ?? '');
    await page.locator('#token-form button[type=submit]').click();
    await page.locator('#cards').locator('article.card, .empty').first().waitFor();
    await page.reload();
    await page.locator('#sign-in-button').waitFor();

    // Assess
    expect(await whatThePageKeeps(page)).toEqual({ local: [], session: {}, cookies: '', address: '/' });
    expect(await page.textContent('#sign-in')).toContain(TEXTS.pageSignInPrompt);
    await page.close();
  });
});
