/**
 * countersign as a CDK construct library: `import { Countersign } from 'countersign'`.
 * Team tools are written against the other entry, `countersign/tools`.
 *
 * @example
 * import { Countersign } from 'countersign';
 * new Countersign(stack, 'Approvals', { approvalTimeout: Duration.days(3) });
 *
 * @module countersign
 */

export type { ModelPrice } from '../lambdas/core/generation/model-prices.js';
export { ALARM_THRESHOLD_DEFAULTS, type CountersignAlarmThresholds } from './alarm-thresholds.js';
export type { AlarmSeverity, CountersignAlarmTopics } from './alarm-topics.js';
export type { ChannelAlarmName, CountersignAlarmName } from './alarms.js';
export type { CountersignAuth, ExternalIdentityProvider } from './auth.js';
export type { CountersignNotificationChannels } from './channels.js';
export {
  COUNTERSIGN_DEFAULTS,
  Countersign,
  type CountersignChannelsProps,
  type CountersignEmailChannel,
  type CountersignLogLevel,
  type CountersignProps,
  type CountersignSlackChannel,
  type CountersignSlackRoute,
} from './countersign.js';
export type { CountersignOutputName, CountersignOutputsOptions } from './countersign-outputs.js';
export type { CountersignEventsEndpoint } from './events-endpoint.js';
export { HANDLER_NAMES, type HandlerName } from './handler-names.js';
export {
  type CountersignReservedConcurrency,
  type CountersignRetention,
  type CountersignThrottling,
  RESERVED_CONCURRENCY_FOR_PRODUCTION,
  requiredAccountConcurrency,
} from './limits.js';
export type { ModelProvider, OpenAiCompatibleEndpoint } from './model-permissions.js';
export type { CountersignObservability } from './observability.js';
