import * as z from 'zod/mini';

const positionSchema = z.number().check(z.int(), z.nonnegative());

/**
 * What an external run's sealed state keeps beside its calls (run state version 2): the client
 * key, the caller's preview lines as the card will show them, and the webhook URL (sealed: a URL
 * may carry a token).
 */
export const externalTurnSchema = z.object({
  clientKey: z.string(),
  callerPreviews: z.array(z.object({ index: positionSchema, lines: z.array(z.string()) })),
  webhookUrl: z.optional(z.string()),
});
export type ExternalTurn = z.infer<typeof externalTurnSchema>;
