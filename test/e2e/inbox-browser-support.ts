import type { Page, Response } from 'playwright-core';
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
