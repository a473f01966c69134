import * as z from 'zod/mini';
import type { ApproverAnalytics } from '../core/analytics/read-approver-analytics.js';
import type { Agrees, SameShape } from './common-schemas.js';

const count = z.number().check(z.int(), z.nonnegative());
const share = z.nullable(z.number().check(z.gte(0), z.lte(1)));
const seconds = z.nullable(z.number().check(z.gte(0)));

const statistics = {
  responses: count,
  approvals: count,
  rejects: count,
  rejectRate: share,
  edits: count,
  editShare: share,
  medianResponseSeconds: seconds,
  p90ResponseSeconds: seconds,
  quickApprovals: count,
  quickApprovalShare: share,
};

/** GET /admin/approver-analytics: per approver group and per approver (docs/runbook.md, "Approver analytics"). */
export const approverAnalyticsSchema = z.object({
  from: z.string(),
  to: z.string(),
  quickSeconds: count,
  responses: count,
  truncated: z.boolean(),
  groups: z.array(z.object({ group: z.string(), ...statistics })),
  approvers: z.array(z.object({ approver: z.string(), groups: z.array(z.string()), ...statistics })),
});

/** Checked at compile time: the document says what the use case returns. */
export type AnalyticsShapesAgree = [
  Agrees<SameShape<z.output<typeof approverAnalyticsSchema>, ApproverAnalytics>>,
];
