import {
  type ApproverResponse,
  type ApproverResponseStore,
  approverResponseSchema,
  type ResponsePage,
  type ResponsePageRequest,
  responseOrderKey,
} from '../../core/analytics/approver-response.js';
import { decodeCursor, encodeCursor, hasExactAttributes } from '../dynamo/item-codec.js';

/**
 * Approver responses in memory, with the DynamoDB store's semantics (one contract runs on both):
 * kept once per run and receipt entry, listed by time, oldest first, a page at a time.
 *
 * @example
 * const responses = new InMemoryApproverResponseStore();
 */
export class InMemoryApproverResponseStore implements ApproverResponseStore {
  private readonly responses = new Map<string, ApproverResponse>();

  public async recordResponse(response: ApproverResponse): Promise<void> {
    const parsed = approverResponseSchema.parse(response);
    this.responses.set(responseOrderKey(parsed), parsed);
  }

  public async listResponses(options: ResponsePageRequest): Promise<ResponsePage> {
    const from = options.from.toISOString();
    const to = options.to.toISOString();
    const inRange = (key: string) => key >= from && key.slice(0, to.length) <= to;
    // A cursor names a response's order key in the range read, as the DynamoDB store's names a
    // key in the months read: anything else is the client's mistake (400), never a page.
    const after =
      options.cursor === undefined
        ? undefined
        : decodeCursor(
            options.cursor,
            (key) => hasExactAttributes(key, ['order']) && inRange(String(key.order)),
          ).order;
    const keys = [...this.responses.keys()]
      .sort()
      .filter((key) => inRange(key) && (after === undefined || key > after));
    const page = keys.slice(0, options.limit);
    const items = page.flatMap((key) => {
      const response = this.responses.get(key);
      return response ? [response] : [];
    });
    const last = page.at(-1);
    const cursor =
      keys.length > options.limit && last !== undefined ? encodeCursor({ order: last }) : undefined;
    return cursor === undefined ? { items } : { items, cursor };
  }
}
