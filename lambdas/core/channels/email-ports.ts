/** One plain-text mail to one approver. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Port: sends mail (Amazon SES deployed) from the deployment's verified sender. */
export interface MailSender {
  sendMail(mail: Mail): Promise<void>;
}

/** The cards waiting for one approver's next digest mail, and when their last one went. */
export interface EmailDigest {
  userId: string;
  runIds: string[];
  lastSentAt?: string;
}

/** Which mail of one card turn to one approver. */
export interface CardMailKey {
  runId: string;
  turn: number;
  userId: string;
}

/** Port: what the email channel has sent and what waits for a digest. */
export interface EmailNotificationStore {
  /** Claims the mail of a card turn to an approver: true for the first caller, or after a failed send. */
  claimMail(key: CardMailKey, now: string): Promise<boolean>;
  /** Marks a claimed mail as not sent, so the next attempt (the event's retry) sends it. */
  releaseMail(key: CardMailKey): Promise<void>;
  /** Adds a waiting card to an approver's next digest (a set: a card is listed once). */
  addToDigest(userId: string, runId: string): Promise<void>;
  /** Every approver's digest that has cards waiting for it. */
  listDigests(): Promise<EmailDigest[]>;
  /**
   * Takes a digest's cards for one mail, recording `now` as its sending time: false when another
   * flush took it since it was read (its `lastSentAt` changed), so a digest is mailed once.
   */
  takeDigest(digest: EmailDigest, now: string): Promise<boolean>;
  /** Gives cards back to a digest whose mail failed. */
  returnToDigest(userId: string, runIds: readonly string[]): Promise<void>;
}

/** The email channel of a deployment: its sender, what it sent, and where a card's page is. */
export interface EmailChannel {
  readonly mail: MailSender;
  readonly notifications: EmailNotificationStore;
  /** The card's page on the inbox (the hosted page's deep link): a mail links there, and decides nothing. */
  readonly cardUrl: (runId: string) => string;
}
