import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { sealJson, unsealJson } from '../../lambdas/core/sealed-json.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import { type ResponseJson, startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';
import { useInboxBrowser } from './inbox-browser-support.js';

describe('the inbox page in headless Chromium', () => {
  // Registered first, so it stops after the browser closes.
  const runtime = useTestRuntime();
  const { openInbox, cardOf } = useInboxBrowser();

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
});
