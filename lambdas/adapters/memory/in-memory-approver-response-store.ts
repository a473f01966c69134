import {
  type ApproverResponse,
  type ApproverResponseStore,
  approverResponseSchema,
  type ResponsePage,
  type ResponsePageRequest,
  responseOrderKey,
} from '../../core/analytics/approver-response.js';

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
    const keys = [...this.responses.keys()]
      .sort()
      .filter(
        (key) =>
          key >= from &&
          key.slice(0, to.length) <= to &&
          (options.cursor === undefined || key > options.cursor),
      );
    const page = keys.slice(0, options.limit);
    const items = page.flatMap((key) => {
      const response = this.responses.get(key);
      return response ? [response] : [];
    });
    const last = page.at(-1);
    return keys.length > options.limit && last !== undefined ? { items, cursor: last } : { items };
  }
}
