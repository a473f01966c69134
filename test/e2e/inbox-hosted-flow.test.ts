import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardPagePath } from '../../lambdas/contract/card-address.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import { apiClientOf, eventually } from '../support/local-runtime.js';
import { CHROMIUM, CHROMIUM_ARGS, signIn } from './inbox-browser-support.js';

/** A live list notices a change within one poll (10 s) and a margin. */
const LIVE_LIST_WAIT_MS = 25_000;

/**
 * Issue #21's bar, against `npm start` itself (bin/local.ts in a child process, as a developer
 * runs it): an approver signs in through the authorization code flow (no token pasted), opens a
 * card from its own address, watches the live list change as another approver decides, decides,
 * and finds the run in their history with its audit.
 */
describe('the hosted inbox, end to end against npm start', () => {
  let child: ChildProcess | undefined;
  let dataDirectory = '';
  let userDataDirectory = '';
  let context: BrowserContext;
  let url = '';
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    dataDirectory = await mkdtemp(join(tmpdir(), 'countersign-hosted-'));
    const started = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
      env: {
        ...process.env,
        COUNTERSIGN_PORT: '0',
        COUNTERSIGN_SIGN_IN_PORT: '0',
        COUNTERSIGN_DATA_DIR: dataDirectory,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    started.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    await eventually(async () => (/Press Ctrl\+C/.test(output) ? true : undefined), 90_000);
    url = /countersign is running at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '';
    for (const [, user, token] of output.matchAll(/export COUNTERSIGN_(\w+)_TOKEN=(\S+)/g)) {
      tokens[(user ?? '').toLowerCase().replaceAll('_', '-')] = token ?? '';
    }
    userDataDirectory = await mkdtemp(join(tmpdir(), 'countersign-chromium-'));
    context = await chromium.launchPersistentContext(userDataDirectory, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(userDataDirectory, { recursive: true, force: true });
    await rm(dataDirectory, { recursive: true, force: true });
  });

  const client = (as: string) => apiClientOf({ url, tokens }, as);

  /** A run the editor starts, once it waits at its card. */
  async function waitingRun(input: string, configurationId?: string): Promise<string> {
    const started = await client('editor').startRun({
      body: configurationId ? { configurationId, input } : { taskId: 'page-metadata', input },
    });
    const runId = bodyOf(started).runId;
    await eventually(async () => {
      const view = bodyOf(await client('editor').getRun({ path: { id: runId } }));
      return view.status === 'waiting' ? true : undefined;
    }, 30_000);
    return runId;
  }

  function cardIn(page: Page, holder: '#cards' | '#run', runId: string) {
    return page.locator(`${holder} article.card[data-run-id="${runId}"]`);
  }

  it('signs in through the code flow, opens a card from its address, sees the list change as another approver decides, decides, and finds the run in its history with the audit', async () => {
    // Prepare: three waiting runs, one of them needing two approvers (k-of-n)
    const fromLink = await waitingRun("Set the description of page 12 to 'From the deep link'");
    const decidedElsewhere = await waitingRun("Set the keywords of page 14 to 'elsewhere'");
    const twoApprovers = await waitingRun(
      "Set the keywords of page 12 to 'two approvers'",
      'demo-two-approvers',
    );
    const page = await context.newPage();
    // Everything the live region announced, in order (it is rewritten at every change).
    await page.addInitScript({
      content: `window.__announced = [];
        document.addEventListener('DOMContentLoaded', () => {
          const live = document.getElementById('live-text');
          if (live) new MutationObserver(() => window.__announced.push(live.textContent)).observe(live, { childList: true, characterData: true, subtree: true });
        });`,
    });
    const announcements = () => page.evaluate('window.__announced.join(" | ")') as Promise<string>;

    // Act 1: the card's own address, before signing in; the sign-in returns to it
    await page.goto(`${url}${cardPagePath(fromLink)}`);
    await signIn(page, 'approver');
    const linked = cardIn(page, '#run', fromLink);
    await linked.waitFor();
    const landedAt = new URL(page.url());
    await linked.locator('button.approve').click();
    await linked.locator('.status').filter({ hasText: /\S/ }).waitFor();

    // Act 2: the inbox, live, while another approver decides one card and approves the other
    await page.locator('nav a[data-view=inbox]').click();
    await cardIn(page, '#cards', decidedElsewhere).waitFor();
    await cardIn(page, '#cards', twoApprovers).waitFor();
    const rejected = await client('reviewer').decideRun({
      path: { id: decidedElsewhere },
      body: {
        digest: bodyOf(await client('reviewer').getRun({ path: { id: decidedElsewhere } })).digest,
        decision: 'reject',
      },
    });
    const firstApproval = await client('reviewer').decideRun({
      path: { id: twoApprovers },
      body: {
        digest: bodyOf(await client('reviewer').getRun({ path: { id: twoApprovers } })).digest,
        decision: 'approve',
      },
    });
    await cardIn(page, '#cards', decidedElsewhere).waitFor({ state: 'detached', timeout: LIVE_LIST_WAIT_MS });
    const tally = cardIn(page, '#cards', twoApprovers).locator('.approvals');
    await tally.filter({ hasText: 'reviewer' }).waitFor({ timeout: LIVE_LIST_WAIT_MS });
    const announced = await announcements();
    const newcomer = await waitingRun("Set the keywords of page 14 to 'newcomer'");
    await page.locator('#show-new').waitFor({ timeout: LIVE_LIST_WAIT_MS });
    const newcomerAnnounced = await announcements();
    const listedBeforeShowing = await cardIn(page, '#cards', newcomer).count();
    await page.locator('#show-new').click();
    await cardIn(page, '#cards', newcomer).waitFor();

    // Act 3: the second approval, by keyboard alone, releases the k-of-n card
    const tabs = await tabTo(page, `#cards article.card[data-run-id="${twoApprovers}"] button.approve`);
    await page.keyboard.press('Enter');
    const released = cardIn(page, '#cards', twoApprovers).locator('.status');
    await released.filter({ hasText: /\S/ }).waitFor();

    // Act 4: the history, and the run's audit from it
    await page.locator('nav a[data-view=decided]').click();
    const entry = page.locator(`#history li[data-run-id="${fromLink}"]`);
    await entry.waitFor();
    const entryText = await entry.textContent();
    await entry.locator('a').click();
    const audit = page.locator('#run .audit');
    await audit.waitFor();

    // Assess: signed in without a token pasted, back at the card's address, the code gone from it
    expect(landedAt.pathname).toBe(cardPagePath(fromLink));
    expect(landedAt.search).toBe('');
    expect(await page.textContent('#who')).toBe('Abe Approver');
    // ...the live list: the decided card left, the tally moved, the newcomer was announced, not inserted
    expect(rejected.status).toBe(200);
    expect(firstApproval.status).toBe(202);
    expect(announced).toContain(TEXTS.pageCardsLeftOne);
    expect(await tally.textContent()).toBe(TEXTS.approvalProgress(1, 2, ['reviewer']));
    expect(newcomerAnnounced).toContain(TEXTS.pageNewCardsOne);
    expect(listedBeforeShowing).toBe(0);
    // ...the keyboard approval (reached with Tab alone) released the turn
    expect(tabs).toBeGreaterThan(0);
    expect(await released.textContent()).toBe(TEXTS.pageApproved);
    // ...and the history holds the run, whose audit names the decision on record
    expect(entryText).toContain(TEXTS.historyAct.approve);
    expect(new URL(page.url()).pathname).toBe(cardPagePath(fromLink));
    const decision = audit.locator('li[data-kind=decision]');
    expect(await decision.getAttribute('data-decision')).toBe('approve');
    expect(await decision.textContent()).toContain('approver approved turn 1');
    expect(bodyOf(await client('editor').getRun({ path: { id: fromLink } })).status).not.toBe('waiting');
    await page.close();
  }, 180_000);

  it('gives the context a reviewer needs, reads well to assistive technology and on a 390 px phone: no serious or critical axe finding, nothing wider than the screen', async () => {
    // Prepare: a long description, so the card diffs it word by word
    const description =
      'Hand-written by the marketing team: our summer range, in stores from June, with new colours for every season and a discount for members.';
    const request = `Set the description of page 12 to '${description}'`;
    const runId = await waitingRun(request);
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${url}/`);
    await signIn(page, 'approver');
    const card = cardIn(page, '#cards', runId);
    await card.waitFor();

    // Act: an approver who reads the page, in the inbox
    const inboxFindings = await seriousFindings(page);
    const inboxWidth = await page.evaluate('document.documentElement.scrollWidth');
    const meta = await card.locator('.meta').textContent();
    const requested = await card.locator('.context blockquote.request').textContent();
    const added = await card.locator('.diff ins').allTextContents();
    // ...and one from whom the preview is withheld, at the card's address (a reload forgets the
    // tokens, memory only: the page goes back through sign-in by itself)
    await page.goto(`${url}${cardPagePath(runId)}`);
    await page.locator('button[name=user][value=ops-approver]').click();
    await page.locator('#run .audit').waitFor();
    const blindCard = cardIn(page, '#run', runId);
    const runFindings = await seriousFindings(page);
    const approveBox = await blindCard.locator('button.approve').boundingBox();

    // Assess: the context, and the diff of what the write changes
    expect(meta).toContain('Eda Editor (editor)');
    expect(requested).toBe(request);
    expect(added.join(' ')).toContain('summer');
    expect(await blindCard.locator('.context-withheld').textContent()).toBe(TEXTS.contextWithheld);
    expect(await blindCard.locator('.diff').count()).toBe(0);
    expect(await blindCard.locator('button.approve').textContent()).toBe(TEXTS.approveWithoutPreviewButton);
    expect(await blindCard.locator('.approve-warning').textContent()).toBe(TEXTS.approveWithoutPreview);
    expect(await blindCard.locator('button.approve').getAttribute('aria-describedby')).toBe(
      await blindCard.locator('.approve-warning').getAttribute('id'),
    );
    // ...and both pages pass axe and fit the phone
    expect(inboxFindings).toEqual([]);
    expect(runFindings).toEqual([]);
    expect(inboxWidth).toBeLessThanOrEqual(390);
    expect((approveBox?.x ?? 0) + (approveBox?.width ?? 0)).toBeLessThanOrEqual(390);
    expect(approveBox?.height ?? 0).toBeGreaterThanOrEqual(44);
    await page.close();
  }, 120_000);
});

/** Presses Tab from the top of the page until the element `selector` names has focus; how many presses it took. */
async function tabTo(page: Page, selector: string): Promise<number> {
  // Browser code as strings: this project's TypeScript has no DOM types.
  await page.evaluate('document.activeElement?.blur(); window.scrollTo(0, 0);');
  for (let presses = 1; presses <= 200; presses += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(`document.activeElement?.matches(${JSON.stringify(selector)}) === true`))
      return presses;
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** axe-core's findings of impact serious or critical, with the elements they name. */
async function seriousFindings(page: Page): Promise<Array<{ id: string; targets: string[] }>> {
  const results = await new AxeBuilder({ page }).analyze();
  // axe ran its rules on this page: an empty list below means they passed, not that none ran.
  expect(results.passes.length).toBeGreaterThan(10);
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      id: violation.id,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
}
