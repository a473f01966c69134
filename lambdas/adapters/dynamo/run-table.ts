import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../../core/ports.js';

/** Seconds an item is kept after the write that ends its use. */
export interface RunRetention {
  /** A run that ended (completed, failed, expired) and a card that closed. */
  readonly endedRunSeconds: number;
  /** A decision record; undefined keeps decisions forever. */
  readonly decisionSeconds?: number;
}

/**
 * What the run, card and decision stores share: the table, and the `removeAfter` stamp (epoch
 * seconds, what DynamoDB TTL compares with) of the write that ends an item's use.
 */
export class RunTable {
  public constructor(
    public readonly client: DynamoDBDocumentClient,
    public readonly tableName: string,
    private readonly retention: RunRetention | undefined,
    private readonly clock: Clock,
  ) {}

  /** The time a write stamps (when a decision was delivered). */
  public now(): Date {
    return this.clock.now();
  }

  /** For an ended run, a closed card and its closed index entries; undefined keeps them. */
  public endedRunRemoval(): number | undefined {
    return this.removeAfter(this.retention?.endedRunSeconds);
  }

  /** For a decision record; undefined keeps it forever. */
  public decisionRemoval(): number | undefined {
    return this.removeAfter(this.retention?.decisionSeconds);
  }

  private removeAfter(seconds: number | undefined): number | undefined {
    if (seconds === undefined) return undefined;
    return Math.floor(this.clock.now().getTime() / 1000) + seconds;
  }
}
