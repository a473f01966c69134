import type { GatewayToolResult } from './gateway-call.js';

/** Calls answered so far per call identity, and the calls under way, in this process. */
export class GatewayCallLedger {
  /** The most identities remembered; past it the oldest is forgotten (its next call reaches its old run). */
  private static readonly MAX_REMEMBERED = 10_000;
  private readonly answered = new Map<string, number>();
  private readonly underWay = new Map<string, Promise<GatewayToolResult>>();
  /** The most calls that wait for a decision at once. */
  public readonly maxWaiting: number;

  public constructor(maxWaiting: number) {
    this.maxWaiting = maxWaiting;
  }

  /**
   * Runs `work` once per client key at a time: the same call made again while it waits joins the
   * first (one run, one upstream call), and one beyond `maxWaiting` waiting calls is `busy`.
   */
  public async once(
    identity: string,
    work: (clientKey: string) => Promise<GatewayToolResult>,
  ): Promise<GatewayToolResult | 'busy'> {
    const clientKey = `mcp-gateway-${identity}-${this.answered.get(identity) ?? 0}`;
    const joined = this.underWay.get(clientKey);
    if (joined !== undefined) return joined;
    if (this.underWay.size >= this.maxWaiting) return 'busy';
    const running = work(clientKey).finally(() => this.underWay.delete(clientKey));
    this.underWay.set(clientKey, running);
    return running;
  }

  /** The call's answer was final (ran, refused, ended): its next call asks for a new approval. */
  public settle(identity: string): void {
    this.answered.delete(identity);
    this.answered.set(identity, (this.answered.get(identity) ?? 0) + 1);
    if (this.answered.size > GatewayCallLedger.MAX_REMEMBERED) {
      const oldest = this.answered.keys().next().value;
      if (oldest !== undefined) this.answered.delete(oldest);
    }
  }
}
