import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable } from '../../../lambdas/adapters/dynamo/create-table.js';
import { DynamoEmailNotificationStore } from '../../../lambdas/adapters/dynamo/email-notification-store.js';
import { RunTable } from '../../../lambdas/adapters/dynamo/run-table.js';
import type { Mail, MailSender } from '../../../lambdas/core/channels/email-ports.js';
import {
  type EmailDependencies,
  mailDueDigests,
  mailWaitingCard,
} from '../../../lambdas/core/channels/mail-approvers.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { type RunningDynalite, startDynalite } from '../../support/dynalite.js';
import {
  APPROVER,
  createHarness,
  digestShownTo,
  OWNER,
  SECOND_APPROVER,
  startPausedRun,
  type UseCaseHarness,
} from '../runs/use-case-harness.js';

class RecordingMailSender implements MailSender {
  public readonly sent: Mail[] = [];
  public failNext = false;

  public async sendMail(mail: Mail): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw Object.assign(new Error('SES is down'), { name: 'ServiceUnavailable' });
    }
    this.sent.push(mail);
  }
}

const MINUTE = 60_000;

describe('mailing approvers', () => {
  let dynamo: RunningDynalite;
  let tables = 0;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo.stop();
  });

  /** The harness's use cases with an email channel, its claims and digests in a table of their own. */
  async function emailChannelOf(
    harness: UseCaseHarness,
  ): Promise<{ dependencies: EmailDependencies; mail: RecordingMailSender }> {
    tables += 1;
    const tableName = `${dynamo.tableName}-${tables}`;
    await ensureTable(dynamo.client, tableName);
    const mail = new RecordingMailSender();
    return {
      mail,
      dependencies: {
        ...harness.dependencies,
        email: {
          mail,
          notifications: new DynamoEmailNotificationStore(
            new RunTable(dynamo.documentClient, tableName, undefined, harness.clock),
          ),
          cardUrl: (runId) => `https://inbox.example.com/#run-${runId}`,
        },
      },
    };
  }

  it('mails the card’s summary and deep link, once, to each approver with an address who may decide it', async () => {
    // Prepare: alice and bob have addresses; olivia starts the run; a four-eyes configuration
    const harness = createHarness({ configuration: { options: { fourEyes: true } } });
    for (const user of [OWNER, APPROVER, SECOND_APPROVER]) {
      await harness.dependencies.users.putUser({ ...user, email: `${user.userId}@example.com` });
    }
    const { dependencies, mail } = await emailChannelOf(harness);
    const { runId } = await startPausedRun(harness);

    // Act
    await mailWaitingCard(dependencies, runId);
    await mailWaitingCard(dependencies, runId);

    // Assess: the owner may not approve under four-eyes, so is not mailed; a repeated event mails nobody again
    expect(mail.sent.map((sent) => sent.to).sort()).toEqual(['alice@example.com', 'bob@example.com']);
    const [first] = mail.sent;
    expect(first?.subject).toBe('Approval needed: Page metadata');
    expect(first?.text).toContain(`Open the card: https://inbox.example.com/#run-${runId}`);
    expect(first?.text).toContain('tools: update_page_metadata');
    expect(first?.text).toContain(TEXTS.mailFooter);
    // A mail carries no argument, no preview, no digest: nothing of the write itself.
    expect(first?.text).not.toMatch(/Spring sale|Home|sha256/);
    expect(harness.metrics.counts.get('ChannelDeliveries')).toBe(2);
  });

  it('gives a failed mail back, so the event’s retry sends it, and sends the others meanwhile', async () => {
    // Prepare
    const harness = createHarness();
    await harness.dependencies.users.putUser({ ...APPROVER, email: 'alice@example.com' });
    await harness.dependencies.users.putUser({ ...SECOND_APPROVER, email: 'bob@example.com' });
    const { dependencies, mail } = await emailChannelOf(harness);
    const { runId } = await startPausedRun(harness);
    mail.failNext = true;

    // Act
    const first = await mailWaitingCard(dependencies, runId).then(
      () => 'sent',
      (error: Error) => error.name,
    );
    await mailWaitingCard(dependencies, runId);

    // Assess
    expect(first).toBe('ServiceUnavailable');
    expect(mail.sent.map((sent) => sent.to).sort()).toEqual(['alice@example.com', 'bob@example.com']);
    expect(harness.metrics.counts.get('ChannelDeliveryFailures')).toBe(1);
  });

  it('sends an approver in digest mode at most one mail per window, listing the cards still waiting', async () => {
    // Prepare: alice wants one mail per 30 minutes
    const harness = createHarness();
    await harness.dependencies.users.putUser({
      ...APPROVER,
      email: 'alice@example.com',
      emailDigestMinutes: 30,
    });
    const { dependencies, mail } = await emailChannelOf(harness);
    const first = await startPausedRun(harness, OWNER, "Set the title of page 12 to 'One'");
    await mailWaitingCard(dependencies, first.runId);
    const immediately = mail.sent.length;

    // Act: the first digest goes at once; a card 10 minutes later waits for the window
    await mailDueDigests(dependencies);
    harness.clock.advance(10 * MINUTE);
    const second = await startPausedRun(harness, OWNER, "Set the title of page 12 to 'Two'");
    const third = await startPausedRun(harness, OWNER, "Set the title of page 12 to 'Three'");
    await mailWaitingCard(dependencies, second.runId);
    await mailWaitingCard(dependencies, third.runId);
    await mailDueDigests(dependencies);
    const withinWindow = mail.sent.length;
    // The third card is decided before the window ends: the digest leaves it out.
    const digest = await digestShownTo(harness, APPROVER, third.runId);
    await decideRun(harness.dependencies, APPROVER, third.runId, { decision: 'reject', digest });
    harness.clock.advance(21 * MINUTE);
    await mailDueDigests(dependencies);
    await mailDueDigests(dependencies);

    // Assess
    expect(immediately).toBe(0);
    expect(withinWindow).toBe(1);
    expect(mail.sent).toHaveLength(2);
    expect(mail.sent[0]?.subject).toBe(TEXTS.mailDigestSubject(1));
    expect(mail.sent[0]?.text).toContain(`#run-${first.runId}`);
    expect(mail.sent[1]?.subject).toBe(TEXTS.mailDigestSubject(1));
    expect(mail.sent[1]?.text).toContain(`#run-${second.runId}`);
    expect(mail.sent[1]?.text).not.toContain(`#run-${third.runId}`);
  });

  it('mails one digest once when two schedules run at the same time', async () => {
    // Prepare
    const harness = createHarness();
    await harness.dependencies.users.putUser({
      ...APPROVER,
      email: 'alice@example.com',
      emailDigestMinutes: 5,
    });
    const { dependencies, mail } = await emailChannelOf(harness);
    const { runId } = await startPausedRun(harness);
    await mailWaitingCard(dependencies, runId);

    // Act
    await Promise.all([
      mailDueDigests(dependencies),
      mailDueDigests(dependencies),
      mailDueDigests(dependencies),
    ]);

    // Assess
    expect(mail.sent).toHaveLength(1);
  });

  it('marks hidden characters in what a mail shows, on one line each', async () => {
    // Prepare: a run label with a bidi override and a line break (a forged header line)
    const harness = createHarness({ configuration: { label: 'Pages \u202Eevil\nBcc: x@example.com' } });
    await harness.dependencies.users.putUser({ ...APPROVER, email: 'alice@example.com' });
    const { dependencies, mail } = await emailChannelOf(harness);
    const { runId } = await startPausedRun(harness);

    // Act
    await mailWaitingCard(dependencies, runId);

    // Assess
    expect(mail.sent[0]?.subject).toBe('Approval needed: Pages ⟨U+202E⟩evil Bcc: x@example.com');
    expect(mail.sent[0]?.text.split('\n')[0]).toBe('Pages ⟨U+202E⟩evil Bcc: x@example.com');
  });
});
