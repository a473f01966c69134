// biome-ignore lint/suspicious/noExplicitAny: each service's client types its handlers differently; the counter passes them through untouched.
type NextHandler = (args: any) => Promise<any>;
type CallContext = { commandName?: string; clientName?: string };
type InitializeMiddleware = (next: NextHandler, context: CallContext) => NextHandler;

/** The part of an AWS SDK v3 client (any service) the counter needs. */
export interface CountableClient {
  readonly middlewareStack: {
    add(
      middleware: InitializeMiddleware,
      options: { step: 'initialize'; name: string; override: boolean },
    ): void;
  };
  readonly config: { readonly serviceId?: string };
}

const MIDDLEWARE_NAME = 'countersignAwsCallCounter';

/**
 * Counts AWS calls as `Service:Operation` (`DynamoDB:GetItem`, `KMS:Decrypt`,
 * `SFN:SendTaskSuccess`), so the bench and the tests can hold the code to its call budget.
 * SDK clients are counted by a middleware (`attachTo`); local stand-ins for a service
 * (the local keyring standing in for KMS) call `record` so both modes count alike.
 *
 * @example
 * const counter = new AwsCallCounter();
 * counter.attachTo(dynamoClient);
 * await repository.getRun('r1');
 * counter.snapshot(); // { 'DynamoDB:GetItem': 1 }
 */
export class AwsCallCounter {
  private readonly counts = new Map<string, number>();

  /**
   * Adds a middleware that records each command the client sends, once per command (SDK
   * retries are not counted again). Attaching twice to one client replaces the first
   * attachment, so nothing is counted twice; one client counts into one counter.
   */
  public attachTo<Client extends CountableClient>(client: Client): Client {
    const fallbackService = client.config.serviceId;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const service = fallbackService ?? context.clientName?.replace(/Client$/, '') ?? 'Unknown';
        const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        this.record(service, operation);
        return next(args);
      },
      { step: 'initialize', name: MIDDLEWARE_NAME, override: true },
    );
    return client;
  }

  /** Records one call, for stand-ins that are not SDK clients. */
  public record(service: string, operation: string): void {
    const name = `${service}:${operation}`;
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  /** The counts so far, by `Service:Operation`, sorted by name. */
  public snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  public reset(): void {
    this.counts.clear();
  }

  /** All calls counted, or those of one service (`total('KMS')`). */
  public total(service?: string): number {
    let sum = 0;
    for (const [name, count] of this.counts) {
      if (service === undefined || name.startsWith(`${service}:`)) sum += count;
    }
    return sum;
  }
}
