import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page, type Request, type Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { committedDocumentValidator, matchRoute } from '../support/openapi-response-validator.js';

/** Debian's chromium package; `.ci/run` installs it. No browser is downloaded. */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The mismatch between one answer the page received and the committed document, if any. */
export async function problemWithPageAnswer(response: Response): Promise<string | undefined> {
  const url = new URL(response.url());
  const contentType = response.headers()['content-type'] ?? null;
  const streamed = contentType?.startsWith('text/event-stream') === true;
  const text =
    streamed || response.status() === 304 ? undefined : await response.text().catch(() => undefined);
  return committedDocumentValidator().problemWith({
    method: response.request().method(),
    path: url.pathname,
    status: response.status(),
    contentType,
    text,
  });
}

/** Whether a path is the page itself (its shell or its library), which carries no data. */
export function isPageShell(pathname: string): boolean {
  const operationId = matchRoute('GET', pathname)?.operationId;
  return (
    operationId === 'getInboxPage' || operationId === 'getCardPage' || operationId === 'getSignInLibrary'
  );
}

/**
 * Signs in as a demo user the way an approver does: the page's "Sign in" sends the browser to
 * the provider's login page (authorization code + PKCE), the user is chosen there, and the
 * provider sends the browser back to the page, which trades the code for tokens.
 */
export async function signIn(page: Page, user: string): Promise<void> {
  await page.locator('#sign-in-button').click();
  await page.locator(`button[name=user][value="${user}"]`).click();
  await page.locator('#account').waitFor();
}

/** The inbox page as a test drives it: a tab signed in as a user, a card, its status. */
export interface InboxBrowser {
  openInbox(
    baseUrl: string,
    user: string | undefined,
  ): Promise<{ page: Page; requests: Request[]; dialogs: string[] }>;
  cardOf(page: Page, runId: string): ReturnType<Page['locator']>;
  cardStatus(page: Page, runId: string): Promise<string>;
  /** The one Chromium profile every tab of the file shares (its cookies are the session's). */
  browserContext(): BrowserContext;
}

/**
 * Headless Chromium for one test file, launched before its cases and closed after them. After
 * each case, every answer the page's own API requests got is held to the committed OpenAPI document.
 */
export function useInboxBrowser(): InboxBrowser {
  let userDataDirectory: string;
  let context: BrowserContext;
  const pageAnswerChecks: Array<Promise<string | undefined>> = [];

  beforeAll(async () => {
    userDataDirectory = await mkdtemp(join(tmpdir(), 'countersign-chromium-'));
    context = await chromium.launchPersistentContext(userDataDirectory, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
  });

  afterEach(async () => {
    const problems = (await Promise.all(pageAnswerChecks.splice(0))).filter(Boolean);
    expect(problems).toEqual([]);
  });

  afterAll(async () => {
    await context?.close();
    await rm(userDataDirectory, { recursive: true, force: true });
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

  return { openInbox, cardOf, cardStatus, browserContext: () => context };
}
