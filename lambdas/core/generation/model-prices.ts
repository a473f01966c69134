import * as z from 'zod/mini';

const price = z.number().check(z.nonnegative(), z.lte(1_000_000));

/**
 * What a model's tokens cost, in US dollars per million tokens (the construct's `modelPrices`
 * prop, by model id as configurations name it). A team's own list prices: countersign ships none,
 * because they change and differ by region, contract and inference profile.
 */
export const modelPriceSchema = z.strictObject({
  inputPerMillionTokens: price,
  outputPerMillionTokens: price,
});
export type ModelPrice = z.infer<typeof modelPriceSchema>;

/** The price table: model id to its price. */
export const modelPricesSchema = z.record(
  z.string().check(z.minLength(1), z.maxLength(256)),
  modelPriceSchema,
);
export type ModelPrices = z.infer<typeof modelPricesSchema>;

/**
 * The estimated cost of one model call in US dollars, from its token counts and the price table;
 * `undefined` when the table has no price for the model (nothing is guessed).
 *
 * @example
 * estimateModelCost({ 'gpt-x': { inputPerMillionTokens: 3, outputPerMillionTokens: 15 } }, 'gpt-x', {
 *   inputTokens: 1000,
 *   outputTokens: 200,
 * }); // 0.006
 */
export function estimateModelCost(
  prices: ModelPrices | undefined,
  model: string,
  usage: { inputTokens: number; outputTokens: number },
): number | undefined {
  const modelPrice = prices?.[model];
  if (modelPrice === undefined) return undefined;
  return (
    (usage.inputTokens * modelPrice.inputPerMillionTokens +
      usage.outputTokens * modelPrice.outputPerMillionTokens) /
    1_000_000
  );
}
