import { CountersignError } from '../errors.js';
import type { Message, ToolSpecification } from '../model.js';
import { splitSkillBlock } from './compose-skills.js';
import {
  contextWindowTokensFor,
  estimateMessageTokens,
  estimateTextTokens,
  estimateToolsTokens,
  loadCl100kEstimator,
  type TokenEstimator,
  upperBoundMessageTokens,
  upperBoundTokens,
} from './estimate-tokens.js';

export interface FitContextWindowInput {
  model: string;
  system?: string;
  messages: readonly Message[];
  tools: readonly ToolSpecification[];
  /** Reserved for the reply. */
  maxTokens: number;
  /** @default - `contextWindowTokensFor(model)` */
  contextWindowTokens?: number;
  /**
   * The estimator, asked for only when the byte bound does not fit (`chooseTokenEstimator`).
   * @default - cl100k with the model's margin
   */
  loadEstimator?: () => Promise<TokenEstimator>;
}

export interface FittedSend {
  messages: Message[];
  /** Messages left out of this send (the oldest turns after the first user message). */
  trimmedMessages: number;
  /** True only when even without every older turn the send did not fit: then the block goes, loudly. */
  skillBlockDropped: boolean;
  estimatedTokens: number;
  budgetTokens: number;
  /** What the estimate rests on: the byte bound alone when it fitted. */
  basis: TokenEstimator['basis'];
}

/**
 * Bounds the real send by the model's context window (docs/skills.md, context-window manager). The
 * estimate counts the system prompt, the tools and every message, skills block included.
 * Over budget, the oldest turns after the first user message go first, an assistant turn
 * always together with the user message that answers it (a tool call never leaves without
 * its result); the latest turn and the first user message stay. Only when that is not enough
 * is the skills block taken out of the first user message, reported in `skillBlockDropped`
 * so the caller warns; when even that does not fit, the turn fails with a clear error.
 * The stored transcript is not changed: trimming applies to this send only.
 */
export async function fitContextWindow(input: FitContextWindowInput): Promise<FittedSend> {
  const window = input.contextWindowTokens ?? contextWindowTokensFor(input.model);
  const budgetTokens = window - input.maxTokens;
  const messages = [...input.messages];
  const untouched = (estimatedTokens: number, basis: FittedSend['basis']): FittedSend => ({
    messages,
    trimmedMessages: 0,
    skillBlockDropped: false,
    estimatedTokens,
    budgetTokens,
    basis,
  });
  // Cheap first: a byte count bounds the tokens, so most sends need no tokenizing at all.
  const upperBound =
    upperBoundTokens(input.system ?? '', input.model) +
    upperBoundTokens(JSON.stringify(input.tools), input.model) +
    messages.reduce((sum, message) => sum + upperBoundMessageTokens(message, input.model), 0);
  if (upperBound <= budgetTokens) return untouched(upperBound, 'byte-bound');

  const estimator = await (input.loadEstimator ?? (() => loadCl100kEstimator(input.model)))();
  const fixed =
    estimateTextTokens(input.system ?? '', estimator) + estimateToolsTokens(input.tools, estimator);
  const costs = messages.map((message) => estimateMessageTokens(message, estimator));
  let total = fixed + costs.reduce((sum, cost) => sum + cost, 0);
  if (total <= budgetTokens) return untouched(total, estimator.basis);

  const units = turnUnits(messages);
  const dropped = new Set<number>();
  // The latest unit is what the model must answer now; it is never trimmed.
  for (const unit of units.slice(0, -1)) {
    if (total <= budgetTokens) break;
    for (const index of unit) {
      dropped.add(index);
      total -= costs[index] ?? 0;
    }
  }
  let kept = messages.filter((_, index) => !dropped.has(index));
  let skillBlockDropped = false;
  if (total > budgetTokens) {
    const withoutBlock = withoutSkillBlock(kept[0]);
    if (withoutBlock !== undefined) {
      total += estimateMessageTokens(withoutBlock, estimator) - (costs[0] ?? 0);
      kept = [withoutBlock, ...kept.slice(1)];
      skillBlockDropped = true;
    }
  }
  if (total > budgetTokens) {
    throw new CountersignError(
      'model-failed',
      `The conversation no longer fits the model's context window (about ${total} tokens needed, ${budgetTokens} available).`,
    );
  }
  return {
    messages: kept,
    trimmedMessages: dropped.size,
    skillBlockDropped,
    estimatedTokens: total,
    budgetTokens,
    basis: estimator.basis,
  };
}

/**
 * Indexes of the messages after the first, grouped so that an assistant message and the user
 * message that follows it (its tool results) are one unit, oldest first.
 */
function turnUnits(messages: readonly Message[]): number[][] {
  const units: number[][] = [];
  for (let index = 1; index < messages.length; index += 1) {
    if (messages[index]?.role === 'assistant' && messages[index + 1]?.role === 'user') {
      units.push([index, index + 1]);
      index += 1;
    } else units.push([index]);
  }
  return units;
}

function withoutSkillBlock(message: Message | undefined): Message | undefined {
  if (message?.role !== 'user') return undefined;
  const [lead, ...rest] = message.content;
  if (lead?.type !== 'text') return undefined;
  const split = splitSkillBlock(lead.text);
  if (split === undefined) return undefined;
  return { role: 'user', content: [{ ...lead, text: split.rest }, ...rest] };
}
