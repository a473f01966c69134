import * as z from 'zod/mini';
import { CountersignError } from '../errors.js';
import { isAdmin, type UserProfile } from '../identity.js';
import type { Clock } from '../ports.js';
import { TEXTS } from '../texts.js';
import type { ApproverResponse, ApproverResponseStore } from './approver-response.js';
import { QUICK_APPROVAL_SECONDS } from './record-approver-response.js';
import {
  type ApproverStatistics,
  type GroupStatistics,
  summarizeApproverResponses,
} from './summarize-approver-responses.js';

/** GET /admin/approver-analytics: `?days=` (1 to 366, 30 when absent) and `?quickSeconds=` (1 to 3,600, 10). */
export const approverAnalyticsQuerySchema = z.strictObject({
  days: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(366)), 30),
  quickSeconds: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(3600)), QUICK_APPROVAL_SECONDS),
});
export type ApproverAnalyticsQuery = z.infer<typeof approverAnalyticsQuerySchema>;

/** What one request summarizes at most; beyond it the answer says `truncated` (narrow the days). */
export const MAX_ANALYZED_RESPONSES = 20_000;
const PAGE_SIZE = 1_000;

export interface ApproverAnalytics {
  from: string;
  to: string;
  quickSeconds: number;
  responses: number;
  /** More responses than one request summarizes: the oldest are in, the newest left out. */
  truncated: boolean;
  groups: GroupStatistics[];
  /** Per approver: personal data, so the route is the admins' only. */
  approvers: ApproverStatistics[];
}

/**
 * Approver analytics for admins (docs/runbook.md, "Approver analytics"): per approver group and
 * per approver, the time from the card appearing to the answer, the share of approvals within
 * `quickSeconds`, and the reject rate, over the last `days`. It reads the responses the receipts
 * recorded; nothing here changes a decision.
 *
 * @example
 * const analytics = await readApproverAnalytics(dependencies, admin, { days: 30, quickSeconds: 10 });
 */
export async function readApproverAnalytics(
  dependencies: { responses: ApproverResponseStore; clock: Clock },
  viewer: UserProfile,
  query: ApproverAnalyticsQuery,
): Promise<ApproverAnalytics> {
  if (!isAdmin(viewer)) throw new CountersignError('forbidden', TEXTS.grantRefused('admin'));
  const to = dependencies.clock.now();
  const from = new Date(to.getTime() - query.days * 86_400_000);
  const responses: ApproverResponse[] = [];
  let cursor: string | undefined;
  let truncated = false;
  do {
    const page = await dependencies.responses.listResponses({
      from,
      to,
      limit: PAGE_SIZE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    responses.push(...page.items);
    cursor = page.cursor;
    if (responses.length >= MAX_ANALYZED_RESPONSES) {
      truncated = cursor !== undefined || responses.length > MAX_ANALYZED_RESPONSES;
      responses.splice(MAX_ANALYZED_RESPONSES);
      break;
    }
  } while (cursor !== undefined);
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    quickSeconds: query.quickSeconds,
    responses: responses.length,
    truncated,
    ...summarizeApproverResponses(responses, query.quickSeconds),
  };
}
