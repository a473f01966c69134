import { type SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import type { Mail, MailSender } from '../core/channels/email-ports.js';

/**
 * `MailSender` on Amazon SES (SESv2 SendEmail): one plain-text mail per call, from the
 * deployment's verified sender identity, to one approver (no approver sees another's address).
 *
 * @example
 * const mail = new SesMailSender({ client: new SESv2Client({}), fromAddress: 'countersign@example.com' });
 * await mail.sendMail({ to: 'ana@example.com', subject: 'Approval needed: …', text: '…' });
 */
export class SesMailSender implements MailSender {
  public constructor(private readonly options: { client: SESv2Client; fromAddress: string }) {}

  public async sendMail(mail: Mail): Promise<void> {
    await this.options.client.send(
      new SendEmailCommand({
        FromEmailAddress: this.options.fromAddress,
        Destination: { ToAddresses: [mail.to] },
        Content: {
          Simple: {
            Subject: { Data: mail.subject, Charset: 'UTF-8' },
            Body: { Text: { Data: mail.text, Charset: 'UTF-8' } },
          },
        },
      }),
    );
  }
}
