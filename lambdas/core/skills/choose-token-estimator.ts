import type { ModelProvider, ModelRequest } from '../model.js';
import {
  createByteBoundEstimator,
  createProviderCountEstimator,
  loadCl100kEstimator,
  messageText,
  type TokenEstimator,
} from './estimate-tokens.js';

/**
 * The token estimator for one send, per provider (docs/skills.md): the provider's own count
 * when it has one (Bedrock CountTokens: cl100k is not Claude's tokenizer), cl100k for the
 * others (OpenAI-compatible), and the byte bound when the provider's count fails. The
 * estimator is built only when `fitContextWindow` asks, i.e. when the byte bound does not fit.
 *
 * @example
 * const send = await fitContextWindow({ ...request, loadEstimator: chooseTokenEstimator(model, request) });
 */
export function chooseTokenEstimator(
  provider: ModelProvider,
  request: ModelRequest,
): () => Promise<TokenEstimator> {
  const countInputTokens = provider.countInputTokens?.bind(provider);
  if (!countInputTokens) return () => loadCl100kEstimator(request.model);
  return async () => {
    try {
      const totalTokens = await countInputTokens(request);
      if (!Number.isFinite(totalTokens) || totalTokens <= 0) return createByteBoundEstimator(request.model);
      return createProviderCountEstimator(totalTokens, textBytesOf(request));
    } catch {
      // The provider's count is an optimisation: a model without CountTokens, or a refused call,
      // falls back to the bound that never undercounts.
      return createByteBoundEstimator(request.model);
    }
  };
}

function textBytesOf(request: ModelRequest): number {
  const texts = [
    request.system ?? '',
    request.tools.length === 0 ? '' : JSON.stringify(request.tools),
    ...request.messages.map(messageText),
  ];
  return texts.reduce((total, text) => total + Buffer.byteLength(text, 'utf8'), 0);
}
