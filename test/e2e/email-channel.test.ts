import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import {
  type MeteredTestRuntime,
  removeTestData,
  startRunAndSettle,
  startTestRuntime,
} from '../support/local-runtime.js';
import { SesStandIn } from '../support/ses-stand-in.js';
import { demoUser } from './approvers-support.js';

describe('the email channel (issue #23)', () => {
  const ses = new SesStandIn();
  let runtime: MeteredTestRuntime;

  beforeAll(async () => {
    const sesEndpoint = await ses.start();
    runtime = await startTestRuntime({
      channels: { email: { fromAddress: 'countersign@example.com', sesEndpoint } },
    });
    // Abe is mailed each card; Rhea gets a digest; Ola has no address.
    const admin = runtime.client('admin');
    for (const [userId, extra] of [
      ['approver', { email: 'abe@example.com' }],
      ['reviewer', { email: 'rhea@example.com', emailDigestMinutes: 15 }],
    ] as const) {
      const put = await admin.putUser({ path: { id: userId }, body: { ...demoUser(userId), ...extra } });
      expect(put.status).toBe(200);
    }
  });

  afterAll(async () => {
    await runtime.stop();
    await ses.stop();
    await removeTestData(runtime);
  });

  it('mails the card’s summary and deep link through SES when a run pauses, from the verified sender', async () => {
    // Act
    const { runId } = await startRunAndSettle(runtime, "Set the description of page 12 to 'Mailed'");
    await runtime.channels.settle();

    // Assess
    const mails = ses.mails.filter((mail) => mail.Content.Simple.Body.Text.Data.includes(runId));
    expect(mails.map((mail) => mail.Destination.ToAddresses)).toEqual([['abe@example.com']]);
    const [mail] = mails;
    expect(mail?.FromEmailAddress).toBe('countersign@example.com');
    expect(mail?.credentialScope).toBe('us-east-1/ses');
    expect(mail?.Content.Simple.Subject.Data).toBe('Approval needed: Update page metadata');
    const text = mail?.Content.Simple.Body.Text.Data ?? '';
    expect(text).toContain(`Open the card: ${runtime.url}/inbox/runs/${runId}`);
    expect(text).toContain(TEXTS.mailFooter);
    // Never an approve-by-link: the mail carries no digest, no token, no decision URL.
    expect(text).not.toMatch(/digest|sha256|decision|Mailed/);
  });

  it('sends the digest approver one mail for the cards that waited, when the schedule runs', async () => {
    // Prepare
    const { runId: first } = await startRunAndSettle(runtime, "Set the title of page 14 to 'Digest one'");
    const { runId: second } = await startRunAndSettle(runtime, "Set the title of page 14 to 'Digest two'");
    await runtime.channels.settle();
    const toRheaBefore = ses.mails.filter((mail) =>
      mail.Destination.ToAddresses.includes('rhea@example.com'),
    );

    // Act
    await runtime.channels.mailDueDigests();

    // Assess
    const toRhea = ses.mails.filter((mail) => mail.Destination.ToAddresses.includes('rhea@example.com'));
    expect(toRheaBefore).toEqual([]);
    expect(toRhea).toHaveLength(1);
    expect(toRhea[0]?.Content.Simple.Subject.Data).toMatch(/^\d+ cards wait for your decision$/);
    for (const runId of [first, second]) {
      expect(toRhea[0]?.Content.Simple.Body.Text.Data).toContain(`${runtime.url}/inbox/runs/${runId}`);
    }
  });
});
