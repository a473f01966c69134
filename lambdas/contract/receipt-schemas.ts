import * as z from 'zod/mini';
import {
  chainEntrySchema,
  RECEIPT_FORMAT,
  RECEIPT_FORMAT_VERSION,
  type Receipt,
} from '../core/receipts/chain-entry.js';
import type { Agrees, SameShape } from './common-schemas.js';

/** GET /runs/{id}/receipt: the run's chain (docs/receipts.md), entries as the core's schema reads them. */
export const receiptResponseSchema = z.object({
  format: z.literal(RECEIPT_FORMAT),
  formatVersion: z.literal(RECEIPT_FORMAT_VERSION),
  runId: z.string(),
  entries: z.array(chainEntrySchema),
});

/** Checked at compile time: the document says what the use case returns. */
export type ReceiptShapesAgree = [Agrees<SameShape<z.output<typeof receiptResponseSchema>, Receipt>>];
