/**
 * What an agent that runs elsewhere imports from `countersign/agents`: the typed API client, a
 * machine client's tokens (the client-credentials grant) and the approvals the SDK adapters
 * (`countersign/agents/openai`, `/langgraph`, `/ai-sdk`) share. No SDK is loaded from here.
 *
 * @example
 * const api = createApiClient({ baseUrl, token: clientCredentialsTokens({ tokenUrl, clientId, clientSecret }) });
 * const approvals = createCountersignApprovals({ api });
 */
export type { ApiClient, ApiClientOptions } from '../contract/api-client.js';
export { createApiClient } from '../contract/api-client.js';
export { CountersignError, type ErrorCode } from '../core/errors.js';
export { type ClientCredentialsOptions, clientCredentialsTokens } from './client-credentials.js';
export {
  type ApprovalRequest,
  approvalRequestOf,
  type CallVerdict,
  type CountersignAnswer,
  type CountersignApprovals,
  type CountersignApprovalsOptions,
  createCountersignApprovals,
  type ExecutionReport,
  type ProposedCall,
  reportsByCallId,
  type SdkTurnOptions,
  type WaitOptions,
} from './countersign-approvals.js';
